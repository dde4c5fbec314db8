// Test kit: a real OpenID provider (oidc-provider) on 127.0.0.1 for the console's OAuth sign-in: a
// public client (no secret, PKCE S256 required) using the authorization code grant, its login and
// consent pages oidc-provider's own development interactions (any login name and password is
// accepted; the name becomes `sub`), and access tokens issued as JWTs (RFC 9068) for the resource
// the console names (RFC 8707), with the scopes asked for. The server listens first, so taskgate
// can be configured with the issuer; the client (whose redirect URI names taskgate's port) is
// installed once taskgate listens. Not a test file.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";

export const CONSOLE_CLIENT_ID = "taskgate-console";
export const CONSOLE_SCOPES = ["tasks:read", "tasks:answer"];

export interface CodeIssuer {
  issuer: string;
  jwksUrl: string;
  /** Installs the provider with the console client redirecting to `redirectUri`, issuing tokens for `resource`. */
  install(redirectUri: string, resource: string): Promise<void>;
  close(): Promise<void>;
}

export async function startCodeIssuer(): Promise<CodeIssuer> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    async install(redirectUri, resource) {
      const { privateKey } = await generateKeyPair("ES256", { extractable: true });
      const jwk = { ...(await exportJWK(privateKey)), kid: "console-key", alg: "ES256", use: "sig" };
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: CONSOLE_CLIENT_ID,
            token_endpoint_auth_method: "none",
            grant_types: ["authorization_code"],
            response_types: ["code"],
            redirect_uris: [redirectUri],
            id_token_signed_response_alg: "ES256",
          },
        ],
        jwks: { keys: [jwk] },
        scopes: CONSOLE_SCOPES,
        pkce: { required: () => true },
        features: {
          devInteractions: { enabled: true },
          resourceIndicators: {
            enabled: true,
            defaultResource: () => resource,
            useGrantedResource: () => true,
            getResourceServerInfo: (_ctx, indicator) => {
              if (indicator !== resource) throw new Error(`unknown resource ${indicator}`);
              return {
                scope: CONSOLE_SCOPES.join(" "),
                audience: resource,
                accessTokenTTL: 300,
                accessTokenFormat: "jwt",
                jwt: { sign: { alg: "ES256" } },
              };
            },
          },
        },
      });
      handler = provider.callback();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
