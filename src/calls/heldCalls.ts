// Inline calls parked between MRTR rounds. A held call keeps its upstream call waiting on the
// questions it asked; each round hands the client a requestState sealed by RequestStateCodec.
// A held call nobody resumes within holdTimeoutMs is cancelled upstream.

import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { invalidParams } from "../protocol/errors.js";
import type { InputRequests } from "../protocol/wire.js";
import { mintInputKey } from "./inputKeys.js";
import type { RequestStateCodec } from "./requestStateCodec.js";
import type { Question, UpstreamCall } from "./upstreamCall.js";

/** What a requestState is bound to besides the held call. */
export interface CallBinding {
  owner: string;
  method: string;
  name: string;
  args: string;
  configuredKey?: string;
}

export interface HeldCall {
  readonly id: string;
  readonly call: UpstreamCall;
  readonly binding: CallBinding;
  readonly questions: Map<string, Question>;
  readonly usedKeys: Set<string>;
  round: string;
  timer?: NodeJS.Timeout;
}

const nonce = () => randomBytes(16).toString("base64url");

export class HeldCalls {
  private readonly held = new Map<string, HeldCall>();

  constructor(
    private readonly codec: RequestStateCodec,
    private readonly holdTimeoutMs: number,
    private readonly log: Logger,
  ) {}

  hold(call: UpstreamCall, binding: CallBinding): HeldCall {
    const held: HeldCall = { id: nonce(), call, binding, questions: new Map(), usedKeys: new Set(), round: "" };
    this.held.set(held.id, held);
    void call.outcome.finally(() => this.release(held));
    return held;
  }

  /** Files a question under a fresh key; a withdrawn question leaves the open set. */
  addQuestion(held: HeldCall, question: Question): string {
    const key = mintInputKey(question.request, held.usedKeys, held.binding.configuredKey);
    held.usedKeys.add(key);
    held.questions.set(key, question);
    question.withdrawn.addEventListener("abort", () => held.questions.delete(key), { once: true });
    return key;
  }

  openRequests(held: HeldCall): InputRequests {
    const open: InputRequests = {};
    for (const [key, question] of held.questions) if (!question.settled) open[key] = question.request;
    return open;
  }

  /** Starts a new round: a fresh one-time nonce, a fresh expiry, and the sealed requestState. */
  issueRound(held: HeldCall): string {
    held.round = nonce();
    const exp = Date.now() + this.holdTimeoutMs;
    if (held.timer) clearTimeout(held.timer);
    held.timer = setTimeout(() => {
      this.log.info({ event: "mrtr.held.expired", method: held.binding.method, name: held.binding.name }, "held call not resumed in time");
      held.call.abort("no client resumed the held call in time");
      this.release(held);
    }, this.holdTimeoutMs).unref();
    return this.codec.seal({ held: held.id, round: held.round, ...held.binding, exp });
  }

  /** Finds the held call a retry's requestState refers to, or says precisely why not. Changes nothing. */
  find(requestState: unknown, retry: CallBinding): HeldCall {
    const opened = this.codec.open(requestState);
    if (!opened.ok) throw invalidParams(opened.reason);
    const { claims } = opened;
    if (claims.owner !== retry.owner) throw invalidParams("requestState belongs to another identity");
    if (claims.method !== retry.method || claims.name !== retry.name) {
      throw invalidParams(`requestState was issued for ${claims.method} '${claims.name}', not ${retry.method} '${retry.name}'`);
    }
    if (claims.args !== retry.args) throw invalidParams("requestState was issued for other arguments: retry with the original arguments");
    const held = this.held.get(claims.held);
    if (!held) throw invalidParams("the call this requestState refers to is gone (finished, cancelled or expired); call again");
    if (held.round !== claims.round) throw invalidParams("requestState was already used: each one is good for one retry only");
    return held;
  }

  /** Marks the current round used, so its requestState cannot be replayed. */
  consume(held: HeldCall): void {
    held.round = "";
    if (held.timer) clearTimeout(held.timer);
  }

  count(): number {
    return this.held.size;
  }

  abortAll(reason: string): void {
    for (const held of [...this.held.values()]) {
      held.call.abort(reason);
      this.release(held);
    }
  }

  private release(held: HeldCall): void {
    if (held.timer) clearTimeout(held.timer);
    this.held.delete(held.id);
  }
}

