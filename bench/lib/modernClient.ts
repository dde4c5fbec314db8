// One 2026-07-28 request from the bench's client side: POST with the standard headers derived
// from the body (as a conforming client sends them), keep-alive fetch; the answer is read as JSON
// or, when the server chose to stream (taskgate does for an inline call slower than its JSON
// window), as SSE up to the response event. Any error answer or HTTP failure throws with the
// method and what came back, so a bench never averages failures into its figures.

import { createParser } from "eventsource-parser";
import { request as undiciRequest } from "undici";
import { META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, PROTOCOL_VERSION, TASKS_EXTENSION } from "./taskShape.js";

export type Json = Record<string, unknown>;

export const TASKS_CAPS: Json = { extensions: { [TASKS_EXTENSION]: {} } };
/** The demo-mode bearer token (= subject) every bench request carries. */
export const BENCH_SUBJECT = "bench";

let nextId = 1;

export interface RpcOptions {
  capabilities?: Json;
  /** Mcp-Name header value; by default derived from params.name / params.taskId. */
  name?: string;
  /** The demo-mode bearer token (= subject); default BENCH_SUBJECT. */
  token?: string;
}

export async function rpc(url: string, method: string, params: Json, options: RpcOptions = {}): Promise<Json> {
  try {
    return await post(url, method, params, options);
  } catch (error) {
    throw new Error(`${method} to ${url}: ${describeError(error)}`);
  }
}

/** An error with its chain of causes (fetch hides the socket error in `cause`). */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e !== undefined && parts.length < 4; e = (e as { cause?: unknown }).cause) {
    parts.push(
      e instanceof Error ? `${e.message}${(e as { code?: string }).code ? ` (${(e as { code?: string }).code})` : ""}` : String(e),
    );
  }
  return parts.join(" ← ");
}

/** The headers and body a conforming client sends for this request. */
function request(method: string, params: Json, options: RpcOptions): { headers: Record<string, string>; body: string } {
  const name =
    options.name ?? (typeof params.name === "string" ? params.name : typeof params.taskId === "string" ? params.taskId : undefined);
  return {
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": PROTOCOL_VERSION,
      "Mcp-Method": method,
      ...(name !== undefined ? { "Mcp-Name": name } : {}),
      Authorization: `Bearer ${options.token ?? BENCH_SUBJECT}`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: { [META_PROTOCOL_VERSION]: PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: options.capabilities ?? {} },
      },
    }),
  };
}

async function post(url: string, method: string, params: Json, options: RpcOptions): Promise<Json> {
  const response = await fetch(url, { method: "POST", ...request(method, params, options) });
  const contentType = response.headers.get("content-type") ?? "";
  const text = await response.text();
  let message: Json | undefined;
  if (contentType.includes("application/json")) message = JSON.parse(text) as Json;
  else if (contentType.includes("text/event-stream")) message = lastResponse(text);
  if (!message?.result) throw new Error(`${method}: HTTP ${response.status} ${contentType}: ${text.slice(0, 300)}`);
  return message.result as Json;
}

/** The last JSON-RPC response (result or error) among the events of an SSE body. */
function lastResponse(body: string): Json | undefined {
  let found: Json | undefined;
  const parser = createParser({
    onEvent(event) {
      const message = JSON.parse(event.data) as Json;
      if ("result" in message || "error" in message) found = message;
    },
  });
  parser.feed(body);
  return found;
}

export const discover = (url: string) => rpc(url, "server/discover", {});

export async function greet(url: string, capabilities: Json = {}): Promise<void> {
  const result = await rpc(url, "tools/call", { name: "greet", arguments: { name: "bench" } }, { capabilities });
  const content = result.content as Array<{ text?: string }> | undefined;
  if (content?.[0]?.text !== "Hello, bench!") throw new Error(`greet: unexpected result ${JSON.stringify(result).slice(0, 200)}`);
}

/** tools/call slow_echo (configured "always") ⇒ the task id of the CreateTaskResult. */
export async function createSlowTask(url: string, ms: number): Promise<string> {
  const result = await rpc(url, "tools/call", { name: "slow_echo", arguments: { text: "bench", ms } }, { capabilities: TASKS_CAPS });
  if (result.resultType !== "task" || typeof result.taskId !== "string") {
    throw new Error(`tools/call slow_echo did not return a CreateTaskResult: ${JSON.stringify(result).slice(0, 200)}`);
  }
  return result.taskId;
}

export async function getWorkingTask(url: string, taskId: string): Promise<void> {
  const task = await rpc(url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS });
  if (task.status !== "working" || task.taskId !== taskId)
    throw new Error(`tasks/get: expected the working task ${taskId}, got ${JSON.stringify(task).slice(0, 200)}`);
}

export async function cancelTask(url: string, taskId: string): Promise<void> {
  await rpc(url, "tasks/cancel", { taskId }, { capabilities: TASKS_CAPS });
}

/**
 * tasks/get through undici's request() instead of fetch: the same bytes on the wire for a fraction
 * of the client's CPU, so with many in flight the server under test, not the bench's client, is
 * the bottleneck (and its per-request wake-up cost is shared, as on a busy server).
 */
export async function leanGetWorkingTask(url: string, taskId: string): Promise<void> {
  const { statusCode, body } = await undiciRequest(url, {
    method: "POST",
    ...request("tasks/get", { taskId }, { capabilities: TASKS_CAPS }),
  });
  const message = (await body.json()) as { result?: Json };
  if (statusCode !== 200 || message.result?.status !== "working" || message.result.taskId !== taskId) {
    throw new Error(`tasks/get: expected the working task ${taskId}, got HTTP ${statusCode} ${JSON.stringify(message).slice(0, 200)}`);
  }
}
