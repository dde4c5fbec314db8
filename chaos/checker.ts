// The referee: reads the run's history (and the state measured after it) and checks each promise
// taskgate makes, counting what it checked and listing every violation with the evidence. Pure:
// the same history always gives the same verdict (a saved history can be checked again).

import { LIMITS } from "./cluster.js";
import type { Entry, FaultEntry, Notification, Operation, UpstreamEvent } from "./history.js";
import { CLIENT_LIMIT_MS, type HandedOut, TERMINAL } from "./users.js";

export const PROMISES = {
  found: "every task handed out is found by its owner afterwards, terminal (none lost, none left hanging)",
  monotonic: "no status goes back from terminal; a result is the one its upstream produced",
  answers: "each answer reaches the upstream at most once, only the accepted one; a refused answer leaves the question open",
  isolation: "no identity sees another's task, answer or notification",
  cancel: "a cancel acknowledged before completion ends cancelled or completed",
  answered: "every request got an answer within its limits, with a named reason when it failed",
  afterwards: "afterwards nothing is left running; memory, connections and processes are within bounds",
} as const;
export type PromiseName = keyof typeof PROMISES;

export interface EndState {
  /** Per instance: /healthz numbers (undefined: it did not answer) and resident memory. */
  instances: { name: string; health: Record<string, unknown> | undefined; rss: number }[];
  /** server-everything processes whose taskgate is gone, and the most any instance runs. */
  orphanStdio: number[];
  stdioPerInstance: Record<string, number>;
  identities: number;
  /** Connections the balancer still has open after every user stopped, described. */
  balancerSockets: string[];
  /** What the balancer knows of the last connection from a client port (see Balancer.story). */
  connectionStory?: (port: number, at: number) => string | undefined;
}

export interface Verdict {
  checked: Record<PromiseName, number>;
  violations: Record<PromiseName, string[]>;
}

const RSS_LIMIT = 512 * 1024 * 1024;

export function check(entries: Entry[], tasks: HandedOut[], end: EndState): Verdict {
  const verdict: Verdict = {
    checked: Object.fromEntries(Object.keys(PROMISES).map((k) => [k, 0])) as Record<PromiseName, number>,
    violations: Object.fromEntries(Object.keys(PROMISES).map((k) => [k, []])) as unknown as Record<PromiseName, string[]>,
  };
  const ops = entries.filter((e): e is Operation => e.kind === "op");
  const faults = entries.filter((e): e is FaultEntry => e.kind === "fault");
  const notes = entries.filter((e): e is Notification => e.kind === "notification");
  const upstream = entries.filter((e): e is UpstreamEvent => e.kind === "upstream");
  const byTask = new Map<string, Operation[]>();
  for (const op of ops) if (op.taskId) byTask.set(op.taskId, [...(byTask.get(op.taskId) ?? []), op]);
  const arrivals = new Map<string, number[]>();
  for (const e of entries) if (e.kind === "served") arrivals.set(e.taskId, [...(arrivals.get(e.taskId) ?? []), e.arrived]);
  const fail = (promise: PromiseName, text: string) => verdict.violations[promise].push(text);
  const count = (promise: PromiseName, n = 1) => (verdict.checked[promise] += n);

  for (const task of tasks) {
    const seen = byTask.get(task.taskId) ?? [];
    checkFound(task, seen, count, fail);
    checkMonotonic(task, seen, notes, count, fail);
    if (task.tool === "build_report") checkAnswers(task, seen, faults, count, fail);
    checkCancels(task, seen, arrivals.get(task.taskId) ?? [], count, fail);
  }
  checkUpstreamDeliveries(upstream, count, fail);
  checkIsolation(ops, notes, tasks, count, fail);
  checkInline(ops, count, fail);
  checkAnswered(ops, faults, count, fail, end.connectionStory);
  // A task created while its answer was lost (a cut connection) was never handed out: nobody knows
  // its id, and a call waiting for an answer runs until the task's ttl. Those may still be held.
  const unanswered = ops.filter((o) => o.op === "create" && (o.outcome === "transport" || o.outcome === "timeout")).length;
  checkAfterwards(end, upstream, faults, unanswered, count, fail);
  return verdict;
}

