// ScriptedCall: a TEST DOUBLE of a running upstream call (RunningCall), driven by the test — it
// reports progress, asks questions and finishes when told. It exists so the inline-call state
// machine can be unit-tested without sockets; e2e tests run the real UpstreamCall against real
// servers.

import { RpcError } from "../../src/protocol/errors.js";
import type { InputRequest, JsonObject, JsonRpcErrorObject } from "../../src/protocol/wire.js";
import type { Question } from "../../src/questions/question.js";
import type { CallOutcome, CallWatcher, Progress, RunningCall } from "../../src/upstream/upstreamCall.js";

export class ScriptedCall implements RunningCall {
  readonly outcome: Promise<CallOutcome>;
  readonly asked: Promise<void>;
  abortedBecause?: string;
  private settle: (outcome: CallOutcome) => void = () => undefined;
  private markAsked: () => void = () => undefined;
  private readonly watchers = new Set<CallWatcher>();

  constructor() {
    this.outcome = new Promise((resolve) => (this.settle = resolve));
    this.asked = new Promise((resolve) => (this.markAsked = resolve));
  }

  watch(watcher: CallWatcher): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  abort(reason: string): void {
    this.abortedBecause ??= reason;
    this.settle({ kind: "aborted", reason });
  }

  logTo(): void {}

  progress(progress: Progress): void {
    for (const watcher of this.watchers) watcher.progress?.(progress);
  }

  /** Asks a question; resolves with the answer it gets, or the error it is refused with. */
  /** `withdraw(reason)`: the upstream cancelled the question, or (SESSION_ENDED) its session ended. */
  ask(request: InputRequest): { question: Question; answered: Promise<JsonObject | JsonRpcErrorObject>; withdraw(reason?: Error): void } {
    const withdrawn = new AbortController();
    let settled = false;
    let reply: (value: JsonObject | JsonRpcErrorObject) => void = () => undefined;
    const answered = new Promise<JsonObject | JsonRpcErrorObject>((resolve) => (reply = resolve));
    const question: Question = {
      request,
      withdrawn: withdrawn.signal,
      get settled() {
        return settled || withdrawn.signal.aborted;
      },
      answer(result) {
        if (settled) return;
        settled = true;
        reply(result);
      },
      refuse(error) {
        if (settled) return;
        settled = true;
        reply(error);
      },
    };
    this.markAsked();
    for (const watcher of this.watchers) watcher.question?.(question);
    return { question, answered, withdraw: (reason) => withdrawn.abort(reason) };
  }

  finish(result: JsonObject): void {
    this.settle({ kind: "result", result });
  }

  fail(error: JsonRpcErrorObject): void {
    this.settle({ kind: "error", error: RpcError.from(error) });
  }
}

export const formQuestion = (property: string, message = `Your ${property}?`): InputRequest => ({
  method: "elicitation/create",
  params: {
    mode: "form",
    message,
    requestedSchema: { type: "object", properties: { [property]: { type: "string" } }, required: [property] },
  },
});
