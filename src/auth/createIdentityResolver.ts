// createIdentityResolver: the IdentityResolver for the configured auth mode — "demo" (token = subject,
// development only), "tokens" (sha256 lookup in auth.tokens) or "jwt" (OAuth access tokens verified
// against auth.jwt's JWKS or public key). The config is assumed already validated by loadConfig; an
// unknown mode, "tokens" without tokens, or "jwt" without auth.jwt (or with an unusable key) rejects
// with an Error naming the option. The JWT verifier (jose, ~40 ms to load) is loaded only in jwt mode.

import type { Config } from "../config/schema.js";
import { createDemoResolver } from "./demoResolver.js";
import type { IdentityResolver } from "./identity.js";
import { createTokenResolver } from "./tokenResolver.js";

export type IdentityOptions = Pick<Config["auth"], "mode" | "tokens" | "jwt">;

export async function createIdentityResolver(auth: IdentityOptions): Promise<IdentityResolver> {
  switch (auth.mode) {
    case "demo":
      return createDemoResolver();
    case "tokens":
      return createTokenResolver(auth.tokens);
    case "jwt":
      if (auth.jwt === undefined) throw new Error("auth.jwt: mode 'jwt' needs auth.jwt (issuer, audience, and jwksUrl or publicKey)");
      return (await import("./jwtResolver.js")).createJwtResolver(auth.jwt);
    default: {
      const mode: never = auth.mode;
      throw new Error(`auth.mode: unknown mode ${JSON.stringify(mode)}`);
    }
  }
}
