// Decides how a tools/call is served: inline or as a task. Config per tool wins, then the
// upstream tool's 2025-11-25 `execution.taskSupport`, then the configured default.

import type { Config, TaskPolicy } from "../config/schema.js";

const fromTaskSupport: Record<string, TaskPolicy> = { required: "required", optional: "auto", forbidden: "never" };

export function policyFor(tool: string, tasks: Config["tasks"], upstreamTaskSupport: string | undefined): TaskPolicy {
  return tasks.tools[tool] ?? (upstreamTaskSupport ? fromTaskSupport[upstreamTaskSupport] : undefined) ?? tasks.policy;
}
