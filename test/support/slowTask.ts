// A task whose upstream call runs for a minute on the example legacy server (a child process),
// for the fault tests that stop the upstream under it: resolves once the call started upstream.

import assert from "node:assert/strict";
import type { ToolStartedEvent } from "../../examples/legacy-server/state.js";
import { rpcWithin } from "./boundedRpc.js";
import { ANSWER_WITHIN_MS } from "./limits.js";
import { resultOf, TASKS_CAPS } from "./mcpClient.js";
import type { LegacyProcess } from "./servers/legacyProcess.js";

/** tools/call slow_echo (60 s, tasks policy `always`) through `url`: the task id and the upstream request id of its call. */
export async function startSlowTask(legacy: LegacyProcess, url: string): Promise<{ taskId: string; requestId: string | number }> {
  const started = legacy.next<ToolStartedEvent>("tool-started", (e) => e.tool === "slow_echo");
  const created = await rpcWithin(
    ANSWER_WITHIN_MS,
    url,
    "tools/call",
    { name: "slow_echo", arguments: { text: "x", ms: 60_000 } },
    { capabilities: TASKS_CAPS },
  );
  assert.equal(resultOf(created).status, "working", JSON.stringify(created.message));
  const { requestId } = await started;
  return { taskId: resultOf(created).taskId as string, requestId };
}
