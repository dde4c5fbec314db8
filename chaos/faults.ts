// The fault schedule: from the seed, a list of faults over the run — each a start, a length and a
// target — drawn so that faults come alone and together (a new one may start while others are
// on), then played against the cluster and the balancer: kill -9 of an instance and its restart;
// SIGSTOP/SIGCONT of an instance, of the legacy upstream, of a server-everything process, of
// Redis; a restart of the legacy upstream and of Redis; slow, cut and held connections in the
// proxy. Every fault ends before the workload does, and each is recorded in the history.

import type { Balancer, NetworkFault } from "./balancer.js";
import type { Cluster } from "./cluster.js";
import type { History } from "./history.js";
import type { Rng } from "./rng.js";

export const FAULT_KINDS = [
  "instance-kill",
  "instance-stop",
  "upstream-stop",
  "stdio-stop",
  "upstream-restart",
  "redis-stop",
  "redis-restart",
  "net-slow",
  "net-cut",
  "net-hold",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface PlannedFault {
  kind: FaultKind;
  /** Which instance (a, b, c) for instance faults; else the part's name. */
  target: string;
  /** ms after the run's start. */
  at: number;
  ms: number;
}

/** Faults from `startMs` to `endMs` (relative), one every 1–6 s, each 0.5–5 s long; one fault per target at a time. */
export function planFaults(rng: Rng, startMs: number, endMs: number, kinds: readonly FaultKind[] = FAULT_KINDS): PlannedFault[] {
  const plan: PlannedFault[] = [];
  const busyUntil = new Map<string, number>();
  for (let at = startMs + rng.int(0, 2_000); at < endMs; at += rng.int(1_000, 6_000)) {
    const kind = rng.pick(kinds);
    const target = kind.startsWith("instance-") ? rng.pick(["a", "b", "c"]) : kind.split("-")[0]!;
    const ms = rng.int(500, 5_000);
    const instancesDown = [...busyUntil].filter(([t, until]) => ["a", "b", "c"].includes(t) && until > at).length;
    if ((busyUntil.get(target) ?? 0) > at || at + ms > endMs) continue;
    if (kind.startsWith("instance-") && instancesDown >= 2) continue; // one instance always answers
    busyUntil.set(target, at + ms + 500);
    plan.push({ kind, target, at, ms });
  }
  return plan;
}

export class FaultPlayer {
  readonly injected = new Map<FaultKind, number>();
  private readonly running: Promise<void>[] = [];

  constructor(
    private readonly cluster: Cluster,
    private readonly balancer: Balancer,
    private readonly history: History,
    private readonly rng: Rng,
  ) {}

  /** Plays the plan from `t0`; resolves once every fault has ended (or been undone). */
  async play(plan: PlannedFault[], t0: number): Promise<void> {
    for (const fault of plan) {
      const wait = t0 + fault.at - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      this.running.push(this.one(fault));
    }
    await Promise.all(this.running);
  }

  private async one(fault: PlannedFault): Promise<void> {
    const start = Date.now();
    let note: string | undefined;
    try {
      note = await this.inject(fault);
      this.injected.set(fault.kind, (this.injected.get(fault.kind) ?? 0) + 1);
    } catch (error) {
      note = `could not inject: ${error instanceof Error ? error.message : String(error)}`;
    }
    this.history.add({ kind: "fault", fault: fault.kind, target: fault.target, start, end: Date.now(), ...(note ? { note } : {}) });
  }

  /** Injects the fault, holds it for its length, undoes it. */
  private async inject(fault: PlannedFault): Promise<string | undefined> {
    const hold = () => new Promise((resolve) => setTimeout(resolve, fault.ms));
    const { cluster } = this;
    const instance = cluster.instances.find((i) => i.name === fault.target);
    switch (fault.kind) {
      case "instance-kill":
        await instance!.kill();
        await hold();
        await instance!.start();
        return undefined;
      case "instance-stop":
        instance!.signal("SIGSTOP");
        await hold();
        instance!.signal("SIGCONT");
        return undefined;
      case "upstream-stop":
        cluster.legacy.pause();
        await hold();
        cluster.legacy.resume();
        return undefined;
      case "upstream-restart":
        await cluster.legacy.kill();
        await hold();
        await cluster.legacy.restart();
        return undefined;
      case "stdio-stop": {
        const live = cluster.stdioProcesses().filter((p) => p.owner);
        if (live.length === 0) return "no server-everything process was running";
        const victim = this.rng.pick(live);
        process.kill(victim.pid, "SIGSTOP");
        await hold();
        process.kill(victim.pid, "SIGCONT");
        return `pid ${victim.pid} of instance ${victim.owner?.name}`;
      }
      case "redis-stop":
        cluster.redis.signal("SIGSTOP");
        await hold();
        cluster.redis.signal("SIGCONT");
        return undefined;
      case "redis-restart":
        await cluster.redis.restart();
        return undefined;
      default:
        return this.network(fault, hold);
    }
  }

  private async network(fault: PlannedFault, hold: () => Promise<unknown>): Promise<string> {
    const network: NetworkFault =
      fault.kind === "net-slow"
        ? { kind: "slow", delayMs: this.rng.int(100, 1_500) }
        : fault.kind === "net-cut"
          ? { kind: "cut", share: 0.5 }
          : { kind: "hold", holdMs: this.rng.int(500, 4_000) };
    this.balancer.faults.add(network);
    await hold();
    this.balancer.faults.delete(network);
    return JSON.stringify(network);
  }
}
