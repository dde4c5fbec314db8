// The simulated users. Each runs flows until the run's end, every request through the balancer
// (so consecutive requests of one flow reach different instances): a build_report task on the
// legacy backend whose question it answers — plainly, wrongly first, twice at once with two
// different answers, by declining, or not at all (cancelling) — slow_echo tasks, inline greet and
// server-everything echo calls, server-everything long-running tasks, cancels, listen streams kept
// open across a flow (and reopened), and probes of another identity's task ids. Every request and
// its answer goes to the history; the tasks handed out go to the registry the final check reads.

import { call, type Json, listen, type Reply, TASKS_CAPS } from "./client.js";
import type { History, Operation } from "./history.js";
import type { Rng } from "./rng.js";

/** The client-side limit of every request: the longest configured limit plus the longest fault. */
export const CLIENT_LIMIT_MS = 45_000;
const FLOW_LIMIT_MS = 60_000;

export interface HandedOut {
  taskId: string;
  identity: string;
  backend: string;
  tool: string;
  token: string;
  /** The call's arguments. */
  args: Json;
}

export class Registry {
  readonly tasks = new Map<string, HandedOut>();
  add(task: HandedOut): void {
    this.tasks.set(task.taskId, task);
  }
  /** A task id of an identity other than `identity`, if any was handed out. */
  foreign(identity: string, rng: Rng): string | undefined {
    const others = [...this.tasks.values()].filter((t) => t.identity !== identity);
    return others.length === 0 ? undefined : rng.pick(others).taskId;
  }
}

export interface WorkloadContext {
  baseUrl: string;
  history: History;
  registry: Registry;
  until: number;
}

type Flow = "report" | "echoTask" | "greet" | "everythingEcho" | "longRunning" | "probe";
const FLOWS: Record<Flow, number> = { report: 30, echoTask: 20, greet: 12, everythingEcho: 12, longRunning: 10, probe: 8 };

export class User {
  private count = 0;
  private stream: { close(): void } | undefined;

  constructor(
    readonly index: number,
    readonly identity: string,
    private readonly rng: Rng,
    private readonly ctx: WorkloadContext,
  ) {}

  async run(): Promise<void> {
    await pause(this.rng.int(0, 1_000));
    while (Date.now() < this.ctx.until) {
      const flow = this.rng.weighted(FLOWS);
      await this[flow]();
      await pause(this.rng.int(50, 400));
    }
    this.stream?.close();
  }

  private url(backend: string): string {
    return `${this.ctx.baseUrl}/mcp/${backend}`;
  }

  private token(): string {
    return `${this.identity}.${this.index}.${++this.count}`;
  }

  /** Sends one request and records it with its answer. */
  async send(op: string, backend: string, method: string, params: Json, extra: Partial<Operation> = {}, caps = TASKS_CAPS): Promise<Reply> {
    const start = Date.now();
    const reply = await call(this.url(backend), method, params, this.identity, caps, CLIENT_LIMIT_MS);
    const entry: Operation = {
      kind: "op",
      seq: this.ctx.history.nextSeq(),
      user: this.index,
      identity: this.identity,
      op,
      method,
      backend,
      start,
      end: Date.now(),
      outcome: reply.outcome,
      ...extra,
    };
    if (reply.outcome === "ok") Object.assign(entry, { httpStatus: reply.httpStatus, result: summary(reply.result) });
    else if (reply.outcome === "error") Object.assign(entry, { httpStatus: reply.httpStatus, error: reply.error });
    else entry.failure = reply.failure;
    this.ctx.history.add(entry);
    return reply;
  }

  /** tools/call as a task; the task id once handed out. */
  private async create(backend: string, tool: string, args: Json, token: string): Promise<string | undefined> {
    const reply = await this.send("create", backend, "tools/call", { name: tool, arguments: args }, { token, sent: args });
    if (reply.outcome !== "ok" || typeof reply.result.taskId !== "string") return undefined;
    const taskId = reply.result.taskId;
    this.ctx.registry.add({ taskId, identity: this.identity, backend, tool, token, args });
    if (this.rng.chance(0.35)) this.follow(backend, taskId);
    return taskId;
  }

  /** Keeps a listen stream open on this task (replacing the user's previous one: a reconnect). */
  private follow(backend: string, taskId: string): void {
    this.stream?.close();
    const { history } = this.ctx;
    this.stream = listen(this.url(backend), [taskId], this.identity, (params) =>
      history.add({
        kind: "notification",
        identity: this.identity,
        at: Date.now(),
        taskId: String(params.taskId),
        status: String(params.status),
        ...(params.result !== undefined ? { result: textOf(params.result) } : {}),
      }),
    );
  }

