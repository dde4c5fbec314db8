// The approvals API beside the MCP endpoint (at the root, for every backend of a fleet): the people
// in an approver role list the calls waiting for them and decide. Same authentication as the MCP
// endpoint; JSON; Cache-Control: no-store. Errors: {"error": {"code", "message"}} with 400 (bad
// body), 401 (+ WWW-Authenticate), 404 (unknown approval, or one this identity may not decide:
// never reveals that it exists), 409 (already decided, or expired), 429 (+ Retry-After: over
// quotas.requestsPerMinute, counted in the MCP endpoint's buckets).
//   GET  /approvals                 → {"approvals": [{approvalId, taskId, caller, backend?, tool,
//                                      arguments? (audit.arguments), argumentsDigest, rule,
//                                      requestedAt, expiresAt}]}
//   POST /approvals/{approvalId}    {"decision": "approve" | "deny", "reason"?} → 200
//                                      {approvalId, taskId, decision, by}
// A decision is written on the task's record; the instance holding the call hears it on the task
// bus and sends the call upstream (approve) or fails its task (deny).

import type { Express, Request, Response } from "express";
import express from "express";
import type { Logger } from "pino";
import type { Approvals } from "../access/approvals.js";
import { authenticate } from "../auth/authenticate.js";
import { type Identity, type IdentityResolver, ownerHashOf } from "../auth/identity.js";
import { reasonMessage } from "../protocol/reasons.js";
import type { StoredApproval, TaskRecord } from "../tasks/taskRecord.js";
import { isObject } from "../util/json.js";
import type { RequestRate } from "./requestRate.js";

export interface ApprovalsRoutesDeps {
  approvals: Approvals;
  resolver: IdentityResolver;
  requiredScopes: readonly string[];
  shown(identity: Identity): string;
  /** quotas.requestsPerMinute: the MCP endpoint's buckets (undefined: no rate). */
  rate?: RequestRate | undefined;
  log: Logger;
}

const MAX_REASON = 500;

function fail(res: Response, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  res
    .status(status)
    .set({ "Cache-Control": "no-store", ...headers })
    .json({ error: { code, message } });
}

async function identityOf(req: Request, res: Response, deps: ApprovalsRoutesDeps): Promise<Identity | undefined> {
  const verdict = await authenticate({
    authorization: req.headers.authorization,
    resolver: deps.resolver,
    requiredScopes: deps.requiredScopes,
  });
  if (verdict.ok) {
    const rate = deps.rate?.take(ownerHashOf(verdict.identity));
    if (!rate || rate.ok) return verdict.identity;
    const { retryAfterSeconds } = rate;
    fail(res, 429, "rate_limited", reasonMessage("rate_limited", { retryAfterSeconds }), { "Retry-After": String(retryAfterSeconds) });
    return undefined;
  }
  fail(
    res,
    verdict.status,
    verdict.reason,
    verdict.message,
    verdict.wwwAuthenticate ? { "WWW-Authenticate": verdict.wwwAuthenticate } : {},
  );
  return undefined;
}

function itemOf(record: TaskRecord): Record<string, unknown> {
  const approval = record.approval as StoredApproval;
  return {
    approvalId: approval.approvalId,
    taskId: record.taskId,
    caller: approval.caller,
    ...(approval.backend !== undefined ? { backend: approval.backend } : {}),
    tool: approval.tool,
    ...(approval.arguments !== undefined ? { arguments: approval.arguments } : {}),
    argumentsDigest: approval.argumentsDigest,
    rule: approval.rule,
    requestedAt: approval.requestedAt,
    expiresAt: approval.expiresAt,
  };
}

export function mountApprovals(app: Express, deps: ApprovalsRoutesDeps): void {
  app.get("/approvals", async (req, res) => {
    const identity = await identityOf(req, res, deps);
    if (!identity) return;
    const pending = await deps.approvals.pendingFor(identity);
    res.set("Cache-Control", "no-store").json({ approvals: pending.map(itemOf) });
  });
  app.post("/approvals/:approvalId", express.json({ limit: "16kb" }), async (req, res) => {
    const identity = await identityOf(req, res, deps);
    if (!identity) return;
    const body: unknown = req.body;
    const decision = isObject(body) ? body.decision : undefined;
    if (decision !== "approve" && decision !== "deny") {
      fail(res, 400, "bad_request", 'the body must be {"decision": "approve" | "deny", "reason"?: "..."}');
      return;
    }
    const reason = isObject(body) ? body.reason : undefined;
    if (reason !== undefined && (typeof reason !== "string" || reason.length > MAX_REASON)) {
      fail(res, 400, "bad_request", `reason must be a string of at most ${MAX_REASON} characters`);
      return;
    }
    const by = deps.shown(identity);
    const result = await deps.approvals.decide(identity, by, req.params.approvalId, decision, reason);
    if (!result.ok) {
      fail(res, result.status, result.code, result.message);
      return;
    }
    deps.log.info(
      { event: "approval.decided", approvalId: result.approval.approvalId, taskId: result.record.taskId, decision, by },
      "approval decided",
    );
    res.set("Cache-Control", "no-store").json({ approvalId: result.approval.approvalId, taskId: result.record.taskId, decision, by });
  });
}
