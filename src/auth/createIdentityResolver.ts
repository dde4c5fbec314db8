// createIdentityResolver: the IdentityResolver for the configured auth mode — "demo" (token = subject,
// development only) or "tokens" (sha256 lookup in auth.tokens). The config is assumed already validated
// by loadConfig; an unknown mode or a "tokens" mode without tokens throws.

import type { Config } from "../config/schema.js";
import { createDemoResolver } from "./demoResolver.js";
import type { IdentityResolver } from "./identity.js";
import { createTokenResolver } from "./tokenResolver.js";

export function createIdentityResolver(auth: Config["auth"]): IdentityResolver {
  switch (auth.mode) {
    case "demo":
      return createDemoResolver();
    case "tokens":
      return createTokenResolver(auth.tokens);
    default: {
      const mode: never = auth.mode;
      throw new Error(`auth.mode: unknown mode ${JSON.stringify(mode)}`);
    }
  }
}
