// Helpers every tool uses: runTool() wraps a tool body with the started/finished/cancelled events;
// ToolRun gives the body speed-scaled abortable waits, progress (only if the call carried a
// progressToken) and client requests (elicitation, sampling, roots) that are RELATED to the tool
// call, i.e. they travel on the call's own SSE stream and are cancelled with it.

import { setTimeout as sleep } from "node:timers/promises";
import type { RequestHandlerExtra, RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type {
  CallToolResult,
  ElicitRequestFormParams,
  ElicitRequestURLParams,
  ServerNotification,
  ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { EmptyResultSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { type SessionContext, scaledDelay, type ToolOutcome } from "./state.js";

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** A human may take long to answer; far above the SDK's 60 s default request timeout. */
const CLIENT_REQUEST_TIMEOUT_MS = 30 * 60_000;

export type AskOutcome =
  | { action: "accept"; content: Record<string, unknown> }
  | { action: "decline" | "cancel" }
  | { action: "unavailable" } // client did not declare the capability
  | { action: "failed"; error: string }; // client answered with an error / invalid content

export function text(value: string, isError = false): CallToolResult {
  return isError ? { isError: true, content: [{ type: "text", text: value }] } : { content: [{ type: "text", text: value }] };
}

export class ToolRun {
  constructor(
    readonly session: SessionContext,
    readonly tool: string,
    readonly extra: Extra,
  ) {}

  get signal(): AbortSignal {
    return this.extra.signal;
  }

  private get events() {
    return this.session.state.events;
  }

  private get client() {
    return this.session.mcp.server.getClientCapabilities();
  }

  /** Waits ms / speed; rejects at once if the call is cancelled or the session closes. */
  async wait(ms: number): Promise<void> {
    await sleep(scaledDelay(this.session.state, ms), undefined, { signal: this.signal });
  }

  /** notifications/progress on the call's stream, only when the request carried a progressToken. */
  async progress(progress: number, total: number, message: string): Promise<void> {
    const progressToken = this.extra._meta?.progressToken;
    if (progressToken === undefined) return;
    await this.extra.sendNotification({
      method: "notifications/progress",
      params: { progressToken, progress, total, message },
    });
  }

  /** `steps` one-second steps, reporting progress first+1..first+steps of `total` as "label (k/steps)". */
  async work(label: string, steps: number, first: number, total: number): Promise<void> {
    for (let k = 1; k <= steps; k++) {
      await this.wait(1000);
      await this.progress(first + k, total, `${label} (${k}/${steps})`);
    }
  }

  /** Options that relate a server→client request to this call (its SSE stream, its cancellation). */
  private related(): RequestOptions {
    return { relatedRequestId: this.extra.requestId, signal: this.signal, timeout: CLIENT_REQUEST_TIMEOUT_MS };
  }

  canAskForm(): boolean {
    return this.client?.elicitation?.form !== undefined; // the SDK normalises `elicitation: {}` to {form:{}}
  }

  canAskUrl(): boolean {
    return this.client?.elicitation?.url !== undefined;
  }

  async askForm(message: string, requestedSchema: ElicitRequestFormParams["requestedSchema"]): Promise<AskOutcome> {
    if (!this.canAskForm()) return { action: "unavailable" };
    return this.ask({ mode: "form", message, requestedSchema });
  }

  async askUrl(params: Omit<ElicitRequestURLParams, "mode">): Promise<AskOutcome> {
    if (!this.canAskUrl()) return { action: "unavailable" };
    return this.ask({ mode: "url", ...params });
  }

  /** notifications/elicitation/complete for a URL elicitation, on this call's stream. */
  async completeUrlElicitation(elicitationId: string): Promise<void> {
    const notify = this.session.mcp.server.createElicitationCompletionNotifier(elicitationId, {
      relatedRequestId: this.extra.requestId,
    });
    await notify();
  }

  private async ask(params: ElicitRequestFormParams | ElicitRequestURLParams): Promise<AskOutcome> {
    let outcome: AskOutcome;
    try {
      const result = await this.session.mcp.server.elicitInput(params, this.related());
      outcome = result.action === "accept" ? { action: "accept", content: result.content ?? {} } : { action: result.action };
    } catch (error) {
      if (this.signal.aborted) throw error;
      outcome = cannotAnswer(error)
        ? { action: "unavailable" }
        : { action: "failed", error: error instanceof Error ? error.message : String(error) };
    }
    this.events.emit("elicitation-answered", {
      tool: this.tool,
      action: outcome.action,
      content: outcome.action === "accept" ? outcome.content : undefined,
      sessionId: this.extra.sessionId,
      requestId: this.extra.requestId,
    });
    return outcome;
  }

  /** ping on this call's stream; resolves with the round-trip time in ms. */
  async pingClient(): Promise<number> {
    const started = Date.now();
    await this.session.mcp.server.request({ method: "ping" }, EmptyResultSchema, this.related());
    this.events.emit("ping-answered", { tool: this.tool, sessionId: this.extra.sessionId });
    return Date.now() - started;
  }

  /** sampling/createMessage with one user message; undefined when the client cannot sample. */
  async sample(prompt: string): Promise<{ text: string; model: string } | undefined> {
    if (!this.client?.sampling) return undefined;
    const result = await this.session.mcp.server
      .createMessage({ messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 100 }, this.related())
      .catch((error: unknown) => {
        if (cannotAnswer(error)) return undefined;
        throw error;
      });
    if (!result) return undefined;
    const blocks = Array.isArray(result.content) ? result.content : [result.content];
    const answer = blocks.map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join(" ");
    this.events.emit("sampling-answered", { tool: this.tool, text: answer, model: result.model, sessionId: this.extra.sessionId });
    return { text: answer, model: result.model };
  }

  /** roots/list; undefined when the client has no roots capability. */
  async listRoots(): Promise<string[] | undefined> {
    if (!this.client?.roots) return undefined;
    const result = await this.session.mcp.server.listRoots(undefined, this.related()).catch((error: unknown) => {
      if (cannotAnswer(error)) return undefined;
      throw error;
    });
    if (!result) return undefined;
    const roots = result.roots.map((r) => r.uri);
    this.events.emit("roots-answered", { tool: this.tool, roots, sessionId: this.extra.sessionId });
    return roots;
  }
}

/** The client answered "Method not found": it cannot do this after all (a gateway serving clients of
 *  several capabilities on one session answers so for a request that did not declare it). */
function cannotAnswer(error: unknown): boolean {
  return error instanceof McpError && error.code === ErrorCode.MethodNotFound;
}

/**
 * Runs a tool body with events: "tool-started", then "tool-finished" ({outcome}); when the client
 * cancelled the call also "cancelled". A cancelled call's result is dropped by the SDK anyway.
 */
export async function runTool(
  session: SessionContext,
  tool: string,
  extra: Extra,
  body: (run: ToolRun) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const { events } = session.state;
  const ids = { sessionId: extra.sessionId, requestId: extra.requestId };
  const finish = (outcome: ToolOutcome) => events.emit("tool-finished", { tool, outcome, ...ids });
  const onAbort = () => {
    // Protocol aborts the signal for notifications/cancelled and also when the session closes;
    // by the time we get here a closed session has already dropped its transport.
    if (!session.mcp.isConnected()) return finish("closed");
    const reason: unknown = extra.signal.reason;
    events.emit("cancelled", {
      tool,
      requestId: extra.requestId,
      reason: typeof reason === "string" ? reason : undefined,
      sessionId: extra.sessionId,
    });
    finish("cancelled");
  };

  events.emit("tool-started", { tool, ...ids });
  let result: CallToolResult;
  try {
    result = await body(new ToolRun(session, tool, extra));
  } catch (error) {
    if (extra.signal.aborted) onAbort();
    else finish("error");
    throw error;
  }
  if (extra.signal.aborted) onAbort();
  else finish(result.isError ? "tool-error" : "ok");
  return result;
}
