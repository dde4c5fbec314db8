// CallQuotas: quotas.maxRunningTasks and quotas.maxHeldCalls, per identity (owner hash), counted in
// this process. A call is counted from the moment it starts until its upstream call ends (result,
// error, cancel, expiry): as a held call while it answers inline or waits between MRTR rounds, as
// a task once it is one. admit() is asked before a new call starts and refuses (429, naming the
// quota) when the owner has no room for what the call may become; nothing already running is ever
// stopped or refused: a call admitted inline that turns into a task is counted as a task even when
// that goes past maxRunningTasks for a moment.

import { quotaExceeded } from "../protocol/errors.js";
import type { RunningCall } from "../upstream/upstreamCall.js";

export interface QuotaLimits {
  maxRunningTasks?: number | undefined;
  maxHeldCalls?: number | undefined;
}

type Kind = "task" | "held";

const NOTHING = () => undefined;

interface Counts {
  task: number;
  held: number;
}

export class CallQuotas {
  private readonly byOwner = new Map<string, Counts>();
  private readonly tracked = new Map<RunningCall, { owner: string; kind: Kind }>();

  constructor(private readonly limits: QuotaLimits) {}

  /** Throws quotaExceeded when a new call of `owner` that may become `may` has no room. */
  admit(owner: string, may: { task: boolean; held: boolean }): void {
    const counts = this.byOwner.get(owner);
    if (!counts) return;
    const { maxRunningTasks, maxHeldCalls } = this.limits;
    if (may.task && maxRunningTasks !== undefined && counts.task >= maxRunningTasks) {
      throw quotaExceeded("quotas.maxRunningTasks", maxRunningTasks, "running tasks");
    }
    if (may.held && maxHeldCalls !== undefined && counts.held >= maxHeldCalls) {
      throw quotaExceeded("quotas.maxHeldCalls", maxHeldCalls, "calls held open (inline or between input rounds)");
    }
  }

  /** Counts `call` as `kind` of `owner` until it ends; a held call that becomes a task moves over. */
  track(call: RunningCall, owner: string, kind: Kind): void {
    if (this.limits.maxRunningTasks === undefined && this.limits.maxHeldCalls === undefined) return;
    const known = this.tracked.get(call);
    if (known) {
      if (known.kind === kind) return;
      this.add(known.owner, known.kind, -1);
      known.kind = kind;
      this.add(known.owner, kind, 1);
      return;
    }
    this.tracked.set(call, { owner, kind });
    this.add(owner, kind, 1);
    void call.outcome.finally(() => {
      const entry = this.tracked.get(call);
      if (!entry) return;
      this.tracked.delete(call);
      this.add(entry.owner, entry.kind, -1);
    });
  }

  /** Counts one call of `owner` as `kind` now, until the returned release runs (a call without a RunningCall yet: the
   *  short road's; it hands its count over with release() then track() when it becomes one). */
  count(owner: string, kind: Kind): () => void {
    if (this.limits.maxRunningTasks === undefined && this.limits.maxHeldCalls === undefined) return NOTHING;
    this.add(owner, kind, 1);
    let counted = true;
    return () => {
      if (!counted) return;
      counted = false;
      this.add(owner, kind, -1);
    };
  }

  /** What `owner` holds now (tests, health). */
  countsOf(owner: string): Counts {
    return { ...(this.byOwner.get(owner) ?? { task: 0, held: 0 }) };
  }

  private add(owner: string, kind: Kind, delta: number): void {
    const counts = this.byOwner.get(owner) ?? { task: 0, held: 0 };
    counts[kind] += delta;
    if (counts.task === 0 && counts.held === 0) this.byOwner.delete(owner);
    else this.byOwner.set(owner, counts);
  }
}
