// The life of tasks: creates a task around a running upstream call, mirrors the call's progress,
// questions and outcome into the store, and serves tasks/get, tasks/update and tasks/cancel for
// the task's owner only. For anyone else a task does not exist (same -32602 as an unknown id).
// With several instances, only the holder of a task's upstream call writes its record: answers
// and cancels reaching another instance are sent to the holder (HolderLink), and a task whose
// holder is gone (InstanceLeases) is failed by whoever looks at it.

import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { Config } from "../config/schema.js";
import { ownerHashOf, type Identity } from "../auth/identity.js";
import { TERMINAL_STATUSES, type JsonObject, type JsonRpcErrorObject } from "../protocol/wire.js";
import type { CallOutcome, Question, UpstreamCall } from "../calls/upstreamCall.js";
import { mintInputKey } from "../calls/inputKeys.js";
import { checkInputResponse } from "../questions/inputResponseCheck.js";
import { modernResult } from "../calls/upstreamResult.js";
import { invalidParams, RpcError } from "../protocol/errors.js";
import type { HolderCommand, HolderLink, HolderReply } from "../cluster/holderLink.js";
import type { InstanceLeases } from "../cluster/instanceLeases.js";
import type { TaskBus } from "./taskBus.js";
import type { TaskRecord } from "./taskRecord.js";
import type { TaskStore } from "./taskStore.js";

const MAX_TIMER_MS = 2_147_483_647;

/** 160 random bits, base64url: unguessable and header-safe. */
export const newTaskId = () => randomBytes(20).toString("base64url");

interface HeldTask {
  call: UpstreamCall;
  questions: Map<string, Question>;
  /** Serialises this task's writes in the order the call produced them. */
  chain: Promise<unknown>;
  expiry?: NodeJS.Timeout;
}

const notFound = () => invalidParams("Task not found (unknown, expired, or not yours)");

export class TaskManager {
  private readonly held = new Map<string, HeldTask>();

  constructor(
    private readonly store: TaskStore,
    private readonly bus: TaskBus,
    private readonly settings: Config["tasks"],
    private readonly instanceId: string,
    private readonly log: Logger,
    private readonly cluster: { leases: InstanceLeases; link: HolderLink },
  ) {}

  /** Starts answering other instances' commands for the tasks this instance holds. */
  async serveHolderCommands(): Promise<void> {
    await this.cluster.link.serve((command) => this.onCommand(command));
  }

  /** Creates the task record (durably, before returning) and binds the running call to it. */
  async start(call: UpstreamCall, owner: Identity, tool: string): Promise<TaskRecord> {
    const now = new Date().toISOString();
    const record: TaskRecord = {
      taskId: newTaskId(),
      status: "working",
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: this.settings.ttlMs,
      pollIntervalMs: this.settings.pollIntervalMs,
      ownerHash: ownerHashOf(owner),
      tool,
      usedKeys: [],
      holder: this.instanceId,
      version: 0,
    };
    await this.store.create(record);
    const held: HeldTask = { call, questions: new Map(), chain: Promise.resolve() };
    this.held.set(record.taskId, held);
    this.log.info({ event: "task.created", taskId: record.taskId, tool }, "task created");

    const enqueue = (step: () => Promise<unknown>) => {
      held.chain = held.chain.then(step).catch((error: unknown) =>
        this.log.error({ event: "task.write.failed", taskId: record.taskId, err: String(error) }, "task write failed"),
      );
    };
    call.watch({
      progress: (p) => enqueue(() => this.onProgress(record.taskId, p.message ?? progressText(p))),
      question: (q) => enqueue(() => this.onQuestion(record.taskId, held, q)),
    });
    void call.outcome.then((outcome) => enqueue(() => this.onOutcome(record.taskId, outcome)));
    // Past setTimeout's ceiling (~24.8 days) Node would fire at once; such a task just runs on.
    if (record.ttlMs !== null && record.ttlMs <= MAX_TIMER_MS) {
      held.expiry = setTimeout(() => call.abort("task expired"), record.ttlMs).unref();
    }
    return record;
  }

  async get(owner: Identity, taskId: string): Promise<TaskRecord> {
    const record = await this.owned(ownerHashOf(owner), taskId);
    return (await this.failIfHolderGone(record)) ?? record;
  }

  /** For followers (listen streams): fails the task now if its holder instance is gone. */
  async checkHolder(taskId: string): Promise<void> {
    const record = await this.store.get(taskId);
    if (record) await this.failIfHolderGone(record);
  }

  /** The failed record when the task was running on an instance that is gone; else undefined. */
  private async failIfHolderGone(record: TaskRecord): Promise<TaskRecord | undefined> {
    if (TERMINAL_STATUSES.has(record.status) || record.holder === this.instanceId) return undefined;
    if (await this.cluster.leases.isAlive(record.holder)) return undefined;
    return this.failHolderGone(record.taskId);
  }