type Count = (promise: PromiseName, n?: number) => void;
type Fail = (promise: PromiseName, text: string) => void;

const statusOf = (op: Operation) => (op.outcome === "ok" ? (op.result?.status as string | undefined) : undefined);

function checkFound(task: HandedOut, seen: Operation[], count: Count, fail: Fail): void {
  count("found");
  const final = seen.filter((o) => o.op === "final").at(-1);
  if (!final) return fail("found", `${task.taskId} (${task.tool}): never looked up at the end`);
  if (final.outcome === "error")
    return fail("found", `${task.taskId} (${task.tool}): its owner got ${final.error?.code} ${final.error?.message}`);
  const status = statusOf(final);
  if (!status || !TERMINAL.has(status)) fail("found", `${task.taskId} (${task.tool}): still ${status ?? final.failure} after the drain`);
}

function checkMonotonic(task: HandedOut, seen: Operation[], notes: Notification[], count: Count, fail: Fail): void {
  const observed = seen.filter((o) => statusOf(o) !== undefined);
  const terminal = observed.filter((o) => TERMINAL.has(statusOf(o)!));
  if (terminal.length === 0) return;
  count("monotonic");
  const first = terminal.reduce((a, b) => (a.end <= b.end ? a : b));
  const endStatus = statusOf(first)!;
  for (const later of observed) {
    if (later.start > first.end && statusOf(later) !== endStatus) {
      fail(
        "monotonic",
        `${task.taskId}: ${endStatus} (seen by #${first.seq} at ${first.end}) then ${statusOf(later)} (#${later.seq}, started ${later.start})`,
      );
    }
  }
  const texts = new Set(terminal.filter((o) => statusOf(o) === "completed").map((o) => String(o.result?.text ?? "")));
  if (texts.size > 1) fail("monotonic", `${task.taskId}: completed with different results: ${[...texts].join(" | ")}`);
  const stream = notes.filter((n) => n.taskId === task.taskId);
  const ended = stream.findIndex((n) => TERMINAL.has(n.status));
  if (ended >= 0 && stream.slice(ended + 1).some((n) => n.status !== stream[ended]!.status)) {
    fail("monotonic", `${task.taskId}: a listen stream got ${stream.map((n) => n.status).join(" → ")}`);
  }
  if (endStatus === "completed") checkResult(task, [...texts][0] ?? "", fail);
}

function checkResult(task: HandedOut, text: string, fail: Fail): void {
  const args = task.args as { duration?: number };
  const expected =
    task.tool === "slow_echo"
      ? text === task.token
      : task.tool === "build_report"
        ? text.startsWith(`Report for ${task.token}: `)
        : text.includes(`Duration: ${args?.duration} seconds`);
  if (!expected)
    fail("monotonic", `${task.taskId} (${task.tool} ${task.token}): result "${text.slice(0, 120)}" is not what the upstream makes of it`);
}

/** A task's operations in order, and the faults on meanwhile, for a violation's evidence (times from its first sending). */
function storyOf(seen: Operation[], faults: FaultEntry[]): string {
  const from = Math.min(...seen.map((o) => o.start));
  const to = Math.max(...seen.map((o) => o.end));
  const at = (ms: number) => `+${ms - from}`;
  const ops = seen.map((o) => {
    const got = o.outcome === "ok" ? (statusOf(o) ?? "ok") : o.outcome === "error" ? `error ${o.error?.code}` : o.outcome;
    return `#${o.seq} ${o.op} ${at(o.start)}..${at(o.end)} ms: ${got}`;
  });
  const on = faults.filter((f) => f.start <= to && f.end >= from).map((f) => `${f.fault} ${f.target} ${at(f.start)}..${at(f.end)} ms`);
  return `[${ops.join("; ")}]${on.length > 0 ? ` faults on: [${on.join("; ")}]` : ""}`;
}

