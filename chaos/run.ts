// One chaos run, start to verdict: the cluster and the balancer up, the users and the fault
// schedule played together for `seconds`, then a drain (every task handed out looked up by its
// owner until it ends; questions still open are declined), the state measured afterwards, the
// checker's verdict, and everything stopped. Used by `npm run chaos` (main.ts) and by the CI test.

import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import { Balancer } from "./balancer.js";
import { check, type EndState, type Verdict } from "./checker.js";
import { Cluster } from "./cluster.js";
import { FAULT_KINDS, type FaultKind, FaultPlayer, planFaults } from "./faults.js";
import { History } from "./history.js";
import { rssOf } from "./processes.js";
import type { RunFacts } from "./report.js";
import { Rng } from "./rng.js";
import { type HandedOut, Registry, TERMINAL, User } from "./users.js";

export interface ChaosOptions {
  seconds: number;
  users: number;
  seed: number;
  /** Where the history goes (JSON lines); unset: kept in memory only. */
  historyPath?: string;
  /** The faults to draw from (default: every kind). */
  faultKinds?: readonly FaultKind[];
  /** The example server's speed factor (build_report takes 18 s / speed). */
  legacySpeed?: number;
  log?: (line: string) => void;
}

/** How long the drain looks up the tasks handed out (ten at a time) until each has ended. 60 s once
 *  ran out on a busy CI machine with 240 tasks, some of them ~18 s build_reports, and read one of them
 *  as "still working"; a task really left hanging still is, after twice as long. */
const DRAIN_MS = 120_000;

export async function runChaos(options: ChaosOptions): Promise<{ facts: RunFacts; verdict: Verdict }> {
  const log = options.log ?? (() => {});
  const began = Date.now();
  const history = new History(options.historyPath);
  const rng = new Rng(options.seed);
  const identities = Math.max(2, Math.ceil(options.users / 5));
  const cluster = await Cluster.start(history, options.legacySpeed ?? 6);
  const balancer = new Balancer(() => cluster.instances.map((i) => i.port), rng.fork("balancer"));
  try {
    await balancer.start();
    log(
      `cluster up: redis :${cluster.redis.port}, legacy ${cluster.legacy.url}, instances ${cluster.instances.map((i) => i.port).join(", ")}, balancer ${balancer.url}`,
    );
    const registry = new Registry();
    const t0 = Date.now();
    const until = t0 + options.seconds * 1_000;
    const ctx = { baseUrl: balancer.url, history, registry, until };
    const users = Array.from({ length: options.users }, (_, i) => {
      const identity = `id${String(i % identities).padStart(2, "0")}`;
      return new User(i, identity, rng.fork(`user ${i}`), ctx);
    });
    const plan = planFaults(rng.fork("faults"), 3_000, Math.max(3_000, options.seconds * 1_000 - 5_000), options.faultKinds ?? FAULT_KINDS);
    const player = new FaultPlayer(cluster, balancer, history, rng.fork("fault targets"));
    log(`${plan.length} faults planned over ${options.seconds} s`);
    await Promise.all([player.play(plan, t0), ...users.map((u) => u.run())]);
    log(`workload over after ${Math.round((Date.now() - t0) / 1000)} s; draining ${registry.tasks.size} tasks`);
    await drain(users, registry, identities);
    await sleep(1_000); // listen streams closed by the users are gone from the instances' counts
    await balancer.settled(10_000);
    const end = await endState(cluster, balancer, identities);
    const tasks = [...registry.tasks.values()];
    const verdict = check(history.entries, tasks, end);
    const facts: RunFacts = {
      seconds: options.seconds,
      users: options.users,
      identities,
      seed: options.seed,
      ops: history.ops(),
      faults: player.injected,
      tasks: tasks.length,
      notifications: history.entries.filter((e) => e.kind === "notification").length,
      wallSeconds: Math.round((Date.now() - began) / 1000),
    };
    return { facts, verdict };
  } finally {
    await balancer.close();
    await cluster.close();
    await history.close();
  }
}

/** Every task handed out, looked up by its owner until it ends (open questions declined), ten at a time. */
async function drain(users: User[], registry: Registry, identities: number): Promise<void> {
  const deadline = Date.now() + DRAIN_MS;
  const owners = new Map(users.slice(0, identities).map((u) => [u.identity, u]));
  const queue = [...registry.tasks.values()];
  const one = async (task: HandedOut) => {
    const user = owners.get(task.identity)!;
    for (;;) {
      const reply = await user.send("final", task.backend, "tasks/get", { taskId: task.taskId }, { taskId: task.taskId });
      const status = reply.outcome === "ok" ? String(reply.result.status) : undefined;
      if (reply.outcome === "error" || (status && TERMINAL.has(status)) || Date.now() > deadline) return;
      if (status === "input_required") {
        const params = { taskId: task.taskId, inputResponses: { charts: { action: "decline" } } };
        await user.send("final-answer", task.backend, "tasks/update", params, { taskId: task.taskId, sent: { action: "decline" } });
      }
      await sleep(500);
    }
  };
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      for (let task = queue.shift(); task; task = queue.shift()) await one(task);
    }),
  );
}

async function endState(cluster: Cluster, balancer: Balancer, identities: number): Promise<EndState> {
  const instances = await Promise.all(
    cluster.instances.map(async (i) => {
      let health: Record<string, unknown> | undefined;
      try {
        const response = await request(`${i.url}/healthz`, { signal: AbortSignal.timeout(5_000) });
        health = (await response.body.json()) as Record<string, unknown>;
      } catch {
        health = undefined;
      }
      return { name: i.name, health, rss: rssOf(i.pid) };
    }),
  );
  const stdio = cluster.stdioProcesses();
  const stdioPerInstance: Record<string, number> = {};
  for (const p of stdio) if (p.owner) stdioPerInstance[p.owner.name] = (stdioPerInstance[p.owner.name] ?? 0) + 1;
  return {
    instances,
    orphanStdio: stdio.filter((p) => !p.owner).map((p) => p.pid),
    stdioPerInstance,
    identities,
    balancerSockets: balancer.describeOpen(),
    connectionStory: (port, at) => balancer.story(port, at),
  };
}
