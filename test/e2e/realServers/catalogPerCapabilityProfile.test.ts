// Capability-gated tools: server-everything registers trigger-elicitation-request,
// trigger-sampling-request, get-roots-list and trigger-url-elicitation only in sessions whose
// client declared elicitation, sampling, roots or elicitation.url. A client that declared one of
// them is shown the tool and may call it, under either upstream.sessionsPer. With "identity" (one
// session per user, declaring every kind) the tools are listed to every client of the user, and
// one that did not declare the capability is refused with -32021 naming it; with "capabilities" a
// client is shown exactly the tools the upstream shows a client with its capabilities.
// Unknown-tool lookups must not reload the upstream's tools/list each time: a counting proxy of
// ours between taskgate and server-everything sees every request the upstream receives.
// Run: node --import tsx --test test/e2e/realServers/catalogPerCapabilityProfile.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { startGatewayInFront } from "../../support/gatewayInFront.js";
import { resultOf } from "../../support/mcpClient.js";
import { call, callTool, expectComplete, expectError, expectInputRequired, textOf } from "../../support/realServerCalls.js";
import { answerRootsRounds } from "../../support/roots.js";
import { type CountingProxy, startCountingProxy } from "../../support/servers/countingProxy.js";
import type { ServerProcess } from "../../support/servers/serverProcess.js";
import { startThirdPartyServer } from "../../support/servers/thirdParty.js";

interface Case {
  capability: string;
  capabilities: JsonObject;
  tool: string;
  args: JsonObject;
  /** Drives the call from its first reply to the final result. */
  run(url: string, who: { token: string; capabilities: JsonObject }): Promise<JsonObject>;
  finalText: RegExp;
  /** sessionsPer identity, called without the capability: the upstream is told "Method not found" and
   *  either fails the call (the client gets -32021) or carries on (its text). */
  withoutIt: "-32021" | RegExp;
}

/** One MRTR round asking `method`, answered with `answer`, then the final result. */
function oneQuestion(
  tool: string,
  args: JsonObject,
  method: string,
  answer: JsonObject,
  checkQuestion: (params: JsonObject) => void = () => undefined,
) {
  return async (url: string, who: { token: string; capabilities: JsonObject }) => {
    const round = expectInputRequired(await callTool(url, tool, args, who));
    const question = round.inputRequests[round.key]!;
    assert.equal(question.method, method, `${tool} asks ${method}, got ${JSON.stringify(question)}`);
    checkQuestion(question.params);
    return expectComplete(
      await callTool(url, tool, args, who, { params: { requestState: round.requestState, inputResponses: { [round.key]: answer } } }),
    );
  };
}

const CASES: Case[] = [
  {
    capability: "elicitation",
    capabilities: { elicitation: {} },
    tool: "trigger-elicitation-request",
    args: {},
    run: oneQuestion("trigger-elicitation-request", {}, "elicitation/create", { action: "decline" }),
    finalText: /User declined to provide the requested information/,
    withoutIt: "-32021",
  },
  {
    capability: "sampling",
    capabilities: { sampling: {} },
    tool: "trigger-sampling-request",
    args: { prompt: "say hi", maxTokens: 10 },
    run: oneQuestion(
      "trigger-sampling-request",
      { prompt: "say hi", maxTokens: 10 },
      "sampling/createMessage",
      { role: "assistant", content: { type: "text", text: "hi from the test's model" }, model: "test-model", stopReason: "endTurn" },
      (params) => assert.match(JSON.stringify(params.messages), /say hi/),
    ),
    finalText: /hi from the test's model/,
    withoutIt: "-32021",
  },
  {
    capability: "roots",
    capabilities: { roots: {} },
    tool: "get-roots-list",
    args: {},
    run: (url, who) => answerRootsRounds(url, "get-roots-list", {}, who, [{ uri: "file:///work/catalog", name: "Catalog" }]),
    finalText: /URI: file:\/\/\/work\/catalog/,
    withoutIt: /no roots are currently configured/, // its roots/list failure is caught and logged
  },
  {
    capability: "elicitation.url",
    capabilities: { elicitation: { url: {} } },
    tool: "trigger-url-elicitation",
    args: { url: "https://example.com/authorize" },
    run: oneQuestion(
      "trigger-url-elicitation",
      { url: "https://example.com/authorize" },
      "elicitation/create",
      { action: "accept" },
      (params) => {
        assert.equal(params.mode, "url");
        assert.equal(params.url, "https://example.com/authorize");
      },
    ),
    finalText: /User completed the URL elicitation flow/,
    withoutIt: "-32021",
  },
];

