// One request running upstream on a client's behalf (a tools/call, or a read that may ask).
// It outlives the HTTP request that started it: whoever holds it (an inline response, a task)
// follows its progress and questions and may abort it. Questions asked before anyone listens
// are kept until someone does.

import type { Logger } from "pino";
import { internalError, requestCancelled } from "../protocol/errors.js";
import type { InputRequest, JsonObject, JsonRpcErrorObject } from "../protocol/wire.js";
import type { Question } from "../questions/question.js";
import { callContextStorage } from "./callContext.js";
import type { LegacyClientCapabilities } from "./capabilityProfile.js";
import { toJsonRpcError } from "./upstreamError.js";
import type { UpstreamPool } from "./upstreamPool.js";

export type CallOutcome =
  | { kind: "result"; result: JsonObject }
  | { kind: "error"; error: JsonRpcErrorObject }
  | { kind: "aborted"; reason: string };

export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

export interface CallWatcher {
  progress?(progress: Progress): void;
  question?(question: Question): void;
}

/** What the holders of a call (an inline reply, a parked MRTR call, a task) use of it. */
export interface RunningCall {
  readonly outcome: Promise<CallOutcome>;
  /** Resolves when the upstream asks its first question. */
  readonly asked: Promise<void>;
  /** Follow this call; returns the way to stop following. */
  watch(watcher: CallWatcher): () => void;
  /** Stop the call upstream. */
  abort(reason: string): void;
}

export class UpstreamCall implements RunningCall {
  readonly outcome: Promise<CallOutcome>;
  /** Resolves when the upstream asks its first question. */
  readonly asked: Promise<void>;
  private markAsked: () => void = () => undefined;
  private readonly controller = new AbortController();
  private readonly watchers = new Set<CallWatcher>();
  private readonly unclaimed: Question[] = [];
  private finished = false;
  private lostBecause?: string;

  constructor(
    pool: UpstreamPool,
    readonly profile: LegacyClientCapabilities,
    readonly method: string,
    readonly params: JsonObject,
    private readonly log: Logger,
  ) {
    this.asked = new Promise((resolve) => (this.markAsked = resolve));
    const context = {
      onInput: (request: InputRequest, withdrawn: AbortSignal) => this.ask(request, withdrawn),
      onStreamLost: (why: string) => this.lose(why),
    };
    this.outcome = callContextStorage
      .run(context, () =>
        pool.request(profile, method, params, {
          signal: this.controller.signal,
          onprogress: (progress) => this.watchers.forEach((w) => w.progress?.(progress)),
        }),
      )
      .then(
        (result): CallOutcome => ({ kind: "result", result }),
        (error: unknown): CallOutcome =>
          this.lostBecause !== undefined
            ? { kind: "error", error: internalError(`Upstream call lost: ${this.lostBecause} (its session may have ended)`).toJSON() }
            : this.controller.signal.aborted
              ? { kind: "aborted", reason: String(this.controller.signal.reason ?? "aborted") }
              : { kind: "error", error: toJsonRpcError(error) },
      )
      .finally(() => {
        this.finished = true;
      });
  }

  /** Follow this call. Questions nobody has claimed yet are handed to the new watcher at once. */
  watch(watcher: CallWatcher): () => void {
    this.watchers.add(watcher);
    if (watcher.question) {
      for (const question of this.unclaimed.splice(0)) if (!question.settled) watcher.question(question);
    }
    return () => this.watchers.delete(watcher);
  }

  /** Stop the upstream call: the SDK sends notifications/cancelled for it. */
  abort(reason: string): void {
    if (this.finished || this.controller.signal.aborted) return;
    this.log.info({ event: "upstream.call.cancelled", method: this.method, reason }, "upstream call cancelled");
    this.controller.abort(reason);
  }

  /** The upstream can no longer answer this call: stop waiting, and end it as an error. */
  private lose(why: string): void {
    if (this.finished || this.controller.signal.aborted) return;
    this.lostBecause = why;
    this.log.warn({ event: "upstream.call.lost", method: this.method, why }, "upstream call lost");
    this.controller.abort(why);
  }

  private ask(request: InputRequest, withdrawn: AbortSignal): Promise<JsonObject> {
    return new Promise<JsonObject>((resolve, reject) => {
      let settled = false;
      const question: Question = {
        request,
        withdrawn,
        get settled() {
          return settled || withdrawn.aborted;
        },
        answer(result) {
          if (settled) return;
          settled = true;
          resolve(result);
        },
        refuse(error) {
          if (settled) return;
          settled = true;
          reject(Object.assign(new Error(error.message), { code: error.code, data: error.data }));
        },
      };
      // The call's own abort withdraws every question too.
      this.controller.signal.addEventListener("abort", () => question.refuse(requestCancelled().toJSON()), {
        once: true,
      });
      this.markAsked();
      const askers = [...this.watchers].filter((w) => w.question);
      if (askers.length === 0) this.unclaimed.push(question);
      else askers.forEach((w) => w.question!(question));
    });
  }
}