  /** Polls until `stop(status)` or the flow's limit; the last task seen. */
  private async poll(backend: string, taskId: string, stop: (task: Json) => boolean, deadline: number): Promise<Json | undefined> {
    let last: Json | undefined;
    while (Date.now() < deadline) {
      const reply = await this.send("poll", backend, "tasks/get", { taskId }, { taskId });
      if (reply.outcome === "ok") {
        last = reply.result;
        if (stop(last) || TERMINAL.has(String(last.status))) return last;
      } else if (reply.outcome === "error" && reply.error.code === -32602) return undefined;
      await pause(this.rng.int(150, 600));
    }
    return last;
  }

  private async report(): Promise<void> {
    const token = this.token();
    const deadline = Date.now() + FLOW_LIMIT_MS;
    const taskId = await this.create("legacy", "build_report", { month: token }, token);
    if (!taskId) return;
    if (this.rng.chance(0.1)) {
      await pause(this.rng.int(0, 1_500));
      await this.send("cancel", "legacy", "tasks/cancel", { taskId }, { taskId });
    }
    const asking = await this.poll("legacy", taskId, (t) => t.status === "input_required", deadline);
    if (asking?.status === "input_required") await this.answer(taskId);
    await this.poll("legacy", taskId, () => false, deadline);
  }

  private async answer(taskId: string): Promise<void> {
    const update = (op: string, response: Json) =>
      this.send(op, "legacy", "tasks/update", { taskId, inputResponses: { charts: response } }, { taskId, sent: response });
    const accept = (charts: unknown) => ({ action: "accept", content: { charts } });
    const how = this.rng.weighted({ plain: 35, wrongFirst: 25, twice: 20, decline: 10, cancel: 10 });
    if (how === "wrongFirst") {
      const refused = await update("answer-wrong", accept("yes"));
      if (refused.outcome === "error") await this.send("poll-after-refusal", "legacy", "tasks/get", { taskId }, { taskId });
    }
    if (how === "twice") await Promise.all([update("answer-twice", accept(true)), update("answer-twice", accept(false))]);
    else if (how === "decline") await update("answer", { action: "decline" });
    else if (how === "cancel") await this.send("cancel", "legacy", "tasks/cancel", { taskId }, { taskId });
    else await update("answer", accept(this.rng.chance(0.5)));
  }

  private async echoTask(): Promise<void> {
    const token = this.token();
    const deadline = Date.now() + FLOW_LIMIT_MS;
    const taskId = await this.create("legacy", "slow_echo", { text: token, ms: this.rng.int(200, 4_000) }, token);
    if (!taskId) return;
    if (this.rng.chance(0.25)) {
      await pause(this.rng.int(0, 2_000));
      await this.send("cancel", "legacy", "tasks/cancel", { taskId }, { taskId });
    }
    await this.poll("legacy", taskId, () => false, deadline);
  }

  private async longRunning(): Promise<void> {
    const token = this.token();
    const deadline = Date.now() + FLOW_LIMIT_MS;
    const args = { duration: this.rng.int(1, 3), steps: 2 };
    const taskId = await this.create("everything", "trigger-long-running-operation", args, token);
    if (!taskId) return;
    if (this.rng.chance(0.15)) await this.send("cancel", "everything", "tasks/cancel", { taskId }, { taskId });
    await this.poll("everything", taskId, () => false, deadline);
  }

  private async greet(): Promise<void> {
    const token = this.token();
    await this.send("inline", "legacy", "tools/call", { name: "greet", arguments: { name: token } }, { token }, {});
  }

  private async everythingEcho(): Promise<void> {
    const token = this.token();
    await this.send("inline", "everything", "tools/call", { name: "echo", arguments: { message: token } }, { token }, {});
  }

  private async probe(): Promise<void> {
    const taskId = this.ctx.registry.foreign(this.identity, this.rng);
    if (!taskId) return;
    const backend = this.ctx.registry.tasks.get(taskId)?.backend ?? "legacy";
    const method = this.rng.pick(["tasks/get", "tasks/cancel", "tasks/update"]);
    const params = method === "tasks/update" ? { taskId, inputResponses: { charts: { action: "decline" } } } : { taskId };
    await this.send("probe-foreign", backend, method, params, { taskId });
  }
}

export const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** What the checker needs of a result: status, ids, the text of the content, open question keys. */
export function summary(result: Json): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of ["resultType", "taskId", "status", "statusMessage", "lastUpdatedAt"])
    if (result[key] !== undefined) out[key] = result[key];
  const text = textOf(result.result ?? result);
  if (text !== "") out.text = text;
  if (result.inputRequests) out.inputKeys = Object.keys(result.inputRequests as Json);
  if (result.error) out.errorMessage = String((result.error as Json).message ?? "");
  return out;
}

function textOf(result: unknown): string {
  const content = (result as { content?: { text?: string }[] } | undefined)?.content;
  return Array.isArray(content) ? content.map((c) => c.text ?? "").join(" ") : "";
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