  /** Delivers answers; answered keys are gone from the store before this resolves. */
  async update(owner: Identity, taskId: string, responses: JsonObject): Promise<void> {
    const ownerHash = ownerHashOf(owner);
    const record = await this.owned(ownerHash, taskId);
    if (record.holder !== this.instanceId && !TERMINAL_STATUSES.has(record.status)) {
      return this.viaHolder(record, { kind: "update", taskId, ownerHash, responses });
    }
    await this.updateHeld(taskId, responses);
  }

  private async updateHeld(taskId: string, responses: JsonObject): Promise<void> {
    const held = this.held.get(taskId);
    const answered: Array<[string, Question, JsonObject]> = [];
    let problem: string | undefined;
    const updated = await this.store.update(taskId, (current) => {
      if (current.status !== "input_required" || !current.inputRequests) return undefined;
      const remaining = { ...current.inputRequests };
      for (const [key, answer] of Object.entries(responses)) {
        const request = remaining[key];
        const question = held?.questions.get(key);
        if (!request || !question) continue; // not outstanding: ignored, still acknowledged
        const wrong = checkInputResponse(request, answer);
        if (wrong) {
          problem = `inputResponses.${key}: ${wrong}`;
          return undefined;
        }
        delete remaining[key];
        answered.push([key, question, answer as JsonObject]);
      }
      if (answered.length === 0) return undefined;
      const open = Object.keys(remaining).length > 0;
      const next: TaskRecord = { ...current, status: open ? "input_required" : "working", lastUpdatedAt: new Date().toISOString() };
      if (open) next.inputRequests = remaining;
      else delete next.inputRequests;
      return next;
    });
    if (problem) throw invalidParams(problem + " (the question stays open; send a corrected answer)");
    for (const [key, question, answer] of answered) {
      held?.questions.delete(key);
      question.answer(answer);
    }
    if (answered.length > 0 && updated) {
      this.log.info({ event: "task.answered", taskId, keys: answered.length, status: updated.status }, "task input delivered");
      this.bus.publish(updated);
    }
  }

  /** Always acknowledges for the owner; a running task stops upstream and ends cancelled. */
  async cancel(owner: Identity, taskId: string): Promise<void> {
    const ownerHash = ownerHashOf(owner);
    const record = await this.owned(ownerHash, taskId);
    if (TERMINAL_STATUSES.has(record.status)) return;
    if (record.holder !== this.instanceId) return this.viaHolder(record, { kind: "cancel", taskId, ownerHash });
    await this.cancelHeld(taskId);
  }

  private async cancelHeld(taskId: string): Promise<void> {
    const updated = await this.write(taskId, (current) =>
      stripInputs({ ...current, status: "cancelled", statusMessage: "Cancelled by the client", lastUpdatedAt: new Date().toISOString() }),
    );
    this.release(taskId)?.call.abort("task cancelled by the client");
    if (updated) this.log.info({ event: "task.cancelled", taskId }, "task cancelled");
  }

  /** Tasks left running by a previous process can never finish: fail them, clearly. */
  async failOrphans(): Promise<number> {
    const orphans = (await this.store.listUnfinished()).filter((r) => !this.held.has(r.taskId));
    for (const orphan of orphans) {
      await this.write(orphan.taskId, (current) => failed(current, "taskgate restarted while holding this task; its upstream call was lost"));
      this.log.warn({ event: "task.orphaned", taskId: orphan.taskId }, "task failed: gateway restarted while holding it");
    }
    return orphans.length;
  }

  heldCount(): number {
    return this.held.size;
  }

  /** Shutdown: held calls die with the process, so their tasks fail now, saying why. */
  async shutdown(): Promise<void> {
    await Promise.all(
      [...this.held.keys()].map(async (taskId) => {
        this.release(taskId)?.call.abort("gateway shutting down");
        await this.write(taskId, (current) => failed(current, "taskgate shut down while holding this task; its upstream call was stopped"));
      }),
    );
  }

  private async owned(ownerHash: string, taskId: string): Promise<TaskRecord> {
    const record = await this.store.get(taskId);
    if (!record || record.ownerHash !== ownerHash) throw notFound();
    return record;
  }

  /** Another instance holds the call: it delivers the command. If it is gone, the task fails. */
  private async viaHolder(record: TaskRecord, command: HolderCommand): Promise<void> {
    const reply = await this.cluster.link.send(record.holder, command);
    if (!reply) {
      await this.failHolderGone(record.taskId);
      return;
    }
    if (!reply.ok) throw new RpcError(reply.error.code, reply.error.message, reply.error.data);
  }

