// The options of one upstream (the legacy MCP server taskgate stands in front of), declared once.
// `UpstreamSchema` is a self-contained section with its own checks, so a block that names
// another upstream (a backend of a fleet) can take exactly these options by reusing it.

import { z } from "zod";
import { option, section } from "./declaration.js";
import { HEADER_NAME, HEADER_NAME_MESSAGE, headerName, headerValue, timerMs } from "./values.js";

/** Headers the upstream transport and the pass-through manage themselves. */
const RESERVED_UPSTREAM_HEADERS = new Set([
  "host",
  "content-length",
  "content-type",
  "accept",
  "connection",
  "transfer-encoding",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
]);

export const UpstreamFields = z
  .object({
    url: option(z.url({ protocol: /^https?$/, error: "must be an http(s) URL of the MCP endpoint" }).optional(), {
      help: "MCP endpoint of the server (Streamable HTTP), e.g. http://127.0.0.1:8080/mcp",
      flag: "--upstream <url>",
      requiredUnless: "upstream.command",
    }),
    command: option(z.array(z.string().min(1, "an argument must not be empty")).min(1, "must name the program to start").optional(), {
      help: 'start a stdio MCP server per upstream session, e.g. "npx -y @modelcontextprotocol/server-filesystem /data"',
      details:
        'An argv list in the file (`[npx, -y, "@modelcontextprotocol/server-filesystem", /data]`), a command line in the ' +
        "variable and the flag (split like a shell does: quotes and backslashes, no variables, no shell).",
      read: "command",
      flag: "--upstream-command <command line>",
      requiredUnless: "upstream.url",
    }),
    protocol: option(z.enum(["auto", "legacy", "modern"]).default("auto"), {
      help: "which protocol the server speaks: auto (probe with server/discover, fall back to initialize), legacy or modern",
      details:
        "`legacy`: the session protocol (2025-11-25 and earlier; taskgate translates). `modern`: 2026-07-28 (taskgate relays, " +
        "adding what the server lacks). `auto` prefers 2026-07-28 when the server offers both, and probes again when the " +
        "server's answers say it changed. A server started with upstream.command is legacy.",
    }),
    env: option(z.record(z.string(), z.string()).default({}), {
      help: "with upstream.command: extra environment of the started server",
      details: "It gets only `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER` of taskgate's own, never taskgate's secrets.",
      env: false,
    }),
    cwd: option(z.string().min(1).optional(), {
      help: "with upstream.command: working directory of the started server",
      defaultText: "taskgate's",
    }),
    sessionsPer: option(z.enum(["identity", "capabilities"]).default("identity"), {
      help: "how an identity's requests share upstream sessions (with upstream.command: processes)",
      details:
        "`identity`: one each, whatever a request declares, so the server sees one client per user; `capabilities`: one per " +
        "identity and capability profile plus one per concurrent asking call, so the server never hears of a capability the " +
        "caller lacks, but a user's state is split ([decision 0017](decisions/0017-one-session-per-identity.md)).",
    }),
    maxSessions: option(z.number().int().positive().default(1000), {
      help: "upstream sessions at most (upstream.sessionsPer says how many an identity uses)",
      details: "Idle ones are closed to make room, else HTTP 503.",
    }),
    maxProcesses: option(z.number().int().positive().default(100), {
      help: "with upstream.command: server processes at most (upstream sessions plus legacy-door sessions)",
      details: "Idle sessions are closed to make room, else HTTP 503 naming this option.",
    }),
    stopGraceMs: option(timerMs.positive().default(2_000), {
      help: "with upstream.command: stopping a server closes its stdin, waits this long, sends SIGTERM, waits again, then SIGKILL",
      details: "SIGTERM and SIGKILL go to the server's process group.",
    }),
    sessionIdleMs: option(timerMs.positive().default(300_000), {
      help: "a session with nothing in flight and no holder is closed (DELETE; with command: its process stopped) after this long",
    }),
    connectTimeoutMs: option(timerMs.positive().default(5_000), { help: "TCP connect to the upstream" }),
    connections: option(z.number().int().positive().default(64), {
      help: "with upstream.url: connections open at once for quick requests (pings, cancels, lists, answers, DELETEs); more wait for one",
      details:
        "A waiting request keeps its own limit (upstream.requestTimeoutMs for a notification or a ping). So a burst (thousands of " +
        "notifications/cancelled at a mass cancel) reaches a busy upstream over a few kept-alive connections instead of " +
        "overflowing its accept queue with new ones. To a 2026-07-28 backend, its lists, discover and tasks/* requests " +
        "share them. Calls that may stream have a connection each, not counted here.",
    }),
    initializeTimeoutMs: option(timerMs.positive().default(15_000), {
      help: "opening a session: initialize, standalone stream, notifications/initialized",
    }),
    requestTimeoutMs: option(timerMs.positive().default(30_000), {
      help: "short upstream requests: lists, completion/complete, resource (un)subscribe, readiness pings",
    }),
    pingIntervalMs: option(timerMs.positive().default(15_000), { help: "while calls are in flight on a session, it is pinged this often" }),
    pingTimeoutMs: option(timerMs.positive().default(10_000), {
      help: "a ping unanswered this long: the upstream stopped answering; the session's calls fail (upstream_unresponsive)",
      details:
        "Unless the upstream sent anything else meanwhile (progress, results): then the ping is late, logged as " +
        "`upstream.ping.late`, and the session kept. Nor when taskgate itself stalled for half this limit while the ping " +
        "was out (`upstream.ping.stalled`): the next ping judges. A ping is never cancelled upstream: it does no work to stop.",
    }),
    cancelAttempts: option(z.number().int().positive().default(4), {
      help: "a notifications/cancelled the upstream does not accept is sent up to this many times in all",
      details:
        "Each attempt is bounded by upstream.requestTimeoutMs. Still undelivered, taskgate logs `upstream.cancel.undelivered`, " +
        'counts it in taskgate_upstream_cancels_total{outcome="undelivered"} and, for a call (tools/call, prompts/get, ' +
        "resources/read), ends the session the call ran on (DELETE attempted, its connections closed; that session's other " +
        "calls fail with upstream_unresponsive). A short request's (a list's) session is kept: nothing of it runs on.",
    }),
    cancelRetryMs: option(timerMs.positive().default(500), {
      help: "the pause before a notifications/cancelled is sent again; it doubles with each further attempt",
    }),
    maxCallsPerSession: option(z.number().int().positive().default(500), {
      help: "calls (and other requests) one upstream session carries at once; beyond, the identity gets another session",
      details:
        "So one session that ends (its upstream stopped answering) fails at most this many calls. The extra sessions count " +
        "against upstream.maxSessions and are closed 5 s after they fell idle; the upstream sees the identity as several clients.",
    }),
    headers: option(z.record(z.string(), headerValue).default({}), {
      help: "with upstream.url: static headers on every request to the upstream (both doors)",
      details:
        "`${NAME}` in a value is the environment variable NAME (unset or empty: a configuration error), so secrets stay out " +
        "of the file. Not together with a static `Authorization` when forwarding the caller's.",
      env: false,
    }),
    forwardAuthorization: option(z.boolean().default(false), {
      help: "with upstream.url: send the caller's own Authorization header to the upstream unchanged (same trust domain only)",
    }),
    subjectHeader: option(headerName.optional(), {
      help: "with upstream.url: header that carries the caller's subject to the upstream (e.g. X-User); a caller's own copy is removed",
    }),
  })
  .strict();

