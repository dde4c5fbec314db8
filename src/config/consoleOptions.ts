// The options of the web console (/console): whether taskgate serves it, and the OAuth client it
// signs people in as when auth.mode is jwt (authorization code + PKCE at the authorization server
// the Protected Resource Metadata names). Without a client id the console offers the bearer-token
// sign-in only.

import { z } from "zod";
import { option } from "./declaration.js";
import { scopeToken } from "./values.js";

export const ConsoleSchema = z
  .object({
    enabled: option(z.boolean().default(true), {
      help: "serve the web console at /console (its page and assets; the data comes from the task inventory API)",
    }),
    oauthClientId: option(z.string().min(1).optional(), {
      help: "OAuth client id of the console: offers 'Sign in with <issuer>' (authorization code + PKCE) when auth.mode is jwt",
      details:
        "Register a public client (no secret, PKCE S256) at the authorization server with the redirect URI " +
        "`<taskgate's public origin>/console`. Unset: the console asks for a bearer token instead.",
    }),
    oauthScopes: option(z.array(scopeToken).optional(), {
      help: "scopes the console asks the authorization server for",
      defaultText: "auth.requiredScopes",
    }),
  })
  .strict();
