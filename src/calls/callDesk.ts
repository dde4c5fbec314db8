// CallDesk: the one owner of a call's life, and the only part of calls/ the method handlers use.
// A handler validates its request, checks the catalog, chooses the policy and opens the call here;
// from then on the desk decides what the call is:
//
//   fresh call   quotas.admit → the call starts upstream (StartCall) → counted (CallQuotas) →
//                inline (an InlineCall: JSON, a stream, or an MRTR round that parks it), a task
//                (TaskRunner, stored before the handle goes out), or policy auto: inline if it
//                ends or asks within tasks.autoAfterMs, else a task
//   retry        the requestState names the call's holder: parked here → answers checked, then the
//                call resumes inline on this request (or becomes a task under auto); held by
//                another instance → forwarded there over the HolderLink (RemoteRounds)
//   holder side  serve(): another instance's retry for a call parked here, resumed the same way
//   shutdown     inline calls get the grace period, parked calls are cancelled, live tasks fail
//
// How a policy and the request's declaration of the tasks extension decide the call's life:
// undeclared → inline (policy `required`: refused, -32021); declared → `never` inline, `always`
// and `required` a task at once, `auto` inline or task as above. Every call is counted against
// quotas here, from one place, until its upstream call ends.

import type { Logger } from "pino";
import type { CallGuard } from "../access/callGuard.js";
import type { HolderLink, HolderReply, RoundCommand } from "../cluster/holderLink.js";
import type { TaskPolicy } from "../config/schema.js";
import type { EventLog } from "../observability/requestLog.js";
import { missingCapability } from "../protocol/errors.js";
import type { HeaderMap } from "../protocol/headerValue.js";
import { SHUTDOWN } from "../protocol/reasons.js";
import { type Reply, resultReply } from "../protocol/reply.js";
import type { RequestNote } from "../protocol/requestNote.js";
import { type ClientCapabilities, declaresTasks, type JsonObject, META, type RequestId, TASKS_EXTENSION } from "../protocol/wire.js";
import type { TaskRunner } from "../tasks/taskRunner.js";
import { taskHandle } from "../tasks/taskView.js";
import { profileOf } from "../upstream/capabilityProfile.js";
import type { RunningCall } from "../upstream/upstreamCall.js";
import type { ClientGone } from "../util/clientGone.js";
import { CallQuotas, type QuotaLimits } from "./callQuotas.js";
import type { CallStart, DirectCalls, StartCall } from "./callStarter.js";
import { InlineCall, type InlineRequest } from "./inlineCall.js";
import { LiveInlineCalls } from "./liveInlineCalls.js";
import type { CallBinding, ParkedCalls } from "./parkedCalls.js";
import { QuickCall } from "./quickCall.js";
import { RemoteRounds } from "./remoteRounds.js";
import { argumentsDigest } from "./requestStateCodec.js";
import { isRetry, presetAnswersOf, resumeParkedCall } from "./resumeParkedCall.js";
import { policyFor, type TaskSettings } from "./taskPolicy.js";

export type { TaskPolicy, TaskSettings };

/** A quick result within this window is answered as JSON, not SSE. */
export const INLINE_JSON_WINDOW_MS = 250;

/** What the desk needs of a method request (a MethodRequest is one). */
export interface CallRequest {
  id: RequestId;
  params: JsonObject;
  meta: JsonObject;
  capabilities: ClientCapabilities;
  /** The request's headers (a modern backend checks the Mcp-Param-* ones too). */
  headers?: HeaderMap;
  /** Tells when the client goes away: an inline call is then cancelled upstream. */
  gone: ClientGone;
  log: EventLog;
  note: RequestNote;
  /** The MCP path the request came to (a fleet's): a task made of this call answers only there. */
  endpoint?: string | undefined;
}

