// zod building blocks shared by the option declarations: durations that become timers, RFC 6749
// scope tokens, HTTP header names and values, loopback host names.

import { z } from "zod";

export const positiveMs = z.number().int().positive();
/** Durations that become a setTimeout: Node fires at once past 2^31-1 ms (~24.8 days). */
export const timerMs = z.number().int().max(2_147_483_647, "must be at most 2147483647 ms (~24.8 days)");

/** RFC 6749 §3.3 scope-token: printable ASCII without space, '"' or '\\'. */
export const scopeToken = z
  .string()
  .regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, "a scope is printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3)");

/** RFC 9110 field-name (a token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
export const HEADER_NAME_MESSAGE = "must be an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)";
export const headerName = z.string().regex(HEADER_NAME, HEADER_NAME_MESSAGE);
/** A field value: visible ASCII, spaces and tabs (no CR/LF: no header injection). */
export const headerValue = z.string().regex(/^[\t\x20-\x7E]*$/, "must be printable ASCII (no line breaks)");

export const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** When a tool call becomes a task (tasks.policy, tasks.tools, a backend's tasks). */
export const TaskPolicy = z.enum(["never", "auto", "always", "required"]);
export type TaskPolicy = z.infer<typeof TaskPolicy>;
