// A real fault no server can be asked for: a TCP listener whose process is stopped (SIGSTOP) with
// its accept queue full, so that the kernel drops further SYNs and a new connection to it neither
// succeeds nor fails: it hangs until the connecting side's own limit. (A closed port on loopback is
// refused at once; this is what an overloaded or frozen host looks like.) close() kills the process.

import { type ChildProcess, spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import { within } from "../waiting.js";

export interface StoppedListener {
  /** http://127.0.0.1:<port>/mcp */
  url: string;
  close(): Promise<void>;
}

const LISTENER = `require("node:net").createServer(() => {}).listen({ port: 0, host: "127.0.0.1", backlog: 1 }, function () {
  process.stdout.write(String(this.address().port) + "\\n");
});`;

export async function startStoppedListener(): Promise<StoppedListener> {
  const child: ChildProcess = spawn(process.execPath, ["-e", LISTENER], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await within(
    10_000,
    "the listener's port",
    new Promise<number>((resolve, reject) => {
      child.stdout?.once("data", (data: Buffer) => resolve(Number(String(data).trim())));
      child.once("exit", (code) => reject(new Error(`the listener exited (${code}) before listening`)));
    }),
  );
  child.kill("SIGSTOP");
  // Backlog 1 holds two completed handshakes; these fill it, so every later SYN is dropped.
  const fillers: Socket[] = [];
  for (let i = 0; i < 2; i++) {
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => undefined);
    fillers.push(socket);
    await within(5_000, "a connection filling the accept queue", new Promise((resolve) => socket.once("connect", resolve)));
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      for (const socket of fillers) socket.destroy();
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        await within(5_000, "the stopped listener's exit", exited);
      }
    },
  };
}
