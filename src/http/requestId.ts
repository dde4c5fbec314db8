// The id of one HTTP request, for its log lines and its X-Request-Id response header: the
// X-Request-Id a client or proxy sent when it is a sane token (1–128 visible ASCII characters,
// no spaces, sent once), else the trace id of a valid W3C traceparent (so a request's lines can be
// found by the trace a tracing system shows), else a fresh UUID. A refused X-Request-Id is never
// echoed or logged (it may be hostile: a tab, non-ASCII bytes, a megabyte; Node itself answers 400
// to most other control characters); `refused` says why it was replaced.

import { randomUUID } from "node:crypto";

export const MAX_REQUEST_ID_LENGTH = 128;

export interface ResolvedRequestId {
  id: string;
  from: "x-request-id" | "traceparent" | "minted";
  /** Why the X-Request-Id sent was not used. */
  refused?: string;
}

const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_PARENT = "0".repeat(16);

/** `headers`: each header with all the values it was sent with (distinctHeaders(), or IncomingMessage.headersDistinct). */
export function requestIdOf(headers: { "x-request-id"?: string[] | undefined; traceparent?: string[] | undefined }): ResolvedRequestId {
  const sent = headers["x-request-id"];
  const refused = sent && problemOf(sent);
  if (sent && !refused) return { id: sent[0]!, from: "x-request-id" };
  const traceId = traceIdOf(headers.traceparent);
  const found: ResolvedRequestId = traceId ? { id: traceId, from: "traceparent" } : { id: randomUUID(), from: "minted" };
  if (refused) found.refused = refused;
  return found;
}

function problemOf(values: string[]): string | undefined {
  if (values.length !== 1) return "sent more than once";
  const value = values[0]!;
  if (value.length > MAX_REQUEST_ID_LENGTH) return `longer than ${MAX_REQUEST_ID_LENGTH} characters (${value.length})`;
  if (!VISIBLE_ASCII.test(value)) return value.length === 0 ? "empty" : "not visible ASCII (control characters, spaces or non-ASCII)";
  return undefined;
}

/** The trace id of a W3C Trace Context traceparent (version 00, or a later one read as 00), if valid and sent once. */
function traceIdOf(values: string[] | undefined): string | undefined {
  if (values?.length !== 1) return undefined;
  const match = TRACEPARENT.exec(values[0]!);
  if (!match) return undefined;
  const [, version, traceId, parentId, , rest] = match;
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || parentId === ZERO_PARENT) return undefined;
  return traceId;
}
