// Test kit: a real OpenID provider (oidc-provider) on 127.0.0.1 that issues OAuth 2.0 client-credentials
// access tokens as JWTs (RFC 9068, `typ: at+jwt`) for a requested resource (RFC 8707 resource
// indicators): `aud` is the resource, `scope` the granted scopes, `sub` the client id. Its JWKS is at
// `${issuer}/jwks`. rotateKey() replaces the provider with one signing under a new key (the old key
// is no longer published), as an authorization server rotating its keys would. Not a test file.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";

export const CLIENT_ID = "svc-reporting";
const CLIENT_SECRET = "test-client-secret-of-32-characters!";
export const SCOPES = ["tools:read", "tools:call"];

export interface OidcIssuer {
  issuer: string;
  jwksUrl: string;
  /** kid the provider signs with now. */
  readonly kid: string;
  /** A client-credentials access token for `resource` with `scope`. */
  token(resource: string, scope?: string): Promise<string>;
  rotateKey(): Promise<void>;
  close(): Promise<void>;
}

async function makeProvider(issuer: string, kid: string) {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid, alg: "ES256", use: "sig" };
  return new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        scope: SCOPES.join(" "),
        id_token_signed_response_alg: "ES256",
      },
    ],
    jwks: { keys: [jwk] },
    scopes: SCOPES,
    ttl: { ClientCredentials: 300 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined as unknown as string,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: SCOPES.join(" "),
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "ES256" } },
        }),
      },
    },
  });
}

export async function startOidcIssuer(): Promise<OidcIssuer> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let generation = 0;
  let kid = "";

  const install = async () => {
    kid = `key-${++generation}`;
    const provider = await makeProvider(issuer, kid);
    handler = provider.callback();
  };
  await install();

  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    get kid() {
      return kid;
    },
    async token(resource, scope = "tools:read") {
      const response = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString("base64")}`,
        },
        body: new URLSearchParams({ grant_type: "client_credentials", scope, resource }),
        signal: AbortSignal.timeout(5000),
      });
      const body = (await response.json()) as { access_token?: string };
      if (response.status !== 200 || typeof body.access_token !== "string") {
        throw new Error(`token endpoint answered ${response.status}: ${JSON.stringify(body)}`);
      }
      return body.access_token;
    },
    rotateKey: install,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
