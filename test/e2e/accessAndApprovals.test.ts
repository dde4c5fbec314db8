// Access rules and approvals, over real HTTP in front of the real example legacy server (whose
// events say what it received). The single upstream: bob's tools/list lacks the tools denied to
// him and calling one answers exactly like an unknown tool (hidden prompts and resources: like
// missing ones); old clients are refused; the approvals API authenticates; a caller-approved call reaches the
// upstream only after the caller's accept (and a retry with other arguments is refused); a
// role-approved call waits in `working`, is approved by another identity through the approvals
// API and runs; a denial and an expiry each fail the task with their reason; the audit file has a
// line per decision and call, without argument values.
// Run: node --import tsx --test test/e2e/accessAndApprovals.test.ts

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { JsonObject } from "../../src/protocol/wire.js";
import { errorOf, resultOf, rpc } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";
import { callTool, createTask, pollTask, updateTask } from "../support/tasks.js";

const FORMS = { elicitation: {} };

/** Each person's token is their name (tokens mode: only its hash is configured); carol and dave may deploy. */
const PEOPLE = { alice: [], bob: [], carol: ["deployers"], dave: ["deployers"] } as const;
const TOKENS = Object.entries(PEOPLE).map(([subject, scopes]) => ({
  sha256: createHash("sha256").update(subject).digest("hex"),
  subject,
  scopes: [...scopes],
}));

/** What the upstream received: every tool it started, and every deploy with its arguments. */
class UpstreamLog {
  readonly started: string[] = [];
  readonly deployed: Array<{ service: string; version: string }> = [];
  constructor(stack: Stack) {
    stack.legacy.events.on("tool-started", (event: { tool: string }) => this.started.push(event.tool));
    stack.legacy.events.on("deployed", (event: { service: string; version: string }) =>
      this.deployed.push({ service: event.service, version: event.version }),
    );
  }
}