/** The call a handler opens: `method` on `name`, for `owner`. */
export interface CallOrder {
  owner: string;
  method: string;
  name: string;
  /** The caller's arguments: a requestState is bound to their digest. */
  args: unknown;
  /** What is sent upstream (never the request's _meta or MRTR fields). */
  upstreamParams: JsonObject;
  /** How the call may be answered (tools/call: policyFor(); the reads: `never`, inline only). */
  policy: TaskPolicy;
  /** The tool's 2025-11-25 execution.taskSupport (a task tool may run as a task upstream). */
  taskSupport?: string | undefined;
  /** Cache hints for a fresh call's complete result (a retry's result is never cached). */
  cache?: { ttlMs: number; cacheScope: "public" | "private" } | undefined;
  /** What the call must pass before it is sent upstream (an approval), and its audit line when it ends. */
  guard?: CallGuard | undefined;
}

export interface CallDeskOptions {
  startCall: StartCall;
  /** The short road of plain inline calls (quickCall.ts); without it every call takes the full road. */
  direct?: DirectCalls | undefined;
  runner: TaskRunner;
  parked: ParkedCalls;
  /** How retries for calls another instance holds get there. */
  link: HolderLink;
  /** Whether an instance's lease lives: a holder that does not answer is paused, not gone, while it does. */
  holderAlive: (instanceId: string) => Promise<boolean>;
  quotas: QuotaLimits;
  /** tasks.*: the policies, autoAfterMs, input keys. */
  settings: TaskSettings;
  log: Logger;
}

/** inline; task at once; auto (inline if quick, else a task); refused (a task-only tool, undeclared). */
type Life = "inline" | "task" | "auto" | "refused";

function lifeOf(policy: TaskPolicy, declared: boolean): Life {
  if (!declared) return policy === "required" ? "refused" : "inline";
  if (policy === "never") return "inline";
  return policy === "auto" ? "auto" : "task";
}

const NOT_CACHED = (result: JsonObject): JsonObject => ({ ...result, ttlMs: 0, cacheScope: "private" });

/** The cache hints a fresh call's complete result carries, if its order has any. */
function decoratorOf({ cache }: CallOrder): ((result: JsonObject) => JsonObject) | undefined {
  return cache && ((result) => ({ ...result, ttlMs: cache.ttlMs, cacheScope: cache.cacheScope }));
}

export class CallDesk {
  private readonly live = new LiveInlineCalls();
  private readonly quotas: CallQuotas;
  private readonly rounds: RemoteRounds;

  constructor(private readonly options: CallDeskOptions) {
    this.quotas = new CallQuotas(options.quotas);
    this.rounds = new RemoteRounds({
      link: options.link,
      holderAlive: options.holderAlive,
      log: options.log,
      resume: (request, binding, asTask) =>
        this.retry(request, binding, { asTask, jsonWindowMs: Number.POSITIVE_INFINITY, mayForward: false }),
    });
  }

  /** The policy of a tools/call of `tool` (config per tool, then the tool's taskSupport, then the default). */
  policyFor(tool: string, taskSupport: string | undefined): TaskPolicy {
    return policyFor(tool, this.options.settings, taskSupport);
  }

  /** Opens the call: a fresh one, or the retry of a parked one (wherever it is held). */
  open(request: CallRequest, order: CallOrder): Promise<Reply> {
    const configuredKey = order.method === "tools/call" ? this.options.settings.inputKeys[order.name] : undefined;
    const binding = new OrderBinding(order, request.endpoint, configuredKey);
    const life = lifeOf(order.policy, declaresTasks(request.capabilities));
    if (isRetry(request.params)) {
      return this.retry({ ...inlineRequestOf(request), params: request.params }, binding, {
        asTask: life === "auto",
        jsonWindowMs: INLINE_JSON_WINDOW_MS,
        mayForward: true,
        ...(order.cache ? { decorate: NOT_CACHED } : {}),
      });
    }
    try {
      return this.fresh(request, order, binding, life);
    } catch (error) {
      return Promise.reject(error); // a refusal (quota, task-only tool) rejects, as from an async function
    }
  }

