// The options of the task inventory (taskgate's own HTTP API beside the MCP endpoint: a caller's
// tasks, the operators' view and actions) and of the notifications sent to a task's owner when the
// task needs input, completes or fails (signed webhooks, Web Push). Declared once here; the
// schema mounts them as `inventory` and `notify`.

import { z } from "zod";
import { option, section } from "./declaration.js";
import { scopeToken, timerMs } from "./values.js";

const OperatorsSchema = z
  .object({
    subjects: option(z.array(z.string().min(1)).default([]), {
      help: "subjects that are operators (exact match)",
      env: false,
    }),
    scopes: option(z.array(scopeToken).default([]), {
      help: "a token carrying any of these scopes makes its holder an operator",
      env: false,
    }),
    claims: option(z.record(z.string(), z.array(z.union([z.string(), z.number(), z.boolean()]))).default({}), {
      help: 'JWT claims that make an operator: {claim: [values]}, e.g. {role: ["admin"]}; any one value of any claim matches',
      details: "A claim that is an array matches when it holds one of the values. Only tokens verified in auth.mode jwt carry claims.",
      env: false,
    }),
  })
  .strict();

export const InventorySchema = z
  .object({
    operators: section(OperatorsSchema.prefault({}), { help: "Who may see and act on every owner's tasks (/admin/...)." }),
    publicUrl: option(z.url({ protocol: /^https?$/ }).optional(), {
      help: "taskgate's public base URL, for the console links in notifications (https://gw.example.com)",
      defaultText: "the origin of the request that started the task",
    }),
  })
  .strict();

const WebhookSchema = z
  .object({
    url: z.url({ protocol: /^https?$/ }),
    secret: z.string().min(16, "must be at least 16 characters (use 32 random bytes, hex)"),
    events: z
      .array(z.enum(["input_required", "completed", "failed", "approval_requested"]))
      .min(1)
      .default(["input_required", "completed", "failed"]),
  })
  .strict();

const WebPushSchema = z
  .object({
    vapidPublicKey: z.string().min(20),
    vapidPrivateKey: z.string().min(20),
    subject: z.string().regex(/^(mailto:|https:)/, "must be a mailto: or https: URL (the push service's contact)"),
  })
  .strict();

export const NotifySchema = z
  .object({
    webhooks: option(z.array(WebhookSchema).default([]), {
      help: "signed webhooks told of tasks needing input, completing or failing, and of approval requests: [{url, secret, events}]",
      details:
        'Each delivery is a JSON POST with `X-Taskgate-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. ' +
        "See docs/operators.md.",
      env: false,
    }),
    webPush: option(WebPushSchema.optional(), {
      help: "Web Push (VAPID) to the owners' subscribed browsers: {vapidPublicKey, vapidPrivateKey, subject}",
      details: "Generate the keys once with `npx web-push generate-vapid-keys`. Unset: Web Push is off.",
      defaultText: "off",
      env: false,
    }),
    pushSubscriptionsPerIdentity: option(z.number().int().min(1).max(100).default(10), {
      help: "browsers (Web Push subscriptions) kept per person, in the task store; one more drops the oldest",
    }),
    timeoutMs: option(timerMs.positive().default(5_000), {
      help: "one webhook or push delivery not answered within this long counts as failed (and is retried)",
    }),
    attempts: option(z.number().int().min(1).max(20).default(5), {
      help: "deliveries of one notification to one receiver before it is dropped (logged and counted)",
    }),
    backoffMs: option(timerMs.positive().default(1_000), {
      help: "wait before the first retry; each next retry waits twice as long (up to notify.maxBackoffMs)",
    }),
    maxBackoffMs: option(timerMs.positive().default(60_000), { help: "the longest wait between two retries" }),
    queueSize: option(z.number().int().positive().default(1_000), {
      help: "notifications waiting for delivery on this instance; more are dropped (logged and counted)",
    }),
  })
  .strict();

export type InventoryOptions = z.infer<typeof InventorySchema>;
export type NotifyOptions = z.infer<typeof NotifySchema>;
