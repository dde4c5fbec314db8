// The task inventory's HTTP API (docs/inventory-api.md), mounted on the express app beside the MCP
// endpoint: a caller's own tasks (list, detail with timeline, live events, answer, cancel), who they
// are (/me), and for operators every task (/admin/tasks, /admin/summary, cancel, fail with a
// reason). Same authentication as the MCP endpoint (inventoryCaller.ts). Another owner's task is a
// 404 like an unknown one. Answers go through TaskAccess.update — the path tasks/update takes, the
// same check of each answer against its question first (a misfit is a 422 naming the field, and
// the question stays open); cancel and fail go to the task's holder like tasks/cancel. One log line
// per request.

import type { ServerResponse } from "node:http";
import express from "express";
import type { Logger } from "pino";
import { ownerHashOf } from "../auth/identity.js";
import type { TaskBus } from "../cluster/taskBus.js";
import { InventoryError, inventoryError, inventoryTaskNotFound, RpcError } from "../protocol/errors.js";
import { type JsonObject, TERMINAL_STATUSES } from "../protocol/wire.js";
import type { TaskAccess } from "../tasks/taskAccess.js";
import type { TaskRecord } from "../tasks/taskRecord.js";
import type { TaskRecords } from "../tasks/taskRecords.js";
import { InvalidCursorError, type TaskStore } from "../tasks/taskStore.js";
import { isObject } from "../util/json.js";
import { checkAnswers } from "./answerCheck.js";
import { type Caller, type CallerChecks, identifyCaller, sendInventoryError, sendInventoryJson } from "./inventoryCaller.js";
import { listingQuery } from "./listingQuery.js";
import { streamOwnerTasks, streamTask } from "./taskEvents.js";
import { adminItem, taskDetail, taskItem } from "./taskItem.js";

/** Extra routes served under the same caller check (the push subscriptions of notify/). */
export type CallerRoute = (caller: Caller, req: express.Request, res: ServerResponse) => Promise<void>;

export interface InventoryDeps extends CallerChecks {
  store: TaskStore;
  records: TaskRecords;
  /** Serves tasks of every endpoint (anyEndpoint), answers and cancels routed to their holder. */
  access: TaskAccess;
  bus: TaskBus<TaskRecord>;
  keepAliveMs: number;
  bodyLimitBytes: number;
  /** The operators' overview (GET /admin/summary). */
  summary(): Promise<JsonObject>;
  /** More routes: method and path → handler (the push subscription endpoints). */
  more?: ReadonlyArray<{ method: "get" | "post" | "delete"; path: string; handle: CallerRoute }>;
  log: Logger;
}

type Handler = (caller: Caller, req: express.Request, res: ServerResponse) => Promise<void>;

export function mountInventory(app: express.Express, deps: InventoryDeps): void {
  const json = express.json({ limit: deps.bodyLimitBytes, type: () => true });
  const route = (handler: Handler, operatorOnly = false) => serve(deps, handler, operatorOnly);
  app.get(
    "/me",
    route(async (caller, _req, res) => me(caller, res)),
  );
  app.get(
    "/tasks",
    route((caller, req, res) => listTasks(deps, caller, req, res)),
  );
  app.get(
    "/tasks/events",
    route(async (caller, _req, res) => streamOwnerTasks(res, caller.owner, deps)),
  );
  app.get(
    "/tasks/:taskId",
    route((caller, req, res) => showTask(deps, caller, req, res)),
  );
  app.get(
    "/tasks/:taskId/events",
    route((caller, req, res) => streamTask(res, taskIdOf(req), () => owned(deps, caller, req), deps)),
  );
  app.post(
    "/tasks/:taskId/input",
    json,
    route((caller, req, res) => answerTask(deps, caller, req, res)),
  );
  app.post(
    "/tasks/:taskId/cancel",
    route((caller, req, res) => cancelTask(deps, caller, req, res)),
  );
  app.get(
    "/admin/tasks",
    route((caller, req, res) => listTasks(deps, caller, req, res, true), true),
  );
  app.get(
    "/admin/summary",
    route(async (_caller, _req, res) => sendInventoryJson(res, 200, await deps.summary()), true),
  );
  app.post(
    "/admin/tasks/:taskId/cancel",
    route((caller, req, res) => operatorAct(deps, caller, req, res, "cancel"), true),
  );
  app.post(
    "/admin/tasks/:taskId/fail",
    json,
    route((caller, req, res) => operatorAct(deps, caller, req, res, "fail"), true),
  );
  for (const extra of deps.more ?? []) app[extra.method](extra.path, json, route(extra.handle));
  // A body that is not JSON (express.json's error) is the caller's mistake.
  app.use(["/tasks", "/admin", "/notify"], (error: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
    const type = (error as { type?: unknown }).type;
    if (type === undefined) return next(error);
    if (type === "entity.too.large") {
      return sendInventoryError(res, inventoryError("body_too_large", `the body is larger than bodyLimitBytes (${deps.bodyLimitBytes})`));
    }
    sendInventoryError(res, inventoryError("bad_request", `the body must be JSON: ${(error as Error).message}`));
  });
}