  /** Holder side: another instance's command for a call parked here. */
  serve(command: RoundCommand): Promise<HolderReply> {
    return this.rounds.serve(command);
  }

  /** Whether the call a retry's requestState refers to is parked at this desk. */
  holds(requestState: unknown): boolean {
    return this.options.parked.holds(requestState);
  }

  /** Calls answering a client now, and calls parked between rounds (metrics, health, shutdown log). */
  held(): { inline: number; parked: number } {
    return { inline: this.live.count(), parked: this.options.parked.count() };
  }

  /** Shutdown: inline calls get `graceMs` to end (then a shutting_down error), parked calls are
   *  cancelled, live tasks fail saying why. */
  async shutdown(graceMs: number): Promise<void> {
    await this.live.drain(graceMs);
    this.options.parked.abortAll(SHUTDOWN.abortReason);
    await this.options.runner.shutdown();
  }

  private fresh(request: CallRequest, order: CallOrder, binding: CallBinding, life: Life): Promise<Reply> {
    const presetAnswers = presetAnswersOf(request.params);
    if (life === "refused") {
      throw missingCapability(
        { extensions: { [TASKS_EXTENSION]: {} } },
        `tool '${order.name}' runs only as a task; declare ${TASKS_EXTENSION}`,
      );
    }
    const { owner, guard } = order;
    this.quotas.admit(owner, { task: life !== "inline", held: life !== "task" });
    const start: CallStart = {
      owner,
      profile: profileOf(request.capabilities),
      relaysLogs: typeof request.meta[META.logLevel] === "string",
      method: order.method,
      params: order.upstreamParams,
      meta: request.meta,
      headers: request.headers ?? {},
      log: request.log,
      taskSupport: order.taskSupport,
      mayBecomeTask: life !== "inline",
      asksProgress: life !== "inline" || request.meta.progressToken !== undefined,
      gate: guard?.gate,
    };
    // The short road, for a plain inline call: nothing the client must be shown on the way (no progress asked for,
    // no answers sent ahead) and nothing to pass first (no guard). It joins the full road below when it must.
    const { direct } = this.options;
    if (direct && (life === "inline" || life === "auto") && !guard && !presetAnswers && request.meta.progressToken === undefined) {
      const quick = QuickCall.begin({
        calls: direct,
        start,
        request,
        windowMs: life === "auto" ? this.options.settings.autoAfterMs : INLINE_JSON_WINDOW_MS,
        live: this.live,
        uncount: this.quotas.count(owner, "held"),
        decorate: decoratorOf(order),
        promote: (adopt, elapsedMs) => this.onFullRoad({ ...start, adopt }, request, order, binding, life, undefined, elapsedMs),
      });
      if (quick) return quick;
    }
    return this.onFullRoad(start, request, order, binding, life, presetAnswers, 0);
  }

  /** A fresh call on the full road: a RunningCall, then a task, or an InlineCall (policy auto: a task if it runs on).
   *  `elapsedMs`: how long it ran on the short road before (its JSON window and autoAfterMs are counted from the start). */
  private async onFullRoad(
    start: CallStart,
    request: CallRequest,
    order: CallOrder,
    binding: CallBinding,
    life: Life,
    presetAnswers: JsonObject | undefined,
    elapsedMs: number,
  ): Promise<Reply> {
    const { owner, guard } = order;
    const started = this.options.startCall(start);
    const call = started instanceof Promise ? await started : started;
    if (guard) void call.outcome.then((outcome) => guard.ended(outcome));
    if (life === "task") return this.toTask(call, owner, order.name, request, guard);
    this.count(call, owner, "held");
    const inline = new InlineCall(call, inlineRequestOf(request), {
      parked: this.options.parked,
      live: this.live,
      binding,
      decorate: decoratorOf(order),
      ...(presetAnswers ? { presetAnswers } : {}),
    });
    const left = (ms: number) => Math.max(0, ms - elapsedMs);
    if (life === "auto" && !(await inline.finishesWithin(left(this.options.settings.autoAfterMs)))) {
      return this.toTask(call, owner, order.name, request, guard);
    }
    return inline.reply(left(INLINE_JSON_WINDOW_MS));
  }

