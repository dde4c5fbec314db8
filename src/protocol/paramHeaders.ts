// Mcp-Param-{Name} headers (SEP-2243): a tool argument whose schema property carries
// "x-mcp-header": "{Name}" is mirrored in that header so proxies can route on it. A present
// argument needs its header, equal after decoding (numbers compare numerically); an absent or
// null argument must not have one. Any failure is -32020 / HTTP 400, like the standard headers.

import { headerMismatch, type RpcError } from "./errors.js";
import { clip, decodeHeaderValue, getHeader, type HeaderMap } from "./headerValue.js";
import type { JsonObject } from "./wire.js";

/** Header name → argument name, for one tool. */
export type ParamHeaders = Record<string, string>;

export function paramHeadersOf(inputSchema: unknown): ParamHeaders {
  const properties = (inputSchema as { properties?: Record<string, { "x-mcp-header"?: unknown }> } | undefined)?.properties ?? {};
  const headers: ParamHeaders = {};
  for (const [argument, schema] of Object.entries(properties)) {
    const name = schema?.["x-mcp-header"];
    if (typeof name === "string" && name.length > 0) headers[name] = argument;
  }
  return headers;
}

function matches(header: string, value: unknown): boolean {
  if (typeof value === "number") return header.trim() !== "" && Number(header) === value;
  if (typeof value === "boolean" || typeof value === "string") return header === String(value);
  return header === JSON.stringify(value);
}

export function checkParamHeaders(headers: HeaderMap, params: ParamHeaders, args: JsonObject | undefined): RpcError | undefined {
  for (const [name, argument] of Object.entries(params)) {
    const header = `Mcp-Param-${name}`;
    const value = args?.[argument];
    const raw = getHeader(headers, header);
    if (value === undefined || value === null) {
      if (raw !== undefined) return headerMismatch(`Header mismatch: ${header} is set but argument '${argument}' is absent`);
      continue;
    }
    if (raw === undefined)
      return headerMismatch(`Missing required header ${header} (expected '${clip(String(value))}', the value of argument '${argument}')`);
    if (Array.isArray(raw)) return headerMismatch(`Header mismatch: ${header} appears more than once`);
    const decoded = decodeHeaderValue(raw);
    if (!decoded.ok) return headerMismatch(`Header mismatch: ${header} is malformed: ${decoded.reason}`);
    if (!matches(decoded.value, value)) {
      const sent = `${header} header value '${clip(decoded.value)}'`;
      return headerMismatch(`Header mismatch: ${sent} does not match argument '${argument}' value '${clip(String(value))}'`);
    }
  }
  return undefined;
}