function checkAnswers(task: HandedOut, seen: Operation[], faults: FaultEntry[], count: Count, fail: Fail): void {
  const updates = seen.filter((o) => o.method === "tasks/update" && o.op !== "probe-foreign");
  count("answers", updates.length);
  // Two answers sent at once are both acknowledged (the spec: a key no longer open is ignored);
  // the upstream must still get exactly one of them (checkUpstreamDeliveries), seen in the result.
  const accepted = updates.filter((o) => o.outcome === "ok");
  const last = seen.filter((o) => o.op === "final").at(-1)?.result;
  const endedAt = last?.lastUpdatedAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(String(last.lastUpdatedAt));
  for (const wrong of updates.filter((o) => o.op === "answer-wrong")) {
    // Acknowledged after the task had ended (e.g. failed as its holder was gone): a key no longer open is ignored.
    if (wrong.outcome === "ok" && endedAt > wrong.end) {
      const ended = `${String(last?.status)} ${endedAt - wrong.end} ms after it: ${String(last?.statusMessage)}`;
      fail("answers", `${task.taskId}: the invalid answer #${wrong.seq} was accepted (the task ended ${ended}) ${storyOf(seen, faults)}`);
    }
    if (wrong.outcome !== "error") continue;
    const after = seen.find((o) => o.op === "poll-after-refusal" && o.start >= wrong.end && o.outcome === "ok");
    const status = after && statusOf(after);
    if (status === "working") {
      const refusal = `${wrong.error?.code} ${wrong.error?.message}`;
      fail(
        "answers",
        `${task.taskId}: after the refused answer #${wrong.seq} (${refusal}) the question was gone (#${after!.seq} working: ${String(after!.result?.statusMessage)}) ${storyOf(seen, faults)}`,
      );
    }
  }
  const done = seen.find((o) => o.outcome === "ok" && statusOf(o) === "completed");
  if (!done) return;
  const text = String(done.result?.text ?? "");
  const charts = text.includes("charts included");
  const chartsOf = (o: Operation) => (o.sent as { content?: { charts?: unknown } }).content?.charts === true;
  // An answer whose reply was lost (a cut connection) may have been delivered as well, and so may one its silent
  // holder was not taken for gone over (503 holder_unresponsive: it finds the answer when it runs again).
  const mayHaveArrived = (o: Operation) =>
    o.outcome === "transport" || o.outcome === "timeout" || (o.outcome === "error" && o.error?.reason === "holder_unresponsive");
  const candidates = [...accepted, ...updates.filter(mayHaveArrived)];
  if (candidates.length === 0) {
    if (!/cancelled|unavailable|no answer|default/.test(text) && charts)
      fail("answers", `${task.taskId}: completed "${text}" with no answer sent`);
    return;
  }
  if (!candidates.some((o) => chartsOf(o) === charts)) {
    fail("answers", `${task.taskId}: completed "${text}" but the accepted answer was ${JSON.stringify(candidates.map((o) => o.sent))}`);
  }
}

function checkUpstreamDeliveries(upstream: UpstreamEvent[], count: Count, fail: Fail): void {
  const perCall = new Map<string, number>();
  for (const e of upstream.filter((u) => u.event === "elicitation-answered")) {
    const key = `${e.payload.sessionId}/${e.payload.requestId}`;
    perCall.set(key, (perCall.get(key) ?? 0) + 1);
  }
  count("answers", perCall.size);
  for (const [key, n] of perCall) if (n > 1) fail("answers", `upstream call ${key} received ${n} answers to its one question`);
  for (const e of upstream.filter((u) => u.event === "elicitation-answered" && u.payload.action === "accept")) {
    const charts = (e.payload.content as { charts?: unknown } | undefined)?.charts;
    if (typeof charts !== "boolean")
      fail(
        "answers",
        `upstream call ${e.payload.sessionId}/${e.payload.requestId} received a refused answer: ${JSON.stringify(e.payload.content)}`,
      );
  }
}

