// Decides how a tools/call is served: inline or as a task. Config per tool wins, then the
// upstream tool's 2025-11-25 `execution.taskSupport`, then the configured default.
// `forbidden` is no hint: SDK 1.x stamps it on every plain tool, and it only says the upstream
// cannot run the call as a 2025-11-25 task itself — taskgate holds the blocking call either way.

import type { TaskPolicy } from "../config/schema.js";

/** The task options tools/call uses (config `tasks`). */
export interface TaskSettings {
  policy: TaskPolicy;
  autoAfterMs: number;
  /** A task's time to live (also asked of a 2025-11-25 task the upstream runs for it). */
  ttlMs: number;
  tools: Record<string, TaskPolicy>;
  inputKeys: Record<string, string>;
}

const fromTaskSupport: Record<string, TaskPolicy> = { required: "required", optional: "auto" };

export function policyFor(
  tool: string,
  tasks: Pick<TaskSettings, "policy" | "tools">,
  upstreamTaskSupport: string | undefined,
): TaskPolicy {
  return (
    (Object.hasOwn(tasks.tools, tool) ? tasks.tools[tool] : undefined) ??
    (upstreamTaskSupport ? fromTaskSupport[upstreamTaskSupport] : undefined) ??
    tasks.policy
  );
}
