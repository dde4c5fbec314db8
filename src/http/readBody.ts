// Reads a request body into memory up to a limit. Past the limit it stops keeping the bytes but
// keeps reading (up to DRAIN_FACTOR × the limit) before saying so, so the client finishes sending
// and can read the 413 instead of hitting a closed connection.

import type { IncomingMessage } from "node:http";

export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`Request body exceeds the limit of ${limit} bytes (option bodyLimitBytes)`);
  }
}

/** An over-limit body is read (and dropped) up to this many times the limit; beyond, the connection is cut. */
const DRAIN_FACTOR = 16;

export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  const drainLimit = limit * DRAIN_FACTOR;
  if (Number.isFinite(declared) && declared > drainLimit) return Promise.reject(new BodyTooLargeError(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else if (size > drainLimit) {
        req.removeAllListeners("data");
        req.pause();
        reject(new BodyTooLargeError(limit));
      }
    });
    req.on("end", () => (size > limit ? reject(new BodyTooLargeError(limit)) : resolve(Buffer.concat(chunks))));
    req.on("error", reject);
  });
}
