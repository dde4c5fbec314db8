// A slowloris client: N TCP connections to taskgate that each send the start of a request and then
// nothing, holding server resources for as long as the server lets them. Stages: "request-line"
// (half a request line), "headers" (request line and some headers, never the blank line), "body"
// (complete headers announcing a body, a few bytes of it, then nothing). Counts how many the
// server has closed; destroy() ends what is left.

import { connect, type Socket } from "node:net";

export type SlowlorisStage = "request-line" | "headers" | "body";

export interface Slowloris {
  /** Connections that are established (all of them, once open() resolved). */
  count: number;
  /** How many the server has closed (FIN or RST) so far. */
  closedByServer(): number;
  /** What the server sent before closing (e.g. a 408), from the first connection that got anything. */
  firstAnswer(): string;
  destroy(): void;
}

function partialRequest(stage: SlowlorisStage, host: string, path: string): string {
  if (stage === "request-line") return `POST ${path.slice(0, 2)}`;
  const head = `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n`;
  if (stage === "headers") return `${head}Accept: application/json, text/event-stream\r\nX-Slow: `;
  return `${head}Content-Length: 1000\r\n\r\n{"jsonrpc":`;
}

export async function openSlowloris(url: string, connections: number, stage: SlowlorisStage): Promise<Slowloris> {
  const target = new URL(url);
  const port = Number(target.port);
  const sockets: Socket[] = [];
  let closed = 0;
  let answer = "";
  let destroyed = false;
  const opening = Array.from(
    { length: connections },
    () =>
      new Promise<void>((resolve, reject) => {
        const socket = connect({ host: target.hostname, port }, () => {
          socket.write(partialRequest(stage, target.host, target.pathname));
          resolve();
        });
        sockets.push(socket);
        socket.setEncoding("latin1");
        socket.on("data", (chunk: string) => {
          if (answer === "") answer = chunk.slice(0, 200);
        });
        socket.on("error", (error) => {
          if (!socket.connecting) return; // a reset after connecting counts as a close below
          reject(new Error(`slowloris connection ${sockets.length} failed to connect: ${error.message}`));
        });
        socket.on("close", () => {
          if (!destroyed) closed += 1;
        });
      }),
  );
  await Promise.all(opening);
  return {
    count: sockets.length,
    closedByServer: () => closed,
    firstAnswer: () => answer,
    destroy: () => {
      destroyed = true;
      for (const socket of sockets) socket.destroy();
    },
  };
}
