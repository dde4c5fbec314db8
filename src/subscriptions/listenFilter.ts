// Reads `params.notifications` of subscriptions/listen into a ListenFilter. Throws -32602 for a
// malformed filter and -32021 (HTTP 400) when it names taskIds without the tasks extension
// declared on this very request; that check comes before any other field is looked at.

import { invalidParams, missingCapability } from "../protocol/errors.js";
import { type JsonObject, TASKS_EXTENSION } from "../protocol/wire.js";

export interface ListenFilter {
  toolsListChanged: boolean;
  promptsListChanged: boolean;
  resourcesListChanged: boolean;
  /** Deduplicated, in request order. */
  resourceSubscriptions: string[];
  taskIds: string[];
  /** Which array fields the request carried (an empty array still asks for the type). */
  asked: { resourceSubscriptions: boolean; taskIds: boolean };
}

const BOOLEAN_FIELDS = ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] as const;

function stringList(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string" || item.length === 0)) {
    throw invalidParams(`params.notifications.${field} must be an array of non-empty strings`);
  }
  return [...new Set(value as string[])];
}

export function parseListenFilter(params: JsonObject, declaresTasks: boolean): ListenFilter {
  const notifications = params.notifications;
  if (typeof notifications !== "object" || notifications === null || Array.isArray(notifications)) {
    throw invalidParams("params.notifications must be an object saying which notifications to send");
  }
  const asked = notifications as JsonObject;
  if (asked.taskIds !== undefined && !declaresTasks) {
    throw missingCapability(
      { extensions: { [TASKS_EXTENSION]: {} } },
      `notifications.taskIds needs the ${TASKS_EXTENSION} extension declared in this request's _meta`,
    );
  }
  for (const field of BOOLEAN_FIELDS) {
    if (asked[field] !== undefined && typeof asked[field] !== "boolean") {
      throw invalidParams(`params.notifications.${field} must be a boolean`);
    }
  }
  return {
    toolsListChanged: asked.toolsListChanged === true,
    promptsListChanged: asked.promptsListChanged === true,
    resourcesListChanged: asked.resourcesListChanged === true,
    resourceSubscriptions:
      asked.resourceSubscriptions === undefined ? [] : stringList(asked.resourceSubscriptions, "resourceSubscriptions"),
    taskIds: asked.taskIds === undefined ? [] : stringList(asked.taskIds, "taskIds"),
    asked: { resourceSubscriptions: asked.resourceSubscriptions !== undefined, taskIds: asked.taskIds !== undefined },
  };
}