  /** A command from another instance for a task this one holds (owner checked again here). */
  private async onCommand(command: HolderCommand): Promise<HolderReply> {
    try {
      const record = await this.owned(command.ownerHash, command.taskId);
      if (record.holder !== this.instanceId) throw notFound();
      if (command.kind === "update") await this.updateHeld(command.taskId, command.responses);
      else await this.cancelHeld(command.taskId);
      return { ok: true };
    } catch (error) {
      const rpc = error instanceof RpcError ? error : new RpcError(-32603, String(error));
      return { ok: false, error: rpc.toJSON() };
    }
  }

  /** The instance holding this task is gone: its upstream call went with it. */
  private async failHolderGone(taskId: string): Promise<TaskRecord | undefined> {
    const updated = await this.write(taskId, (current) =>
      failed(current, "the taskgate instance holding this task is gone; its upstream call was lost"),
    );
    if (updated) this.log.warn({ event: "task.orphaned", taskId, why: "holder gone" }, "task failed: its holder instance is gone");
    return updated;
  }

  private release(taskId: string): HeldTask | undefined {
    const held = this.held.get(taskId);
    this.held.delete(taskId);
    if (held?.expiry) clearTimeout(held.expiry);
    return held;
  }

  /** Changes a task that is not yet terminal and announces it; the new record, or undefined if nothing changed. */
  private async write(taskId: string, mutate: (current: TaskRecord) => TaskRecord | undefined): Promise<TaskRecord | undefined> {
    let changed = false;
    const updated = await this.store.update(taskId, (current) => {
      const next = TERMINAL_STATUSES.has(current.status) ? undefined : mutate(current);
      changed = next !== undefined;
      return next;
    });
    if (!updated || !changed) return undefined;
    this.bus.publish(updated);
    return updated;
  }

  private async onProgress(taskId: string, statusMessage: string): Promise<void> {
    await this.write(taskId, (current) => ({ ...current, statusMessage, lastUpdatedAt: new Date().toISOString() }));
  }

  private async onQuestion(taskId: string, held: HeldTask, question: Question): Promise<void> {
    if (question.settled) return;
    let key = "";
    await this.write(taskId, (current) => {
      key = mintInputKey(question.request, new Set(current.usedKeys), this.settings.inputKeys[current.tool]);
      // Registered in the same step that publishes the key, so an answer can never find the
      // key in the store without its question here.
      held.questions.set(key, question);
      return {
        ...current,
        status: "input_required",
        inputRequests: { ...current.inputRequests, [key]: question.request },
        usedKeys: [...current.usedKeys, key],
        lastUpdatedAt: new Date().toISOString(),
      };
    });
    if (!key) return;
    this.log.info({ event: "task.input_required", taskId, key, kind: question.request.method }, "task waits for input");
    question.withdrawn.addEventListener("abort", () => {
      if (held.questions.get(key) !== question) return;
      held.questions.delete(key);
      held.chain = held.chain.then(() =>
        this.write(taskId, (current) => {
          if (!current.inputRequests?.[key]) return undefined;
          const { [key]: _gone, ...rest } = current.inputRequests;
          const open = Object.keys(rest).length > 0;
          return open
            ? { ...current, inputRequests: rest, lastUpdatedAt: new Date().toISOString() }
            : stripInputs({ ...current, status: "working", lastUpdatedAt: new Date().toISOString() });
        }),
      );
    });
  }

  private async onOutcome(taskId: string, outcome: CallOutcome): Promise<void> {
    // Not held any more: cancelled or shut down, and already written as such.
    if (!this.release(taskId)) return;
    const now = new Date().toISOString();
    const written = await this.write(taskId, (current) =>
      outcome.kind === "aborted"
        ? stripInputs({ ...current, status: "cancelled", statusMessage: `Stopped: ${outcome.reason}`, lastUpdatedAt: now })
        : outcome.kind === "result"
          ? stripInputs({ ...current, status: "completed", result: modernResult(outcome.result), lastUpdatedAt: now })
          : failed(current, outcome.error.message, outcome.error),
    );
    // Nothing written: it was already terminal; say what it is.
    const final = written ?? (await this.store.get(taskId));
    this.log.info({ event: "task.finished", taskId, status: final?.status, outcome: outcome.kind }, "task finished");
  }
}

function stripInputs(record: TaskRecord): TaskRecord {
  const { inputRequests: _gone, ...rest } = record;
  return rest;
}

/** The task ended by a JSON-RPC error (by default -32603 with `message`), which it carries. */
function failed(current: TaskRecord, message: string, error: JsonRpcErrorObject = { code: -32603, message }): TaskRecord {
  return stripInputs({ ...current, status: "failed", statusMessage: message, error, lastUpdatedAt: new Date().toISOString() });
}

const progressText = (p: { progress: number; total?: number }) =>
  p.total !== undefined ? `Progress ${p.progress}/${p.total}` : `Progress ${p.progress}`;