for (const sessionsPer of ["identity", "capabilities"] as const) describeCatalog(sessionsPer);

function describeCatalog(sessionsPer: "identity" | "capabilities") {
  describe(`server-everything: capability-gated tools (upstream.sessionsPer ${sessionsPer})`, () => {
    let everything: ServerProcess;
    let proxy: CountingProxy;
    let gateway: Gateway;

    before(async () => {
      everything = await startThirdPartyServer("everything");
      proxy = await startCountingProxy(everything.url);
      gateway = await startGatewayInFront(proxy.url, { upstream: { sessionsPer } });
    });
    after(async () => {
      await gateway?.close();
      await proxy?.close();
      await everything?.stop();
    });

    const toolNames = async (capabilities: JsonObject, token = "alice") => {
      const reply = await call(gateway.url, "tools/list", {}, { token, capabilities });
      const result = resultOf(reply);
      assert.ok(result, `tools/list failed: ${JSON.stringify(reply.message)}`);
      return (result.tools as { name: string }[]).map((tool) => tool.name);
    };

    for (const c of CASES) {
      test(`with ${c.capability} declared, ${c.tool} is listed and can be called (it asks, the answer completes it)`, async () => {
        const who = { token: `caller-${c.capability}`, capabilities: c.capabilities };
        assert.ok(
          (await toolNames(c.capabilities, who.token)).includes(c.tool),
          `${c.tool} must be listed for a client declaring ${c.capability}`,
        );
        const done = await c.run(gateway.url, who);
        assert.notEqual(done.isError, true, textOf(done));
        assert.match(textOf(done), c.finalText);
      });
    }

    if (sessionsPer === "identity") {
      test("without the capability each is still listed; a call that then fails is -32021 naming what it lacks", async () => {
        const listed = await toolNames({});
        for (const c of CASES) {
          assert.ok(listed.includes(c.tool), `${c.tool} is listed (the user's one session declares every kind)`);
          const reply = await callTool(gateway.url, c.tool, c.args, { token: "alice", capabilities: {} });
          if (c.withoutIt instanceof RegExp) {
            assert.match(textOf(expectComplete(reply)), c.withoutIt);
            continue;
          }
          const error = expectError(reply, -32021);
          assert.equal(reply.status, 400);
          const required = (error.data as { requiredCapabilities?: JsonObject }).requiredCapabilities ?? {};
          const kind = c.capability.split(".")[0] as string;
          assert.ok(kind in required, `${c.tool}: requiredCapabilities names ${kind}: ${JSON.stringify(error)}`);
        }
      });
    }

    if (sessionsPer === "capabilities")
      test("without the capability, none of them is listed and calling one is -32602 Unknown tool", async () => {
        const listed = await toolNames({});
        assert.ok(listed.includes("echo"), `the base tools are listed: ${listed.join(", ")}`);
        for (const c of CASES) {
          assert.equal(listed.includes(c.tool), false, `${c.tool} must not be listed for a client that declared nothing`);
          const error = expectError(await callTool(gateway.url, c.tool, c.args, { token: "alice", capabilities: {} }), -32602);
          assert.match(error.message, /Unknown tool/);
        }
        // A client declaring only elicitation is not shown the sampling or roots tools either.
        const formsOnly = await toolNames({ elicitation: {} });
        assert.equal(formsOnly.includes("trigger-sampling-request"), false);
        assert.equal(formsOnly.includes("get-roots-list"), false);
      });

    test("an unknown tool called 20 times costs the upstream at most one tools/list", async () => {
      const who = { token: "alice", capabilities: {} };
      await toolNames({}, who.token); // the catalog of this profile may be loaded once, here
      const before = proxy.count("tools/list");
      for (let i = 0; i < 20; i++) {
        const error = expectError(await callTool(gateway.url, "no-such-tool", {}, who), -32602);
        assert.match(error.message, /Unknown tool/);
      }
      const reloads = proxy.count("tools/list") - before;
      assert.ok(reloads <= 1, `20 unknown-tool calls made ${reloads} upstream tools/list requests (at most 1 allowed)`);
    });
  });
}
