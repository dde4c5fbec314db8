// The query of GET /tasks and GET /admin/tasks: status (repeated or comma-separated), backend, tool,
// limit (1..200, default 50), cursor, and for operators owner (a subject). Anything else is a 400
// saying what is wrong.

import { inventoryError } from "../protocol/errors.js";
import type { TaskStatus } from "../protocol/wire.js";
import type { TaskListQuery } from "../tasks/taskStore.js";

export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 200;

const STATUSES: readonly TaskStatus[] = ["working", "input_required", "completed", "failed", "cancelled"];

type Query = Record<string, unknown>;

function values(query: Query, name: string): string[] {
  const raw = query[name];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (!list.every((value) => typeof value === "string")) throw inventoryError("bad_request", `${name} must be plain text`);
  return (list as string[])
    .flatMap((value) => value.split(","))
    .map((value) => value.trim())
    .filter((value) => value !== "");
}

function single(query: Query, name: string): string | undefined {
  const list = values(query, name);
  if (list.length > 1) throw inventoryError("bad_request", `${name} may be given once`);
  return list[0];
}

/** The store query for this request (owner is returned apart: it picks the index). */
export function listingQuery(query: Query, operator = false): { query: TaskListQuery; owner?: string } {
  const statuses = values(query, "status");
  const unknown = statuses.find((status) => !STATUSES.includes(status as TaskStatus));
  if (unknown !== undefined) throw inventoryError("bad_request", `status ${JSON.stringify(unknown)} is not one of ${STATUSES.join(", ")}`);
  const limitText = single(query, "limit");
  const limit = limitText === undefined ? PAGE_DEFAULT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_MAX) {
    throw inventoryError("bad_request", `limit must be an integer from 1 to ${PAGE_MAX}, not ${JSON.stringify(limitText)}`);
  }
  const tool = single(query, "tool");
  const backend = single(query, "backend");
  const cursor = single(query, "cursor");
  const owner = operator ? single(query, "owner") : undefined;
  return {
    query: {
      limit,
      ...(statuses.length > 0 ? { statuses: statuses as TaskStatus[] } : {}),
      ...(tool !== undefined ? { tool } : {}),
      ...(backend !== undefined ? { backend } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
    },
    ...(owner !== undefined ? { owner } : {}),
  };
}
