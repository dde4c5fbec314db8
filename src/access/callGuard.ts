// What one tools/call must pass before it is sent upstream, and its audit line when it ends.
// Contract:
// - approver caller: the gate asks the caller itself an elicitation (accept/decline) naming the
//   tool and its arguments, through the call's own question path, so it is an MRTR round inline
//   or the task's inputRequests, exactly like an upstream's question; only `accept` lets the call
//   through; anything else fails it with approval_declined.
// - approver role: the call runs only as a task; once its record exists (boundTo) the gate stores
//   the pending approval on it (approvals.ts) and waits in `working`; approve lets it through,
//   deny fails it with approval_denied (the approver's reason), no decision within
//   expiresAfterMs fails it with approval_expired.
// - Either way the approval is bound to the caller, backend, tool, arguments digest and rule;
//   nothing reaches the upstream before the gate resolves (callStarter.ts runs it first).

import type { Identity } from "../auth/identity.js";
import { ownerHashOf } from "../auth/identity.js";
import { approvalDeclined, approvalDenied, approvalExpired, RpcError } from "../protocol/errors.js";
import type { InputRequest } from "../protocol/wire.js";
import type { StoredApproval } from "../tasks/taskRecord.js";
import type { CallOutcome, CallRun } from "../upstream/upstreamCall.js";
import { CallStopped } from "../upstream/upstreamFailure.js";
import { argumentsDigest } from "../util/json.js";
import type { ApprovalNeed } from "./approvalRules.js";
import { type Approvals, newApprovalId } from "./approvals.js";
import type { AuditLine, AuditTrail } from "./auditTrail.js";

export interface GuardedCall {
  identity: Identity;
  tool: string;
  args: unknown;
}

export interface CallGuard {
  /** Runs before the call is sent upstream; rejects to stop it there. */
  gate?: (run: CallRun) => Promise<void>;
  /** A role's approval: the call must be a task (the caller cannot wait inline for someone else). */
  readonly needsTask: boolean;
  /** Whether the gate asks the caller (its request must declare elicitation). */
  readonly asksCaller: boolean;
  /** The call became task `taskId`. */
  boundTo(taskId: string): void;
  /** The call ended: its audit line. */
  ended(outcome: CallOutcome): void;
}

export interface GuardDeps {
  approvals: Approvals;
  audit: AuditTrail;
  /** The caller as audit lines and approvers name it. */
  caller: string;
  backend?: string | undefined;
}

/** A question nobody withdraws (the gate's own; the call's abort still withdraws it). */
const NEVER_WITHDRAWN = new AbortController().signal;
const SHOWN_ARGUMENTS = 2_000;

export function guardCall(call: GuardedCall, need: ApprovalNeed | undefined, deps: GuardDeps): CallGuard {
  const digest = argumentsDigest(call.args);
  const line = (action: AuditLine["action"], more: Partial<AuditLine> = {}): AuditLine => ({
    action,
    caller: deps.caller,
    backend: deps.backend,
    tool: call.tool,
    argumentsDigest: digest,
    arguments: call.args,
    ...(need ? { rule: need.rule } : {}),
    ...more,
  });
  let bound: (taskId: string) => void = () => undefined;
  let taskId: string | undefined;
  const task = new Promise<string>((resolve) => (bound = resolve));
  let approval: Partial<AuditLine> = {};
  const guard: CallGuard = {
    needsTask: need !== undefined && need.approver !== "caller",
    asksCaller: need?.approver === "caller",
    boundTo(id) {
      taskId = id;
      bound(id);
    },
    ended(outcome) {
      deps.audit.write(line("call.ended", { ...approval, outcome: outcomeOf(outcome), ...(taskId ? { taskId } : {}) }));
    },
  };
  if (!need) return guard;
  if (need.approver === "caller") {
    guard.gate = async (run) => {
      const answer = await run.context.onInput(callerQuestion(call, deps.backend), NEVER_WITHDRAWN, false);
      const accepted = answer.action === "accept";
      approval = { by: deps.caller, reason: accepted ? "approved by the caller" : `caller answered ${String(answer.action)}` };
      deps.audit.write(line(accepted ? "approval.approved" : "approval.declined", { ...approval, ...(taskId ? { taskId } : {}) }));
      if (!accepted) throw approvalDeclined(call.tool);
    };
    return guard;
  }
  const role = need.approver;
  guard.gate = async (run) => {
    const id = await Promise.race([task, stopped(run.signal)]);
    const requestedAt = new Date();
    const stored: StoredApproval = {
      approvalId: newApprovalId(id),
      caller: deps.caller,
      callerHash: ownerHashOf(call.identity),
      ...(deps.backend !== undefined ? { backend: deps.backend } : {}),
      tool: call.tool,
      argumentsDigest: digest,
      ...(deps.audit.showsArguments && call.args !== undefined ? { arguments: call.args } : {}),
      rule: need.rule,
      approver: need.role ?? {},
      approverText: role.described,
      requestedAt: requestedAt.toISOString(),
      expiresAt: new Date(requestedAt.getTime() + need.expiresAfterMs).toISOString(),
    };
    deps.audit.write(line("approval.requested", { approvalId: stored.approvalId, taskId: id }));
    const decision = await deps.approvals.wait(id, stored, run.signal);
    approval = {
      approvalId: stored.approvalId,
      ...(decision.by ? { by: decision.by } : {}),
      ...(decision.reason ? { reason: decision.reason } : {}),
    };
    const action =
      decision.decision === "approve" ? "approval.approved" : decision.decision === "deny" ? "approval.denied" : "approval.expired";
    deps.audit.write(line(action, { ...approval, taskId: id }));
    if (decision.decision === "deny") throw approvalDenied(call.tool, decision.by ?? "an approver", decision.reason);
    if (decision.decision === "expired") throw approvalExpired(call.tool, need.rule, need.expiresAfterMs);
    run.onstatus(`approved by ${decision.by ?? "an approver"}; running`);
  };
  return guard;
}

/** The elicitation the caller is asked: the tool and its arguments, accept or decline. */
function callerQuestion(call: GuardedCall, backend: string | undefined): InputRequest {
  let shown = JSON.stringify(call.args ?? {});
  if (shown.length > SHOWN_ARGUMENTS) shown = `${shown.slice(0, SHOWN_ARGUMENTS)}…`;
  const where = backend !== undefined ? ` on backend '${backend}'` : "";
  return {
    method: "elicitation/create",
    params: {
      message:
        `Approve this call before taskgate sends it: tool '${call.tool}'${where} with arguments ${shown}. ` +
        "Accept to run it, decline to stop it.",
      requestedSchema: { type: "object", properties: {} },
    },
  };
}

function stopped(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    const stop = () => reject(new CallStopped(String(signal.reason)));
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
  });
}

function outcomeOf(outcome: CallOutcome): string {
  if (outcome.kind === "aborted") return "aborted";
  if (outcome.kind === "result") return outcome.result.isError === true ? "tool_error" : "result";
  const data = outcome.error instanceof RpcError ? outcome.error.data : undefined;
  const reason = data && typeof data === "object" ? (data as { reason?: unknown }).reason : undefined;
  return typeof reason === "string" ? reason : `error ${outcome.error.code}`;
}
