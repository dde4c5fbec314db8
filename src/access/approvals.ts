// Approvals a role must give: kept on the task record (so they live wherever tasks live, and any
// instance sharing the store can list and decide them), announced on the TaskBus (so the holder
// waiting on one hears the decision, from whichever instance it came). Contract:
// - wait(): the holder writes the pending approval into the task's record (statusMessage names
//   whose approval it waits for) and resolves with the decision; past expiresAt it writes
//   `expired` itself. A decision counts only for that approval id, caller and argument digest.
// - pendingFor(): the approvals an identity may decide now (its role matches, it is not the
//   caller, not decided, not expired). decide(): the first decision wins (compare-and-set on the
//   record); a second one, or one for an expired approval, is refused (conflict).
// An approval id is `<taskId>.<32 random bytes>`, so deciding one reads one record; listing pages
// through the store's working tasks (listAll, newest first), at most LIST_PAGES pages of
// LIST_LIMIT_MAX: fine for thousands of running tasks, not for millions.

import { randomBytes } from "node:crypto";
import type { Identity } from "../auth/identity.js";
import { ownerHashOf } from "../auth/identity.js";
import type { TaskBus } from "../cluster/taskBus.js";
import { TERMINAL_STATUSES } from "../protocol/wire.js";
import type { StoredApproval, TaskRecord } from "../tasks/taskRecord.js";
import type { TaskRecords } from "../tasks/taskRecords.js";
import { LIST_LIMIT_MAX, type TaskStore } from "../tasks/taskStore.js";
import { CallStopped } from "../upstream/upstreamFailure.js";
import { compileRole } from "./roles.js";

export type Decision = NonNullable<StoredApproval["decision"]>;

/** The task it belongs to, and 256 random bits: unguessable, and found with one read. */
export const newApprovalId = (taskId: string) => `${taskId}.${randomBytes(32).toString("base64url")}`;

const taskIdOf = (approvalId: string) => approvalId.slice(0, Math.max(0, approvalId.indexOf(".")));

/** Pages of working tasks a listing reads at most. */
const LIST_PAGES = 10;

export type DecideResult =
  | { ok: true; record: TaskRecord; approval: StoredApproval }
  | { ok: false; status: 404 | 409; code: string; message: string };

const now = () => new Date().toISOString();

export class Approvals {
  constructor(
    private readonly records: TaskRecords,
    private readonly bus: TaskBus<TaskRecord>,
    private readonly store: Pick<TaskStore, "listAll">,
  ) {}

  /** Stores `approval` on task `taskId` and waits for its decision (or its expiry, or `signal`). */
  wait(taskId: string, approval: StoredApproval, signal: AbortSignal): Promise<Decision> {
    return new Promise<Decision>((resolve, reject) => {
      let settled = false;
      const finish = (settle: () => void) => {
        if (settled) return;
        settled = true;
        unsubscribe();
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        settle();
      };
      const onAbort = () => finish(() => reject(new CallStopped(String(signal.reason))));
      const unsubscribe = this.bus.subscribe(taskId, (record) => {
        const decision = decisionFor(record, approval);
        if (decision) finish(() => resolve(decision));
      });
      const expire = () =>
        this.expire(taskId, approval).then(
          (decision) => finish(() => resolve(decision)),
          (error: unknown) => finish(() => reject(error)),
        );
      const timer = setTimeout(expire, Math.max(0, Date.parse(approval.expiresAt) - Date.now()));
      signal.addEventListener("abort", onAbort, { once: true });
      if (signal.aborted) onAbort();
      const waiting = `waiting for approval by ${approval.approverText} (approval ${approval.approvalId}, until ${approval.expiresAt})`;
      this.records
        .write(taskId, (current) => ({ ...current, approval, statusMessage: waiting, lastUpdatedAt: now() }))
        .catch((error: unknown) => finish(() => reject(error)));
    });
  }