/** `arrivals`: when the task's tasks/cancel requests reached an instance (their request log lines). */
function checkCancels(task: HandedOut, seen: Operation[], arrivals: number[], count: Count, fail: Fail): void {
  const last = seen.filter((o) => o.op === "final").at(-1);
  const final = last && statusOf(last);
  // When the record reached its terminal status (lastUpdatedAt: same machine, same clock).
  const endedAt = last?.result?.lastUpdatedAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(String(last.result.lastUpdatedAt));
  for (const cancel of seen.filter((o) => o.method === "tasks/cancel" && o.op === "cancel" && o.outcome === "ok")) {
    const before = seen.find((o) => o.end < cancel.start && TERMINAL.has(statusOf(o) ?? ""));
    // Ended before the cancel was recorded (decision 0028): it stays as it ended. The recording follows
    // the request's arrival at an instance (one store read later), the earliest seen while it ran; else its sending.
    const arrived = Math.min(...arrivals.filter((at) => at >= cancel.start - 5 && at <= cancel.end), cancel.end);
    const received = arrivals.length > 0 && arrived < cancel.end ? arrived : cancel.start;
    if (before || endedAt < received) continue;
    count("cancel");
    if (final !== "cancelled" && final !== "completed") {
      const said = last?.result?.errorMessage ?? last?.result?.statusMessage;
      const why = said === undefined ? "" : ` (${String(said)})`;
      fail("cancel", `${task.taskId} (${task.tool}): cancel #${cancel.seq} acknowledged, ended ${final}${why}`);
    }
  }
}

function checkIsolation(ops: Operation[], notes: Notification[], tasks: HandedOut[], count: Count, fail: Fail): void {
  const owner = new Map(tasks.map((t) => [t.taskId, t.identity]));
  for (const op of ops) {
    if (op.outcome !== "ok" && op.outcome !== "error") continue;
    count("isolation");
    if (op.op === "probe-foreign" && op.outcome === "ok") {
      fail("isolation", `${op.identity} ${op.method} on ${owner.get(op.taskId!)}'s task ${op.taskId} succeeded (#${op.seq})`);
    }
    const taskId = op.result?.taskId;
    if (typeof taskId === "string" && owner.has(taskId) && owner.get(taskId) !== op.identity) {
      fail("isolation", `${op.identity} was shown ${owner.get(taskId)}'s task ${taskId} (#${op.seq})`);
    }
    for (const other of String(op.result?.text ?? "").match(/\bid\d+(?=\.)/g) ?? []) {
      if (other !== op.identity) fail("isolation", `${op.identity} got a result made for ${other} (#${op.seq})`);
    }
  }
  for (const note of notes) {
    count("isolation");
    if (owner.has(note.taskId) && owner.get(note.taskId) !== note.identity)
      fail("isolation", `${note.identity} was notified of ${note.taskId}`);
  }
}

function checkInline(ops: Operation[], count: Count, fail: Fail): void {
  for (const op of ops.filter((o) => o.op === "inline" && o.outcome === "ok")) {
    count("monotonic");
    const text = String(op.result?.text ?? "");
    const want = op.backend === "legacy" ? `Hello, ${op.token}!` : `Echo: ${op.token}`;
    if (text !== want) fail("monotonic", `inline call #${op.seq} answered "${text.slice(0, 120)}", the upstream makes "${want}"`);
  }
}

