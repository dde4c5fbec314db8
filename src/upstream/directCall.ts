// DirectCall: a call sent straight onto a session the pool lends at once (UpstreamPool.lend), its
// end told to a sink by callback: the short road of the common call (calls/quickCall.ts), with no
// promise, signal or timer of its own. It holds the lease until the call ends and gives it back
// with the call's failure, as UpstreamPool.call() does for the promise road. A session the
// upstream forgot (session_gone: the request never ran) is dropped and the call sent once more on
// a fresh session through that road, so the sink never hears session_gone; its other ends
// (result, the upstream's error, a failure, a stop) reach the sink exactly once.

import type { JsonObject, RequestId } from "../protocol/wire.js";
import type { CallContext } from "./callContext.js";
import type { LegacyClientCapabilities } from "./capabilityProfile.js";
import type { Progress, ResponseSink } from "./jsonRpcPeer.js";
import { type CallStopped, isSessionGone } from "./upstreamFailure.js";
import type { CallOptions, SessionLease, UpstreamPool } from "./upstreamPool.js";

/** Who a direct call answers to: its end and progress (a ResponseSink), and its questions and logs (its CallContext). */
export interface DirectSink extends ResponseSink, CallContext {
  progress(progress: Progress): void;
}

/** What a direct call is: whose, with which capability profile, and what it asks the upstream. */
export interface DirectOrder {
  owner: string;
  profile: LegacyClientCapabilities;
  method: string;
  params: JsonObject;
  /** The upstream is asked for the call's progress (a progressToken): someone reads it. */
  asksProgress: boolean;
}

export class DirectCall implements ResponseSink {
  /** Present only when the call asks for progress: the peer sends a progressToken with it then. */
  readonly progress?: (progress: Progress) => void;
  private lease: SessionLease | undefined;
  private requestId: RequestId | undefined;
  /** Set once stop() ran: the end is the stop's, and a refused request is not sent again. */
  private stopped?: Error;
  /** The second attempt on a fresh session (after session_gone), stopped through its signal. */
  private again?: AbortController;

  private constructor(
    private readonly pool: UpstreamPool,
    private readonly order: DirectOrder,
    private readonly sink: DirectSink,
  ) {
    if (order.asksProgress) this.progress = (progress) => sink.progress(progress);
  }

  /** The call, sent at once on a session the pool lends now; undefined when none is open with room (take the promise road). */
  static start(pool: UpstreamPool, order: DirectOrder, sink: DirectSink): DirectCall | undefined {
    const lease = pool.lend(order.owner, order.profile, sink);
    const session = lease?.session;
    if (!lease || !session) return undefined;
    const call = new DirectCall(pool, order, sink);
    call.lease = lease;
    try {
      call.requestId = session.start(order.method, order.params, call, sink);
    } catch (error) {
      // The session ended between lend and start: nothing was sent, the promise road opens a new one.
      call.lease = undefined;
      pool.giveBack(lease, sink, error);
      return undefined;
    }
    return call;
  }

  /** Stops the call upstream (notifications/cancelled, exchange closed); the sink hears `error` (a CallStopped). */
  stop(error: CallStopped): void {
    if (this.stopped) return;
    this.stopped = error;
    if (this.again) return this.again.abort(error.why);
    if (this.lease?.session && this.requestId !== undefined) this.lease.session.stop(this.requestId, error);
  }

  result(result: JsonObject): void {
    this.giveBack();
    this.sink.result(result);
  }

  failed(error: Error): void {
    this.giveBack(error);
    const gone = isSessionGone(error);
    if (!gone || this.stopped || this.again) return this.sink.failed(error);
    // It never ran: once more on a fresh session, as UpstreamPool.call() does.
    const again = new AbortController();
    this.again = again;
    const { owner, profile, method, params } = this.order;
    const options: CallOptions = { context: this.sink, signal: again.signal };
    if (this.progress) options.onprogress = this.progress;
    this.pool.call(owner, profile, method, params, options).then(
      (result) => this.sink.result(result),
      (failure: Error) => this.sink.failed(failure),
    );
  }

  private giveBack(failure?: unknown): void {
    const lease = this.lease;
    if (!lease) return;
    this.lease = undefined;
    this.pool.giveBack(lease, this.sink, failure);
  }
}
