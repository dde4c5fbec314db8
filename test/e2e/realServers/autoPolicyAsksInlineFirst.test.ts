// Issue 9, problem 7: with the `auto` policy, an upstream that asks before autoAfterMs gets its
// question to the client inline first (an MRTR round, no task yet); the retry that carries the
// answer gets the task (a CreateTaskResult), and the task completes with the answer in its result
// (conformance check sep-2663-mrtr-synchronous-before-task-creation). Against simpleStreamableHttp's
// collect-user-info, which asks at once on its call's POST stream, and elicitationFormExample's
// register_user, which asks at once on the standalone GET stream.
// Run: node --import tsx --test test/e2e/realServers/autoPolicyAsksInlineFirst.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { startGatewayInFront } from "../../support/gatewayInFront.js";
import { accept, callTool, expectInputRequired, expectTask, TASKS_AND_FORMS, textOf } from "../../support/realServerCalls.js";
import type { ServerProcess } from "../../support/servers/serverProcess.js";
import { type ServerName, startThirdPartyServer } from "../../support/servers/thirdParty.js";
import { cancelTask, TERMINAL, waitForTask } from "../../support/tasks.js";

interface Scenario {
  server: ServerName;
  title: string;
  tool: string;
  args: JsonObject;
  requiredFields: string[];
  answer: JsonObject;
  resultText: RegExp;
}

const SCENARIOS: Scenario[] = [
  {
    server: "simpleStreamableHttp",
    title: "simpleStreamableHttp (SDK 1.x): collect-user-info asks on its POST stream at once",
    tool: "collect-user-info",
    args: { infoType: "contact" },
    requiredFields: ["name", "email"],
    answer: { name: "Ada Lovelace", email: "ada@example.com" },
    resultText: /^Thank you! Collected contact information: .*"name": "Ada Lovelace"/s,
  },
  {
    server: "elicitationFormExample",
    title: "elicitationFormExample (SDK 1.x): register_user asks on the GET stream at once",
    tool: "register_user",
    args: {},
    requiredFields: ["username", "email", "password"],
    answer: { username: "grace_h", email: "grace@example.com", password: "compilers-rule" },
    resultText: /^Registration successful!\n\nUsername: grace_h/,
  },
];

for (const scenario of SCENARIOS) {
  describe(scenario.title, () => {
    let server: ServerProcess;
    let gateway: Gateway;

    before(async () => {
      server = await startThirdPartyServer(scenario.server);
      // The defaults, spelled out: auto, and a question comes well inside autoAfterMs.
      gateway = await startGatewayInFront(server.url, { tasks: { policy: "auto", autoAfterMs: 1000 } });
    });
    after(async () => {
      await gateway?.close();
      await server?.stop();
    });

    test("auto policy, the upstream asks before autoAfterMs: round 1 is an inline question, round 2 returns the task, which completes with the answer", async () => {
      const who = { token: "alice", capabilities: TASKS_AND_FORMS };
      const round = expectInputRequired(await callTool(gateway.url, scenario.tool, scenario.args, who));
      const question = round.inputRequests[round.key]!;
      assert.equal(question.method, "elicitation/create");
      assert.deepEqual((question.params.requestedSchema as JsonObject).required, scenario.requiredFields);

      const created = expectTask(
        await callTool(gateway.url, scenario.tool, scenario.args, who, {
          params: { requestState: round.requestState, inputResponses: { [round.key]: accept(scenario.answer) } },
        }),
      );
      assert.equal("requestState" in created, false, "a CreateTaskResult carries no requestState");
      assert.equal("inputRequests" in created, false, "a CreateTaskResult carries no inputRequests");
      const taskId = created.taskId as string;
      let done: JsonObject;
      try {
        done = await waitForTask(gateway.url, taskId, TERMINAL, { token: who.token, timeoutMs: 15_000 });
      } catch (error) {
        await cancelTask(gateway.url, taskId, who.token).catch(() => undefined);
        throw error;
      }
      assert.equal(done.status, "completed", JSON.stringify(done));
      assert.notEqual((done.result as JsonObject).isError, true, textOf(done.result));
      assert.match(textOf(done.result), scenario.resultText);
    });
  });
}
