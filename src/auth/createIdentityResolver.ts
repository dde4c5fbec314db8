// createIdentityResolver: the IdentityResolver for the configured auth mode — "demo" (token = subject,
// development only), "tokens" (sha256 lookup in auth.tokens) or "jwt" (OAuth access tokens verified
// against auth.jwt's JWKS or public key). The config is assumed already validated by loadConfig; an
// unknown mode, "tokens" without tokens, or "jwt" without auth.jwt (or with an unusable key) throws
// an Error naming the option.

import type { Config } from "../config/schema.js";
import { createDemoResolver } from "./demoResolver.js";
import type { IdentityResolver } from "./identity.js";
import { createJwtResolver } from "./jwtResolver.js";
import { createTokenResolver } from "./tokenResolver.js";

export type IdentityOptions = Pick<Config["auth"], "mode" | "tokens" | "jwt">;

export function createIdentityResolver(auth: IdentityOptions): IdentityResolver {
  switch (auth.mode) {
    case "demo":
      return createDemoResolver();
    case "tokens":
      return createTokenResolver(auth.tokens);
    case "jwt":
      if (auth.jwt === undefined) throw new Error("auth.jwt: mode 'jwt' needs auth.jwt (issuer, audience, and jwksUrl or publicKey)");
      return createJwtResolver(auth.jwt);
    default: {
      const mode: never = auth.mode;
      throw new Error(`auth.mode: unknown mode ${JSON.stringify(mode)}`);
    }
  }
}
