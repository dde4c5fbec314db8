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

/** Calls `done` once with the body, or with why it could not be had: too large, or the request broke. */
export function readBody(req: IncomingMessage, limit: number, done: (error: Error | undefined, body?: Buffer) => void): void {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > DRAIN_MAX_BYTES) return done(new BodyTooLargeError(limit));
  let first: Buffer | undefined;
  let more: Buffer[] | undefined;
  let size = 0;
  let settled = false;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      first = undefined; // over the limit: drop what was kept, read on
      more = undefined;
    } else if (!first) first = chunk;
    else (more ??= [first]).push(chunk);
  });
  req.on("end", () => {
    if (settled) return;
    settled = true;
    if (size > limit) return done(new BodyTooLargeError(limit));
    // Most bodies come in one chunk: no copy for them.
    done(undefined, more ? Buffer.concat(more) : (first ?? Buffer.alloc(0)));
  });
  req.on("error", (error) => {
    if (settled) return;
    settled = true;
    done(error);
  });
}
