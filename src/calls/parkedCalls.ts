// ParkedCalls: inline calls parked between MRTR rounds on this instance. A parked call keeps its
// upstream call waiting on the questions it asked (its OpenQuestions); each round hands the client
// a requestState sealed by RequestStateCodec, good for one retry, naming this instance as the
// holder, so a retry reaching another instance can be sent here (RemoteRounds). A parked call
// nobody resumes within holdTimeoutMs is cancelled upstream.

import { randomBytes, randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { invalidParams } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/wire.js";
import { OpenQuestions } from "../questions/openQuestions.js";
import type { RunningCall } from "../upstream/upstreamCall.js";
import type { RequestStateClaims, RequestStateCodec } from "./requestStateCodec.js";

/** What a requestState is bound to besides the parked call. */
export interface CallBinding {
  owner: string;
  method: string;
  name: string;
  args: string;
  /** The MCP path of the request (a fleet's): a requestState answers only on the path that issued it. */
  endpoint?: string;
  configuredKey?: string;
}

export interface ParkedCall {
  readonly id: string;
  readonly call: RunningCall;
  readonly binding: CallBinding;
  readonly questions: OpenQuestions;
  /** The round whose requestState may resume this call ("" between a retry and the next round). */
  round: string;
  timer?: NodeJS.Timeout;
  /** The call ended while a round was out: the retry of that round gets its result, not "gone". */
  finished?: boolean;
}

const nonce = () => randomBytes(16).toString("base64url");

/** Where the call a retry refers to is held: here (and found), or on another instance. */
export type Located = { here: ParkedCall } | { elsewhere: string };

export class ParkedCalls {
  private readonly parked = new Map<string, ParkedCall>();

  constructor(
    private readonly codec: RequestStateCodec,
    private readonly holdTimeoutMs: number,
    private readonly log: Logger,
    /** This instance, named as the holder in every requestState sealed here. */
    readonly instanceId: string = randomUUID(),
  ) {}

  park(call: RunningCall, binding: CallBinding): ParkedCall {
    const parked: ParkedCall = { id: nonce(), call, binding, questions: new OpenQuestions(binding.configuredKey), round: "" };
    this.parked.set(parked.id, parked);
    // A call that ends while a round is out (the upstream answered without waiting for its question) keeps its
    // place until that round's retry or the hold time: the client asked to retry, so the retry gets the outcome.
    void call.outcome.finally(() => {
      if (parked.round === "") this.release(parked);
      else parked.finished = true;
    });
    return parked;
  }

  /** The MRTR result of a new round: every open question, and a fresh one-time requestState. */
  inputRequired(parked: ParkedCall): JsonObject {
    return { resultType: "input_required", inputRequests: parked.questions.inputRequests(), requestState: this.issueRound(parked) };
  }

  /** Where the call a retry's requestState refers to is held; when here, the parked call. Changes nothing. */
  locate(requestState: unknown, retry: CallBinding): Located {
    const claims = this.claimsFor(requestState, retry);
    if (claims.holder !== undefined && claims.holder !== this.instanceId) return { elsewhere: claims.holder };
    return { here: this.parkedFor(claims) };
  }

  /** Finds the parked call a retry's requestState refers to, or says precisely why not. Changes nothing. */
  find(requestState: unknown, retry: CallBinding): ParkedCall {
    return this.parkedFor(this.claimsFor(requestState, retry));
  }

  /** The claims of a requestState that fits the retry, or -32602 saying why it does not. */
  private claimsFor(requestState: unknown, retry: CallBinding): RequestStateClaims {
    const opened = this.codec.open(requestState);
    if (!opened.ok) throw invalidParams(opened.reason);
    const { claims } = opened;
    if (claims.owner !== retry.owner) throw invalidParams("requestState belongs to another identity");
    // Like a task id: another backend's path, or the federated endpoint, did not issue it.
    if (claims.endpoint !== undefined && claims.endpoint !== retry.endpoint) {
      throw invalidParams("requestState belongs to another endpoint: retry on the path that issued it");
    }
    if (claims.method !== retry.method || claims.name !== retry.name) {
      throw invalidParams(`requestState was issued for ${claims.method} '${claims.name}', not ${retry.method} '${retry.name}'`);
    }
    if (claims.args !== retry.args) throw invalidParams("requestState was issued for other arguments: retry with the original arguments");
    return claims;
  }

  private parkedFor(claims: RequestStateClaims): ParkedCall {
    const parked = this.parked.get(claims.held);
    if (!parked) throw invalidParams("the call this requestState refers to is gone (finished, cancelled or expired); call again");
    if (parked.round !== claims.round) throw invalidParams("requestState was already used: each one is good for one retry only");
    return parked;
  }

  /** Whether the call a requestState refers to is parked here (a fleet routes another instance's retry by it). */
  holds(requestState: unknown): boolean {
    const opened = this.codec.open(requestState);
    return opened.ok && this.parked.has(opened.claims.held);
  }

  /** Marks the current round used, so its requestState cannot be replayed. */
  consume(parked: ParkedCall): void {
    parked.round = "";
    if (parked.timer) clearTimeout(parked.timer);
    if (parked.finished) this.release(parked);
  }

  /** Parked calls right now. */
  count(): number {
    return this.parked.size;
  }

  /** The call goes on as a task: it is no longer parked (nothing is cancelled). */
  handOver(parked: ParkedCall): void {
    this.release(parked);
  }

  abortAll(reason: string): void {
    for (const parked of [...this.parked.values()]) {
      parked.call.abort(reason);
      this.release(parked);
    }
  }

  /** Starts a new round: a fresh one-time nonce, a fresh expiry, and the sealed requestState. */
  private issueRound(parked: ParkedCall): string {
    parked.round = nonce();
    const exp = Date.now() + this.holdTimeoutMs;
    if (parked.timer) clearTimeout(parked.timer);
    parked.timer = setTimeout(() => {
      this.log.info(
        { event: "mrtr.held.expired", method: parked.binding.method, name: parked.binding.name },
        "parked call not resumed in time",
      );
      parked.call.abort("no client resumed the held call in time");
      this.release(parked);
    }, this.holdTimeoutMs).unref();
    const { owner, method, name, args, endpoint, configuredKey } = parked.binding; // each named: a binding may be a class
    return this.codec.seal({
      held: parked.id,
      holder: this.instanceId,
      round: parked.round,
      owner,
      method,
      name,
      args,
      ...(endpoint !== undefined ? { endpoint } : {}),
      ...(configuredKey !== undefined ? { configuredKey } : {}),
      exp,
    });
  }

  private release(parked: ParkedCall): void {
    if (parked.timer) clearTimeout(parked.timer);
    this.parked.delete(parked.id);
  }
}
