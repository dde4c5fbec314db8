// Reads a request body into memory up to a limit. Past the limit it stops keeping the bytes but
// reads on to the end before saying so, so the client finishes sending and then reads the 413
// instead of hitting a closed connection (EPIPE). A client that never finishes is cut off by the
// server's request timeout (http.requestTimeoutMs); a declared length past DRAIN_MAX_BYTES is
// refused without reading.

import type { IncomingMessage } from "node:http";

export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`Request body exceeds the limit of ${limit} bytes (option bodyLimitBytes)`);
  }
}

/** A declared body this large is refused at once (the connection is then closed). */
const DRAIN_MAX_BYTES = 1024 * 1024 * 1024;

export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > DRAIN_MAX_BYTES) return Promise.reject(new BodyTooLargeError(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else chunks.length = 0; // over the limit: drop what was kept, read on
    });
    req.on("end", () => (size > limit ? reject(new BodyTooLargeError(limit)) : resolve(Buffer.concat(chunks))));
    req.on("error", reject);
  });
}