  /** A retry: resumed here when the call is parked here, else (if it may) sent to its holder. */
  private async retry(
    request: InlineRequest & { params: JsonObject },
    binding: CallBinding,
    how: { asTask: boolean; jsonWindowMs: number; mayForward: boolean; decorate?: (result: JsonObject) => JsonObject },
  ): Promise<Reply> {
    const { parked } = this.options;
    const inputResponses = presetAnswersOf(request.params) ?? {};
    const { requestState } = request.params;
    const located = how.mayForward ? parked.locate(requestState, binding) : { here: parked.find(requestState, binding) };
    if ("elsewhere" in located) return this.rounds.forward(located.elsewhere, request, binding, inputResponses, how);
    return resumeParkedCall(located.here, request, parked, inputResponses, {
      jsonWindowMs: how.jsonWindowMs,
      live: this.live,
      decorate: how.decorate,
      ...(how.asTask
        ? {
            asTask: (parkedCall) => {
              parked.handOver(parkedCall);
              return this.toTask(parkedCall.call, binding.owner, binding.name, request);
            },
          }
        : {}),
    });
  }

  /** The call becomes a task: its record is stored before the handle is returned (a call whose
   *  task could not be stored is cancelled upstream). */
  private async toTask(
    call: RunningCall,
    owner: string,
    tool: string,
    request: { log?: EventLog; note: RequestNote; endpoint?: string | undefined },
    guard?: CallGuard,
  ): Promise<Reply> {
    let record: Awaited<ReturnType<TaskRunner["start"]>>;
    try {
      record = await this.options.runner.start(call, owner, tool, request.log, request.endpoint, request.note.subject);
    } catch (error) {
      call.abort("the task could not be stored");
      throw error;
    }
    this.count(call, owner, "task");
    guard?.boundTo(record.taskId);
    request.note.taskId = record.taskId;
    request.note.outcome = "task";
    return resultReply({ ...taskHandle(record), resultType: "task" });
  }

  /** The one place calls are counted against quotas (a held call that becomes a task moves over). */
  private count(call: RunningCall, owner: string, kind: "held" | "task"): void {
    this.quotas.track(call, owner, kind);
  }
}

/** What a requestState of this call is bound to. A class: the arguments' digest is computed only once a round or a
 *  retry needs it, by a getter of the prototype (a getter in an object literal costs an accessor pair per call, which
 *  V8 keeps in old space: see ClientGone). */
class OrderBinding implements CallBinding {
  readonly owner: string;
  readonly method: string;
  readonly name: string;
  readonly endpoint?: string;
  readonly configuredKey?: string;
  private digest: string | undefined;

  constructor(
    private readonly order: CallOrder,
    endpoint: string | undefined,
    configuredKey: string | undefined,
  ) {
    this.owner = order.owner;
    this.method = order.method;
    this.name = order.name;
    if (endpoint !== undefined) this.endpoint = endpoint;
    if (configuredKey) this.configuredKey = configuredKey;
  }

  get args(): string {
    this.digest ??= argumentsDigest(this.order.args);
    return this.digest;
  }
}

/** What an inline call needs of the request. */
function inlineRequestOf(request: CallRequest): InlineRequest {
  const token = request.meta.progressToken;
  const logLevel = request.meta[META.logLevel];
  const inline: InlineRequest = {
    id: request.id,
    capabilities: request.capabilities,
    note: request.note,
    gone: request.gone,
  };
  if (request.endpoint !== undefined) inline.endpoint = request.endpoint;
  if (typeof token === "string" || typeof token === "number") inline.progressToken = token;
  if (typeof logLevel === "string") inline.logLevel = logLevel;
  return inline;
}