export type UpstreamFields = z.infer<typeof UpstreamFields>;

function checkHeaders(upstream: UpstreamFields, ctx: z.RefinementCtx): void {
  const names = Object.keys(upstream.headers).map((name) => name.toLowerCase());
  for (const name of Object.keys(upstream.headers)) {
    if (!HEADER_NAME.test(name)) ctx.addIssue({ code: "custom", path: ["headers", name], message: HEADER_NAME_MESSAGE });
    else if (RESERVED_UPSTREAM_HEADERS.has(name.toLowerCase())) {
      ctx.addIssue({
        code: "custom",
        path: ["headers", name],
        message: `'${name.toLowerCase()}' is set by taskgate itself and cannot be configured`,
      });
    }
  }
  if (upstream.forwardAuthorization && names.includes("authorization")) {
    ctx.addIssue({
      code: "custom",
      path: ["forwardAuthorization"],
      message: "forwards the caller's Authorization, but upstream.headers sets one too: choose one (never both by accident)",
    });
  }
  const subject = upstream.subjectHeader?.toLowerCase();
  if (subject !== undefined && (subject === "authorization" || RESERVED_UPSTREAM_HEADERS.has(subject) || names.includes(subject))) {
    const clash = names.includes(subject)
      ? "also a static header in upstream.headers"
      : "a header taskgate or the caller's credentials use";
    ctx.addIssue({ code: "custom", path: ["subjectHeader"], message: `'${upstream.subjectHeader}' is ${clash}: choose another name` });
  }
}

/** Exactly one of url and command, and the options that belong to the other one unset. */
function checkTransport(upstream: UpstreamFields, ctx: z.RefinementCtx): void {
  if (upstream.url === undefined && upstream.command === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["url"],
      message: "is required but not set — set upstream.url (an http(s) endpoint) or upstream.command (a server started over stdio)",
    });
  }
  if (upstream.url !== undefined && upstream.command !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["command"],
      message:
        "upstream.url and upstream.command are mutually exclusive: taskgate talks to one upstream, either over HTTP (url) " +
        "or by starting it (command); remove one",
      // The message names where command came from; the reader also needs to know where url did.
      params: { alsoFrom: ["url"] },
    });
  }
  if (upstream.command === undefined && (Object.keys(upstream.env).length > 0 || upstream.cwd !== undefined)) {
    ctx.addIssue({
      code: "custom",
      path: [upstream.cwd !== undefined ? "cwd" : "env"],
      message: "is only used with upstream.command (a server taskgate starts)",
    });
  }
  const credentialOptions = [
    Object.keys(upstream.headers).length > 0 ? "headers" : undefined,
    upstream.forwardAuthorization ? "forwardAuthorization" : undefined,
    upstream.subjectHeader !== undefined ? "subjectHeader" : undefined,
  ].filter((name) => name !== undefined);
  if (upstream.command !== undefined && credentialOptions.length > 0) {
    // A server taskgate starts over stdio sees no HTTP headers: these would silently do nothing.
    ctx.addIssue({
      code: "custom",
      path: [credentialOptions[0] as string],
      message: "is only used with upstream.url (HTTP headers towards the upstream); a stdio server gets its secrets through upstream.env",
    });
  }
}

/** The checks of one upstream's options (a backend of a fleet runs them on its own block too). */
export function checkUpstream(upstream: UpstreamFields, ctx: z.RefinementCtx): void {
  checkHeaders(upstream, ctx);
  checkTransport(upstream, ctx);
}

/** One upstream's options and checks. Mount it with section(UpstreamSchema.clone(), …) to give a mount its own metadata. */
export const UpstreamSchema = section(
  UpstreamFields.superRefine((upstream, ctx) => checkUpstream(upstream, ctx)),
  { help: "The legacy MCP server taskgate stands in front of: reached over HTTP (url) or started over stdio (command)." },
);
