// The paths taskgate serves itself beside its MCP endpoints: health, metrics, the console, the
// inventory and approvals, and the RFC 9728 metadata. An MCP endpoint (`path`, or a fleet's
// `federation.path`) at or under one of them would take its requests (a /readyz probe answered by
// the MCP endpoint), so such a path is refused at start. test/unit/ownPaths.test.ts keeps this list
// equal to the routes src/ mounts.

import type { z } from "zod";

export const OWN_PATHS = [
  "/livez",
  "/readyz",
  "/healthz",
  "/metrics",
  "/console",
  "/tasks",
  "/me",
  "/admin",
  "/notify",
  "/approvals",
  "/.well-known",
] as const;

/** Why `path` cannot be an MCP endpoint's path, or undefined when it can. */
export function ownPathProblem(path: string): string | undefined {
  const own = OWN_PATHS.find((taken) => path === taken || path.startsWith(`${taken}/`));
  return own === undefined ? undefined : `'${path}' is taskgate's own ${own}: choose a path outside ${OWN_PATHS.join(", ")}`;
}

/** `path` and `federation.path` must not be one of taskgate's own paths. */
export function checkOwnPaths(
  config: { path: string; federation?: { path?: string | undefined } | undefined },
  ctx: z.RefinementCtx,
): void {
  const problem = ownPathProblem(config.path);
  if (problem) ctx.addIssue({ code: "custom", path: ["path"], message: problem });
  const federated = config.federation?.path;
  const federatedProblem = federated === undefined ? undefined : ownPathProblem(federated);
  if (federatedProblem) ctx.addIssue({ code: "custom", path: ["federation", "path"], message: federatedProblem });
}