function checkAnswered(
  ops: Operation[],
  faults: FaultEntry[],
  count: Count,
  fail: Fail,
  story?: (port: number, at: number) => string | undefined,
): void {
  for (const op of ops) {
    count("answered");
    const overlapping = faults.filter((f) => f.start <= op.end && f.end + 1_000 >= op.start);
    const faultMs = overlapping.reduce((sum, f) => sum + (f.end - f.start), 0);
    if (op.outcome === "timeout") fail("answered", `#${op.seq} ${op.method} (${op.op}): ${op.failure}`);
    else if (op.outcome === "transport" && overlapping.length === 0) {
      const port = /\[connection :(\d+),/.exec(op.failure ?? "")?.[1];
      const known = port ? story?.(Number(port), op.end) : undefined;
      fail("answered", `#${op.seq} ${op.method}: ${op.failure}, with no fault on${known ? `; the balancer: ${known}` : ""}`);
    } else if (op.end - op.start > LIMITS.httpRequestTimeoutMs + faultMs + 2_000) {
      fail(
        "answered",
        `#${op.seq} ${op.method}: answered after ${op.end - op.start} ms (limit ${LIMITS.httpRequestTimeoutMs} ms + ${faultMs} ms of faults)`,
      );
    }
    if (op.outcome !== "error" || !op.error) continue;
    const serverSide = (op.httpStatus ?? 200) >= 500 || (op.error.code <= -32000 && op.error.code >= -32099) || op.error.code === -32603;
    if (op.error.message === "" || (serverSide && op.error.reason === undefined)) {
      fail("answered", `#${op.seq} ${op.method}: HTTP ${op.httpStatus} error ${op.error.code} "${op.error.message}" names no reason`);
    }
  }
  void CLIENT_LIMIT_MS;
}

function checkAfterwards(
  end: EndState,
  upstream: UpstreamEvent[],
  faults: FaultEntry[],
  unanswered: number,
  count: Count,
  fail: Fail,
): void {
  let held = 0;
  for (const instance of end.instances) {
    count("afterwards");
    const h = instance.health;
    if (!h) fail("afterwards", `instance ${instance.name} did not answer /healthz`);
    else
      for (const key of ["heldCalls", "listenStreams"]) if (h[key] !== 0) fail("afterwards", `instance ${instance.name}: ${key} ${h[key]}`);
    held += Number(h?.heldTasks ?? 0);
    if (instance.rss > RSS_LIMIT) fail("afterwards", `instance ${instance.name}: ${Math.round(instance.rss / 2 ** 20)} MB resident`);
  }
  count("afterwards");
  if (end.orphanStdio.length > 0)
    fail("afterwards", `server-everything processes left without their taskgate: pids ${end.orphanStdio.join(", ")}`);
  for (const [name, n] of Object.entries(end.stdioPerInstance)) {
    count("afterwards");
    // One process per identity, plus the one that answers the instance's readiness checks.
    if (n > end.identities + 1)
      fail("afterwards", `instance ${name} runs ${n} server-everything processes for ${end.identities} identities`);
  }
  count("afterwards");
  if (end.balancerSockets.length > 0) {
    fail(
      "afterwards",
      `${end.balancerSockets.length} connections still open through the balancer: ${end.balancerSockets.slice(0, 4).join("; ")}`,
    );
  }
  const lastKill = Math.max(0, ...faults.filter((f) => f.fault === "upstream-restart").map((f) => f.start));
  const open = new Map<string, UpstreamEvent>();
  for (const e of upstream) {
    const key = `${e.payload.sessionId}/${e.payload.requestId}`;
    if (e.event === "tool-started") open.set(key, e);
    if (e.event === "tool-finished") open.delete(key);
  }
  const running = [...open.values()].filter((e) => e.at > lastKill);
  count("afterwards", 2);
  if (held > unanswered) fail("afterwards", `${held} tasks still held, but only ${unanswered} creations lost their answer`);
  if (running.length > unanswered) {
    const tools = running.slice(0, 3).map((e) => e.payload.tool);
    fail("afterwards", `${running.length} upstream calls still running (${unanswered} creations lost their answer): ${tools.join(", ")}`);
  }
}
