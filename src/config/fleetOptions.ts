// The options of a fleet: several named backends behind one taskgate, each at `<path>/<name>`, and
// an optional federated endpoint over them. A backend takes every option of the single upstream
// (upstreamOptions.ts, with the same checks), plus its own task policies and whether readiness
// needs it. `upstream:` stays the one-backend shorthand; exactly one of the two is set
// (checkFleet, run on the whole configuration). Backend names and the separator follow
// protocol/federatedNames.ts, so every name the fleet shows is a path segment and a valid tool name.

import { z } from "zod";
import { backendNameProblem, separatorProblem } from "../protocol/federatedNames.js";
import { AccessSchema, ApprovalRuleSchema } from "./accessOptions.js";
import { option, section } from "./declaration.js";
import { checkUpstream, UpstreamFields } from "./upstreamOptions.js";
import { TaskPolicy, timerMs } from "./values.js";

/** A backend's own task policies; unset fields take the top-level `tasks` values. */
const BackendTasks = z
  .object({
    policy: TaskPolicy.optional(),
    autoAfterMs: timerMs.min(0).optional(),
    tools: z.record(z.string(), TaskPolicy).default({}),
    inputKeys: z.record(z.string(), z.string().regex(/^[A-Za-z0-9_.-]+$/)).default({}),
  })
  .strict();

export const BackendSchema = UpstreamFields.extend({
  /** Task policies of this backend's tools (over the top-level tasks.*). */
  tasks: BackendTasks.prefault({}),
  /** Whether /readyz needs this backend (false: it is reported, but does not make the instance unready). */
  required: z.boolean().default(true),
  /** Who may see and call what on this backend (the top-level access block's shape). */
  access: AccessSchema,
  /** Calls of this backend that need approval (the top-level approvals list's shape). */
  approvals: z.array(ApprovalRuleSchema).default([]),
})
  .strict()
  .superRefine((backend, ctx) => checkUpstream(backend, ctx));

export type BackendOptions = z.infer<typeof BackendSchema>;

export const BackendsOption = option(z.record(z.string(), BackendSchema).optional(), {
  help: "named backends at <path>/<name>: every upstream.* option, tasks.{policy,autoAfterMs,tools,inputKeys}, required, access, approvals",
  details:
    "Instead of `upstream` (which stays the one-backend shorthand at `path`). A name is a path segment: " +
    "lower-case letters, digits and `-`, at most 32 characters. See docs/fleet.md.",
  env: false,
  defaultText: "none (upstream)",
});

export const FederationSchema = section(
  z
    .object({
      path: option(z.string().startsWith("/").optional(), {
        env: false,
        help: "path of the federated endpoint: one catalog over the backends, tools and prompts named <backend><separator><name>",
        defaultText: "path",
      }),
      separator: option(z.string().default("__"), {
        env: false,
        help: 'joins a backend\'s name and its tool or prompt names ("__": files__read_file)',
        details: "1 to 8 characters of A-Z a-z 0-9 _ -, with a `_` or an upper-case letter (which no backend name holds).",
      }),
      backends: option(z.array(z.string()).min(1).optional(), {
        help: "the backends the federated endpoint shows, in this order",
        defaultText: "all, in configuration order",
        env: false,
      }),
      listTimeoutMs: option(timerMs.positive().default(5_000), {
        env: false,
        help: "a backend that has not answered a list within this long is left out of that federated answer (and said so)",
      }),
    })
    .strict()
    .optional(),
  { help: "The federated endpoint over the backends (only with backends)." },
);

const ReloadFields = z
  .object({
    watchFile: option(z.boolean().default(true), {
      env: false,
      help: "with a config file: a changed file is reloaded (SIGHUP always reloads); a single upstream reloads only access and approvals",
    }),
    drainMs: option(timerMs.min(0).default(30_000), {
      env: false,
      help: "a removed or changed backend's running tasks get this long to end, then fail with reason backend_removed",
    }),
  })
  .strict();

export const ReloadSchema = section(ReloadFields.optional(), {
  help: "Applying a changed configuration file without a restart: a fleet's backends, or a single upstream's access and approvals.",
});

/** The reload settings with their defaults (the block is optional). */
export const reloadSettings = (reload: z.input<typeof ReloadFields> | undefined) => ReloadFields.parse(reload ?? {});

interface FleetFields {
  upstream?: unknown;
  access?: { default: string; rules: unknown[] };
  approvals?: unknown[];
  path: string;
  backends?: Record<string, unknown> | undefined;
  federation?: { path?: string | undefined; separator: string; backends?: string[] | undefined } | undefined;
}

/** The checks across blocks: upstream xor backends, names, the federation's members and path. */
export function checkFleet(config: FleetFields, ctx: z.RefinementCtx): void {
  const { backends, federation } = config;
  if (backends === undefined) {
    if (config.upstream === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["upstream", "url"],
        message: "is required but not set — set upstream.url (an http(s) endpoint) or upstream.command (a server started over stdio)",
      });
    }
    if (federation !== undefined)
      ctx.addIssue({ code: "custom", path: ["federation"], message: "needs backends (a map of named backends)" });
    return;
  }
  if (config.access && (config.access.default !== "allow" || config.access.rules.length > 0)) {
    ctx.addIssue({ code: "custom", path: ["access"], message: "with backends, set access inside each backend (backends.<name>.access)" });
  }
  if (config.approvals && config.approvals.length > 0) {
    ctx.addIssue({
      code: "custom",
      path: ["approvals"],
      message: "with backends, set approvals inside each backend (backends.<name>.approvals)",
    });
  }
  if (config.upstream !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["backends"],
      message: "upstream and backends are mutually exclusive: upstream is the one-backend shorthand; move it into backends under a name",
    });
  }
  const names = Object.keys(backends);
  if (names.length === 0) ctx.addIssue({ code: "custom", path: ["backends"], message: "must name at least one backend" });
  for (const name of names) {
    const problem = backendNameProblem(name);
    if (problem) ctx.addIssue({ code: "custom", path: ["backends", name], message: problem });
  }
  if (federation === undefined) return;
  const separator = separatorProblem(federation.separator);
  if (separator) ctx.addIssue({ code: "custom", path: ["federation", "separator"], message: separator });
  federation.backends?.forEach((name, index) => {
    if (!Object.hasOwn(backends, name)) {
      ctx.addIssue({
        code: "custom",
        path: ["federation", "backends", index],
        message: `'${name}' is not a backend (backends: ${names.join(", ")})`,
      });
    }
  });
  const fedPath = federation.path ?? config.path;
  const taken = names.find((name) => `${config.path}/${name}` === fedPath);
  if (taken !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["federation", "path"],
      message: `'${fedPath}' is backend '${taken}''s own path: choose another`,
    });
  }
}
