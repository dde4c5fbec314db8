// Role "streamFloor": what any Node process pays for holding thousands of streaming HTTP
// responses, without taskgate — the floor taskgate's memory after cancelling is compared with.
// Like taskgate's CallConnections, every stream has an undici Client (one connection) of its own.
//   hold {url, count} → opens `count` streaming GETs to `url` (OPENING at a time), reads what
//                       arrives, and answers once every one has its response headers
//   release           → aborts every stream and destroys every client
// Run it with --expose-gc so the built-in "mem" reads after a full GC.

import { Client, request } from "undici";
import { serveRole } from "./serveRole.js";

/** Streams being opened at once (a burst of thousands would overflow the listen backlog). */
const OPENING = 64;

interface Stream {
  client: Client;
  abort: AbortController;
}

await serveRole("streamFloor", async () => {
  let streams: Stream[] = [];

  const open = async (url: string): Promise<Stream> => {
    const client = new Client(new URL(url).origin, { headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 4_000 });
    const abort = new AbortController();
    const stream = { client, abort };
    streams.push(stream);
    const response = await request(url, { dispatcher: client, signal: abort.signal, headers: { accept: "text/event-stream" } });
    if (response.statusCode !== 200) throw new Error(`${url} answered HTTP ${response.statusCode}`);
    // Read and drop what arrives, as a reader of an SSE stream would; the abort ends it with an error.
    response.body.on("data", () => undefined).on("error", () => undefined);
    return stream;
  };

  const release = async () => {
    const all = streams;
    streams = [];
    for (const stream of all) stream.abort.abort();
    await Promise.allSettled(all.map((stream) => stream.client.destroy()));
    return all.length;
  };

  return {
    info: {},
    handlers: {
      hold: async (args) => {
        const { url, count } = args as { url: string; count: number };
        let next = 0;
        const opener = async () => {
          while (next < count) {
            next++;
            await open(url);
          }
        };
        await Promise.all(Array.from({ length: Math.min(OPENING, count) }, opener));
        return streams.length;
      },
      release,
    },
    close: async () => {
      await release();
    },
  };
});
