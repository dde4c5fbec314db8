// Test kit: a real JWKS endpoint on 127.0.0.1 (node:http) plus the private keys behind it, so tests
// sign real JWT access tokens with jose and the resolver fetches real keys over HTTP. Keys can be
// added and the published set changed (rotation); `fetches` counts JWKS requests. The endpoint can
// also be switched into real failure behaviours — HTTP 500, a redirect, a body that is not JSON, JSON
// that is not a JWK Set, never answering — which are the faults the resolver must report as
// "temporarily unavailable". Not a test file itself.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import { freePort } from "../ports.js";

export type JwksBehaviour = "ok" | "http-500" | "redirect" | "not-json" | "not-a-jwks" | "hang";

interface KeyEntry {
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface TokenOptions {
  kid?: string;
  alg?: string;
  /** Sign with this key instead of the kid's (e.g. a forger's key under a published kid). */
  signWith?: CryptoKey;
  /** Claims set on top of the defaults (iss, aud, sub, iat, exp in 5 minutes); undefined removes one. */
  claims?: Record<string, unknown>;
}

export interface JwksServer {
  origin: string;
  jwksUrl: string;
  issuer: string;
  audience: string;
  readonly fetches: number;
  behaviour: JwksBehaviour;
  /** Generates a key pair under `kid`; published only when listed in publish(). */
  addKey(kid: string, alg?: string): Promise<void>;
  /** Sets which kids the JWKS lists. */
  publish(...kids: string[]): void;
  privateKeyOf(kid: string): CryptoKey;
  publicJwkOf(kid: string): JWK;
  sign(options?: TokenOptions): Promise<string>;
  close(): Promise<void>;
}

export async function startJwksServer(options: { kids?: string[] } = {}): Promise<JwksServer> {
  const keys = new Map<string, KeyEntry>();
  let published: string[] = [];
  let fetches = 0;
  let behaviour: JwksBehaviour = "ok";

  const server: Server = createServer((req, res) => {
    if (req.url !== "/jwks") {
      res.writeHead(404).end();
      return;
    }
    fetches++;
    switch (behaviour) {
      case "hang":
        return; // never answers; closed by close()
      case "http-500":
        res.writeHead(500, { "content-type": "text/plain" }).end("internal error");
        return;
      case "redirect":
        res.writeHead(302, { location: "/elsewhere" }).end();
        return;
      case "not-json":
        res.writeHead(200, { "content-type": "text/html" }).end("<html>maintenance</html>");
        return;
      case "not-a-jwks":
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: "none" }));
        return;
      case "ok": {
        const body = { keys: published.map((kid) => keys.get(kid)?.publicJwk).filter(Boolean) };
        res.writeHead(200, { "content-type": "application/jwk-set+json" }).end(JSON.stringify(body));
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const kit: JwksServer = {
    origin,
    jwksUrl: `${origin}/jwks`,
    issuer: `${origin}/issuer`,
    audience: "http://127.0.0.1:3000/mcp",
    get fetches() {
      return fetches;
    },
    get behaviour() {
      return behaviour;
    },
    set behaviour(next: JwksBehaviour) {
      behaviour = next;
    },
    async addKey(kid, alg = "ES256") {
      const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
      keys.set(kid, { alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } });
    },
    publish(...kids) {
      published = kids;
    },
    privateKeyOf(kid) {
      const entry = keys.get(kid);
      if (!entry) throw new Error(`no key ${kid}`);
      return entry.privateKey;
    },
    publicJwkOf(kid) {
      const entry = keys.get(kid);
      if (!entry) throw new Error(`no key ${kid}`);
      return entry.publicJwk;
    },
    async sign(options = {}) {
      const kid = options.kid ?? published[0] ?? "k1";
      const entry = keys.get(kid);
      const alg = options.alg ?? entry?.alg ?? "ES256";
      const key = options.signWith ?? entry?.privateKey;
      if (!key) throw new Error(`no key to sign with for kid ${kid}`);
      const now = Math.floor(Date.now() / 1000);
      const claims: Record<string, unknown> = {
        iss: kit.issuer,
        aud: kit.audience,
        sub: "alice",
        iat: now,
        exp: now + 300,
        ...options.claims,
      };
      for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
      return new SignJWT(claims as JWTPayload).setProtectedHeader({ alg, kid, typ: "at+jwt" }).sign(key);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  for (const kid of options.kids ?? []) await kit.addKey(kid);
  if (options.kids) kit.publish(...options.kids);
  return kit;
}

/** A loopback URL nobody listens on: a port taken from the OS, then released. */
export async function closedPortUrl(path = "/jwks"): Promise<string> {
  return `http://127.0.0.1:${await freePort()}${path}`;
}