  /** The approvals `identity` may decide now, oldest first. */
  async pendingFor(identity: Identity): Promise<TaskRecord[]> {
    const records: TaskRecord[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < LIST_PAGES; page++) {
      const listed = await this.store.listAll({ statuses: ["working"], limit: LIST_LIMIT_MAX, cursor });
      records.push(...listed.records);
      cursor = listed.nextCursor;
      if (!cursor) break;
    }
    return records
      .filter((record) => record.approval !== undefined && mayDecide(identity, record.approval))
      .sort((a, b) => (a.approval as StoredApproval).requestedAt.localeCompare((b.approval as StoredApproval).requestedAt));
  }

  /** Records `identity`'s decision on approval `approvalId`. */
  async decide(identity: Identity, by: string, approvalId: string, decision: "approve" | "deny", reason?: string): Promise<DecideResult> {
    const taskId = taskIdOf(approvalId);
    const found = taskId === "" ? undefined : await this.records.get(taskId);
    // Someone who may not decide it learns nothing of it: the same answer as for an id that never existed.
    if (!found?.approval || found.approval.approvalId !== approvalId || !inRole(identity, found.approval)) {
      return { ok: false, status: 404, code: "not_found", message: `no approval ${approvalId} waits for you` };
    }
    if (found.approval.decision) return conflict(found.approval);
    if (TERMINAL_STATUSES.has(found.status)) {
      return { ok: false, status: 409, code: "approval_decided", message: `approval ${approvalId} is over: its task is ${found.status}` };
    }
    if (Date.parse(found.approval.expiresAt) <= Date.now())
      return conflict({ ...found.approval, decision: { decision: "expired", at: now() } });
    const given: Decision = { decision, by, at: now(), ...(reason !== undefined ? { reason } : {}) };
    const written = await this.records.write(found.taskId, (current) =>
      current.approval?.approvalId === approvalId && !current.approval.decision
        ? { ...current, approval: { ...current.approval, decision: given }, lastUpdatedAt: now() }
        : undefined,
    );
    if (!written?.approval) {
      const again = await this.records.get(found.taskId);
      return conflict(again?.approval ?? { ...found.approval, decision: { decision: "expired", at: now() } });
    }
    return { ok: true, record: written, approval: written.approval };
  }

  /** Past expiresAt: `expired` unless a decision came first (then that one). */
  private async expire(taskId: string, approval: StoredApproval): Promise<Decision> {
    const expired: Decision = { decision: "expired", at: now() };
    await this.records.write(taskId, (current) =>
      current.approval?.approvalId === approval.approvalId && !current.approval.decision
        ? { ...current, approval: { ...current.approval, decision: expired }, lastUpdatedAt: now() }
        : undefined,
    );
    const record = await this.records.get(taskId);
    return (record && decisionFor(record, approval)) ?? expired;
  }
}

/** The decision on `approval` in `record`, if that record is still about the same call. */
function decisionFor(record: TaskRecord, approval: StoredApproval): Decision | undefined {
  const stored = record.approval;
  if (!stored || stored.approvalId !== approval.approvalId) return undefined;
  if (stored.argumentsDigest !== approval.argumentsDigest || stored.callerHash !== approval.callerHash) return undefined;
  return stored.decision;
}

/** In the approver role, and not the caller itself: an approval is a second person's. */
export function inRole(identity: Identity, approval: StoredApproval): boolean {
  return ownerHashOf(identity) !== approval.callerHash && compileRole(approval.approver).matches(identity);
}

function mayDecide(identity: Identity, approval: StoredApproval): boolean {
  return !approval.decision && Date.parse(approval.expiresAt) > Date.now() && inRole(identity, approval);
}

function conflict(approval: StoredApproval): DecideResult {
  const decided = approval.decision;
  const what =
    decided?.decision === "expired" ? "expired" : `already decided (${decided?.decision}${decided?.by ? ` by ${decided.by}` : ""})`;
  return { ok: false, status: 409, code: "approval_decided", message: `approval ${approval.approvalId} is ${what}` };
}