/** Authenticates, checks the role, runs the handler, answers its failure, and logs one line. */
function serve(deps: InventoryDeps, handler: Handler, operatorOnly: boolean) {
  return async (req: express.Request, res: express.Response): Promise<void> => {
    const started = performance.now();
    let name: string | undefined;
    res.on("close", () => {
      const line = { event: "inventory.request", httpMethod: req.method, path: req.path, status: res.statusCode, subject: name };
      deps.log.info({ ...line, ms: Math.round(performance.now() - started) }, "inventory request");
    });
    const caller = await identifyCaller(req, res, deps);
    if (!caller) return;
    name = caller.name;
    try {
      if (operatorOnly && !caller.operator) throw inventoryError("not_operator", "this needs the operator role (inventory.operators)");
      await handler(caller, req, res);
    } catch (error) {
      const answer = asInventoryError(error);
      if (answer.status >= 500)
        deps.log.warn({ event: "inventory.failed", path: req.path, err: answer.message }, "inventory request failed");
      if (!res.headersSent) sendInventoryError(res, answer);
      else res.destroy();
    }
  };
}

function asInventoryError(error: unknown): InventoryError {
  if (error instanceof InventoryError) return error;
  if (error instanceof InvalidCursorError) return inventoryError("invalid_cursor", error.message);
  if (error instanceof RangeError) return inventoryError("bad_request", error.message);
  if (error instanceof RpcError && error.httpStatus < 500 && /^Task not found/.test(error.message)) return inventoryTaskNotFound();
  if (error instanceof RpcError && error.httpStatus < 500) return inventoryError("bad_request", error.message);
  return inventoryError("unavailable", error instanceof Error ? error.message : String(error));
}

const taskIdOf = (req: express.Request): string => String(req.params.taskId ?? "");

function me(caller: Caller, res: ServerResponse): void {
  sendInventoryJson(res, 200, { subject: caller.identity.subject, operator: caller.operator, scopes: caller.identity.scopes ?? [] });
}

/** The caller's task (failed first if its holder is gone); 404 for anyone else's. */
function owned(deps: InventoryDeps, caller: Caller, req: express.Request): Promise<TaskRecord> {
  return deps.access.get(caller.owner, taskIdOf(req));
}

async function listTasks(deps: InventoryDeps, caller: Caller, req: express.Request, res: ServerResponse, admin = false): Promise<void> {
  const { query, owner } = listingQuery(req.query as Record<string, unknown>, admin);
  const page = admin
    ? owner === undefined
      ? await deps.store.listAll(query)
      : await deps.store.listByOwner(ownerHashOf({ subject: owner }), query)
    : await deps.store.listByOwner(caller.owner, query);
  const now = Date.now();
  const tasks = page.records.map((record) => (admin ? adminItem(record, now) : taskItem(record)));
  sendInventoryJson(res, 200, page.nextCursor === undefined ? { tasks } : { tasks, nextCursor: page.nextCursor });
}

async function showTask(deps: InventoryDeps, caller: Caller, req: express.Request, res: ServerResponse): Promise<void> {
  sendInventoryJson(res, 200, taskDetail(await owned(deps, caller, req)));
}

async function answerTask(deps: InventoryDeps, caller: Caller, req: express.Request, res: ServerResponse): Promise<void> {
  const body: unknown = req.body;
  const responses = isObject(body) ? body.inputResponses : undefined;
  if (!isObject(responses) || Object.keys(responses).length === 0) {
    throw inventoryError("bad_request", 'the body must be {"inputResponses": {<key>: <answer>}} with at least one answer');
  }
  const record = await owned(deps, caller, req);
  checkAnswers(record, responses);
  try {
    await deps.access.update(caller.owner, record.taskId, responses, deps.log);
  } catch (error) {
    // Checked again where the question is held (it may have changed meanwhile): its refusal names the key.
    const refused = error instanceof RpcError && /^inputResponses\.([^:]+): (.*)$/s.exec(error.message);
    if (refused) throw inventoryError("invalid_answer", refused[2] as string, { field: refused[1] as string, key: refused[1] as string });
    throw error;
  }
  sendInventoryJson(res, 200, taskItem(await owned(deps, caller, req)));
}

async function cancelTask(deps: InventoryDeps, caller: Caller, req: express.Request, res: ServerResponse): Promise<void> {
  const taskId = taskIdOf(req);
  await deps.access.cancel(caller.owner, taskId, deps.log);
  sendInventoryJson(res, 200, taskItem(await deps.access.get(caller.owner, taskId)));
}

/** An operator cancels or fails anyone's task: through the task's holder, as its owner would. */
async function operatorAct(
  deps: InventoryDeps,
  caller: Caller,
  req: express.Request,
  res: ServerResponse,
  action: "cancel" | "fail",
): Promise<void> {
  const record = await deps.records.get(taskIdOf(req));
  if (!record) throw inventoryTaskNotFound();
  const log = deps.log.child({ operator: caller.name });
  if (action === "cancel") await deps.access.cancel(record.ownerHash, record.taskId, log);
  else {
    const reason = isObject(req.body) ? req.body.reason : undefined;
    if (typeof reason !== "string" || reason.trim() === "" || reason.length > 500) {
      throw inventoryError("bad_request", 'the body must be {"reason": "<why, 1 to 500 characters>"}');
    }
    if (TERMINAL_STATUSES.has(record.status)) throw inventoryError("wrong_state", `the task is already ${record.status}`);
    await deps.access.fail(record.ownerHash, record.taskId, reason.trim(), log);
  }
  const now = await deps.records.get(record.taskId);
  sendInventoryJson(res, 200, adminItem(now ?? record));
}
