// Real receivers for taskgate's notifications, on loopback: a webhook endpoint (answers what the
// test scripts, e.g. 500 then 200) that records every delivery with its headers and raw body, and a
// Web Push service endpoint that records each push request. The push subscription's keys (P-256
// ECDH + auth secret) are made here, as a browser would, so the test can decrypt what arrives.

import { createECDH, type ECDH, randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";

/** http_ece (what web-push encrypts with), to decrypt as the browser would. */
const ece = createRequire(import.meta.url)("http_ece") as {
  decrypt(buffer: Buffer, params: { version: "aes128gcm"; privateKey: unknown; authSecret: string }): Buffer;
};

export interface Received {
  headers: IncomingHttpHeaders;
  body: Buffer;
  status: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Resolves once `count` requests have arrived. */
  until(count: number, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** `answer(n)`: the HTTP status of the n-th request (1-based); 0 holds it unanswered (a receiver that hangs). */
export async function startReceiver(answer: (n: number) => number, path = "/hook"): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const status = answer(received.length + 1);
      received.push({ headers: req.headers, body: Buffer.concat(chunks), status });
      if (status !== 0) res.writeHead(status).end();
      for (const wake of waiters.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    async until(count, ms = 15_000) {
      const deadline = Date.now() + ms;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`only ${received.length} of ${count} requests arrived within ${ms} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received.slice(0, count);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A browser's push subscription keys: the ECDH key pair (to decrypt) and the auth secret. */
export function subscriptionKeys(): { ecdh: ECDH; p256dh: string; auth: string } {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  return { ecdh, p256dh: ecdh.getPublicKey().toString("base64url"), auth: randomBytes(16).toString("base64url") };
}

/** A push's aes128gcm body decrypted with the subscription's keys, as JSON (throws when they are not its keys). */
export function decryptPush(push: Received, keys: { ecdh: ECDH; auth: string }): unknown {
  const plain = ece.decrypt(push.body, { version: "aes128gcm", privateKey: keys.ecdh, authSecret: keys.auth });
  return JSON.parse(plain.toString("utf8"));
}