async function approvalsApi(base: string, token: string, path = "/approvals", body?: JsonObject) {
  const response = await fetch(`${base}${path}`, {
    method: body ? "POST" : "GET",
    headers: { Authorization: `Bearer ${token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as JsonObject };
}

const pendingOf = async (base: string, token: string) =>
  ((await approvalsApi(base, token)).body.approvals ?? []) as Array<JsonObject & { approvalId: string; taskId: string }>;

describe("access rules and approvals on the single upstream", () => {
  let stack: Stack;
  let upstream: UpstreamLog;
  let base: string;
  let dir: string;
  let auditFile: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "taskgate-access-"));
    auditFile = join(dir, "audit.jsonl");
    stack = await startStack({
      config: {
        auth: { mode: "tokens", tokens: TOKENS },
        // A deploy whose request declares tasks is a task at once (one that does not is answered inline).
        tasks: { tools: { deploy: "always" } },
        access: {
          default: "allow",
          rules: [
            { subjects: ["bob"], deny: { tools: ["slow_*", "two_rounds"], prompts: ["summarize"], resources: ["example://counter"] } },
          ],
        },
        approvals: [
          { tools: ["deploy"], arguments: { service: "web" }, approver: "caller", expiresAfterMs: 60_000 },
          { tools: ["greet"], arguments: { name: "expire*" }, approver: { subjects: ["carol"] }, expiresAfterMs: 300 },
          { tools: ["deploy"], approver: { scopes: ["deployers"] }, expiresAfterMs: 60_000 },
        ],
        audit: { file: auditFile },
      },
    });
    upstream = new UpstreamLog(stack);
    base = stack.url.slice(0, -"/mcp".length);
  });
  after(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("bob's tools/list lacks the tools denied to him; his call of one answers exactly like an unknown tool", async () => {
    const names = async (token: string) =>
      ((resultOf(await rpc(stack.url, "tools/list", {}, { token })).tools as JsonObject[]) ?? []).map((tool) => tool.name);
    const alice = await names("alice");
    const bob = await names("bob");
    assert.ok(alice.includes("slow_echo") && alice.includes("two_rounds"), JSON.stringify(alice));
    assert.ok(!bob.includes("slow_echo") && !bob.includes("slow_compute") && !bob.includes("two_rounds"), JSON.stringify(bob));
    assert.ok(bob.includes("greet"));
    const hidden = await callTool(stack.url, "slow_echo", { text: "x" }, { token: "bob" });
    const unknown = await callTool(stack.url, "no_such_tool", { text: "x" }, { token: "bob" });
    assert.equal(hidden.status, unknown.status);
    assert.deepEqual(errorOf(hidden), { ...errorOf(unknown), message: errorOf(unknown).message.replace("no_such_tool", "slow_echo") });
    assert.ok(!upstream.started.includes("slow_echo"), "the upstream never saw bob's call");
    assert.match(JSON.stringify(resultOf(await callTool(stack.url, "slow_echo", { text: "hi", ms: 0 }))), /hi/, "alice may");
  });

  test("bob's prompt and resource lists lack what is denied to him; reading one answers as for a missing one", async () => {
    const listed = async (method: string, field: string, key: string, token: string) =>
      ((resultOf(await rpc(stack.url, method, {}, { token }))[field] as JsonObject[]) ?? []).map((entry) => entry[key]);
    assert.ok((await listed("prompts/list", "prompts", "name", "alice")).includes("summarize"));
    assert.ok(!(await listed("prompts/list", "prompts", "name", "bob")).includes("summarize"));
    assert.ok((await listed("resources/list", "resources", "uri", "alice")).includes("example://counter"));
    const bobs = await listed("resources/list", "resources", "uri", "bob");
    assert.ok(!bobs.includes("example://counter") && bobs.includes("example://readme"), JSON.stringify(bobs));
    const hiddenPrompt = await rpc(stack.url, "prompts/get", { name: "summarize", arguments: { topic: "x" } }, { token: "bob" });
    const missingPrompt = await rpc(stack.url, "prompts/get", { name: "nothing", arguments: { topic: "x" } }, { token: "bob" });
    assert.deepEqual(errorOf(hiddenPrompt), {
      ...errorOf(missingPrompt),
      message: errorOf(missingPrompt).message.replace("nothing", "summarize"),
    });
    const complete = (name: string) =>
      rpc(
        stack.url,
        "completion/complete",
        { ref: { type: "ref/prompt", name }, argument: { name: "topic", value: "b" } },
        { token: "bob" },
      );
    const hiddenRef = errorOf(await complete("summarize"));
    const missingRef = errorOf(await complete("nothing"));
    assert.deepEqual(hiddenRef, { ...missingRef, message: missingRef.message.replace("nothing", "summarize") });
    const hidden = await rpc(stack.url, "resources/read", { uri: "example://counter" }, { token: "bob" });
    const missing = await rpc(stack.url, "resources/read", { uri: "example://nothing" }, { token: "bob" });
    assert.deepEqual(errorOf(hidden), {
      ...errorOf(missing),
      message: errorOf(missing).message.replace("example://nothing", "example://counter"),
    });
  });

  test("the approvals API needs a token like the MCP endpoint", async () => {
    const response = await fetch(`${base}/approvals`);
    assert.equal(response.status, 401);
    assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer/);
    assert.equal(response.headers.get("cache-control"), "no-store");
  });

  test("old clients are refused here: a pass-through could neither hide tools nor ask for approvals", async () => {
    const response = await fetch(stack.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: "Bearer bob" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "old", version: "1" } },
      }),
    });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: { code: number } }).error.code, -32022);
  });

  test("a caller-approved call reaches the upstream only after the caller accepts; other arguments cannot reuse the round", async () => {
    const args = { service: "web", version: "1" };
    const round = resultOf(await callTool(stack.url, "deploy", args, { capabilities: FORMS }));
    assert.equal(round.resultType, "input_required", JSON.stringify(round));
    const [key, question] = Object.entries(round.inputRequests as Record<string, { method: string; params: { message: string } }>)[0]!;
    assert.equal(question.method, "elicitation/create");
    assert.match(question.params.message, /tool 'deploy' with arguments \{"service":"web","version":"1"\}/);
    assert.equal(upstream.deployed.length, 0, "nothing reached the upstream before the answer");
    assert.ok(!upstream.started.includes("deploy"));

    const accept = { [key]: { action: "accept", content: {} } };
    const replay = await callTool(
      stack.url,
      "deploy",
      { service: "web", version: "2" },
      { capabilities: FORMS },
      {
        requestState: round.requestState,
        inputResponses: accept,
      },
    );
    assert.equal(errorOf(replay)?.code, -32602, JSON.stringify(replay.message));
    assert.equal(upstream.deployed.length, 0, "the approval of version 1 did not let version 2 through");

    const done = resultOf(
      await callTool(stack.url, "deploy", args, { capabilities: FORMS }, { requestState: round.requestState, inputResponses: accept }),
    );
    assert.match(JSON.stringify(done), /deployed web 1/);
    assert.deepEqual(upstream.deployed, [{ service: "web", version: "1" }]);
  });

  test("a caller-approved task asks in its inputRequests; the call goes upstream after tasks/update accepts", async () => {
    const task = await createTask(stack.url, "deploy", { service: "web", version: "5" });
    const asking = await pollTask(stack.url, task.taskId as string, (t) => t.status === "input_required");
    const [key, question] = Object.entries(asking.inputRequests as Record<string, { params: { message: string } }>)[0]!;
    assert.match(question.params.message, /tool 'deploy' with arguments \{"service":"web","version":"5"\}/);
    assert.ok(!upstream.deployed.some((d) => d.version === "5"), "nothing sent before the answer");
    await updateTask(stack.url, task.taskId as string, { [key]: { action: "accept", content: {} } });
    const done = await pollTask(stack.url, task.taskId as string, (t) => t.status === "completed" || t.status === "failed");
    assert.match(JSON.stringify(done.result), /deployed web 5/);
  });

  test("a caller who declines: the call fails with approval_declined and never reaches the upstream", async () => {
    const round = resultOf(await callTool(stack.url, "deploy", { service: "web", version: "3" }, { capabilities: FORMS }));
    const key = Object.keys(round.inputRequests as JsonObject)[0]!;
    const declined = await callTool(
      stack.url,
      "deploy",
      { service: "web", version: "3" },
      { capabilities: FORMS },
      {
        requestState: round.requestState,
        inputResponses: { [key]: { action: "decline" } },
      },
    );
    assert.equal(errorOf(declined)?.data?.reason, "approval_declined", JSON.stringify(declined.message));
    const undeclared = await callTool(stack.url, "deploy", { service: "web", version: "4" }, { capabilities: {} });
    assert.equal(errorOf(undeclared)?.code, -32021, "asking the caller needs form elicitation declared");
    assert.ok(!upstream.deployed.some((d) => d.version === "3" || d.version === "4"));
  });

  test("a role-approved call waits in working, is approved by another identity, then runs", async () => {
    const refusedInline = await callTool(stack.url, "deploy", { service: "api", version: "6" }, { capabilities: FORMS });
    assert.equal(errorOf(refusedInline)?.code, -32021, "someone else's approval needs a task");

    const deploysBefore = upstream.deployed.length;
    const task = await createTask(stack.url, "deploy", { service: "api", version: "v7-secret" });
    const waiting = await pollTask(stack.url, task.taskId as string, (t) => /waiting for approval/.test(String(t.statusMessage)));
    assert.equal(waiting.status, "working");
    assert.match(String(waiting.statusMessage), /waiting for approval by scopes deployers/);
    assert.equal(upstream.deployed.length, deploysBefore, "nothing reached the upstream while it waits");

    assert.deepEqual(await pendingOf(base, "bob"), [], "bob is no approver");
    assert.deepEqual(await pendingOf(base, "alice"), [], "the caller cannot approve its own call");
    const [pending] = await pendingOf(base, "carol");
    assert.ok(pending, "carol sees the approval");
    assert.equal(pending.taskId, task.taskId);
    assert.equal(pending.tool, "deploy");
    assert.equal(pending.caller, "alice");
    assert.equal(typeof pending.argumentsDigest, "string");
    assert.equal("arguments" in pending, false, "no argument values unless configured");

    const forged = await approvalsApi(base, "carol", `/approvals/${task.taskId}.forged`, { decision: "approve" });
    assert.equal(forged.status, 404, "an id that is not the approval's own decides nothing");
    const byBob = await approvalsApi(base, "bob", `/approvals/${pending.approvalId}`, { decision: "approve" });
    assert.equal(byBob.status, 404, "someone outside the role learns nothing of it");
    const byCarol = await approvalsApi(base, "carol", `/approvals/${pending.approvalId}`, { decision: "approve" });
    assert.equal(byCarol.status, 200, JSON.stringify(byCarol.body));
    const done = await pollTask(stack.url, task.taskId as string, (t) => t.status !== "working");
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.match(JSON.stringify(done.result), /deployed api v7-secret/);
    assert.deepEqual(upstream.deployed.at(-1), { service: "api", version: "v7-secret" });

    const again = await approvalsApi(base, "dave", `/approvals/${pending.approvalId}`, { decision: "approve" });
    assert.equal(again.status, 409, "a used approval cannot be replayed");
  });

  test("a denial fails the task with the approver's reason; nothing reaches the upstream", async () => {
    const before = upstream.deployed.length;
    const task = await createTask(stack.url, "deploy", { service: "db", version: "9" });
    await pollTask(stack.url, task.taskId as string, (t) => /waiting for approval/.test(String(t.statusMessage)));
    const pending = (await pendingOf(base, "dave")).find((item) => item.taskId === task.taskId);
    assert.ok(pending);
    const bad = await approvalsApi(base, "dave", `/approvals/${pending.approvalId}`, { decision: "maybe" });
    assert.equal(bad.status, 400);
    const denied = await approvalsApi(base, "dave", `/approvals/${pending.approvalId}`, { decision: "deny", reason: "not on a Friday" });
    assert.equal(denied.status, 200, JSON.stringify(denied.body));
    const late = await approvalsApi(base, "carol", `/approvals/${pending.approvalId}`, { decision: "approve" });
    assert.equal(late.status, 409, "the first decision wins");
    const failed = await pollTask(stack.url, task.taskId as string, (t) => t.status !== "working");
    assert.equal(failed.status, "failed", JSON.stringify(failed));
    const error = failed.error as { data?: JsonObject; message: string };
    assert.equal(error.data?.reason, "approval_denied");
    assert.match(error.message, /dave denied approval \(not on a Friday\)/);
    assert.equal(upstream.deployed.length, before);
  });

  test("an approval nobody gives in time fails the task with approval_expired", async () => {
    const greetsBefore = upstream.started.filter((tool) => tool === "greet").length;
    const task = await createTask(stack.url, "greet", { name: "expire-soon" });
    const failed = await pollTask(stack.url, task.taskId as string, (t) => t.status !== "working", { timeoutMs: 5_000 });
    assert.equal(failed.status, "failed", JSON.stringify(failed));
    assert.equal((failed.error as { data?: JsonObject }).data?.reason, "approval_expired");
    assert.match(String((failed.error as { message: string }).message), /approvals\[1\]\.expiresAfterMs/);
    assert.equal(upstream.started.filter((tool) => tool === "greet").length, greetsBefore, "greet never ran");
  });

  test("the audit file has one line per decision and per call, with digests and without argument values", () => {
    const lines = readFileSync(auditFile, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as JsonObject);
    const actions = lines.map((line) => line.action);
    for (const action of [
      "access.hidden_call",
      "approval.approved",
      "approval.declined",
      "approval.denied",
      "approval.expired",
      "call.ended",
    ]) {
      assert.ok(actions.includes(action), `${action} in ${JSON.stringify(actions)}`);
    }
    const approved = lines.find((line) => line.action === "approval.approved" && line.by === "carol");
    assert.ok(approved, "carol's approval is on record");
    assert.equal(approved.tool, "deploy");
    assert.equal(approved.caller, "alice");
    assert.equal(typeof approved.argumentsDigest, "string");
    assert.ok(!readFileSync(auditFile, "utf8").includes("v7-secret"), "no argument values");
    assert.ok(lines.every((line) => !("arguments" in line)));
  });
});
