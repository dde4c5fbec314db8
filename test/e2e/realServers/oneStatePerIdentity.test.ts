// One identity is one client of the server (upstream.sessionsPer "identity", the default): a
// user's listen streams, inline calls and lists, whatever capabilities each request declares, land
// in one upstream session (stdio: one process), so state a server keeps per client stays whole;
// a second identity still gets its own. Against servers others wrote: server-everything over HTTP,
// @modelcontextprotocol/server-memory and @modelcontextprotocol/server-sequential-thinking over
// stdio. Also pinned: a shared MEMORY_FILE_PATH is one store for every process (the server's own
// storage is not isolated by taskgate), and the old split under upstream.sessionsPer "capabilities".
// Run: node --import tsx --test test/e2e/realServers/oneStatePerIdentity.test.ts

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { inFrontOf, ready, startGatewayOnCommand } from "../../support/gatewayInFront.js";
import { type Listen, openListen } from "../../support/listen.js";
import { scrape } from "../../support/metrics.js";
import { callTool, expectComplete, textOf } from "../../support/realServerCalls.js";
import { STDIO_COMMANDS } from "../../support/servers/thirdParty.js";

const NONE = {};
const FORMS = { elicitation: {} };
const SAMPLING = { sampling: {} };
const UPDATED = "notifications/resources/updated";
const ACK = "notifications/subscriptions/acknowledged";
/** Processes of `gateway` started since `before` (taskgate's own readiness check has one too). */
const startedSince = (gateway: Gateway, before: number[]) =>
  (gateway.upstreamProcesses?.() ?? []).filter((pid) => !before.includes(pid)).length;
const pidsOf = async (gateway: Gateway) => {
  await ready(gateway);
  return gateway.upstreamProcesses?.() ?? [];
};

/** How long an expected update may take (server-everything sends one every 5 s once toggled on). */
const UPDATE_WAIT_MS = 15_000;

const isUpdateOf = (uri: string) => (frame: JsonObject) =>
  frame.method === UPDATED && (frame.params as JsonObject | undefined)?.uri === uri;
const updatesOf = (listen: Listen, uri: string) => listen.frames.filter(isUpdateOf(uri)).length;

/** A listen stream of `token` (declaring nothing) following `uri`, once taskgate acknowledged it. */
async function listenTo(url: string, token: string, uri: string): Promise<Listen> {
  const listen = await openListen(url, { resourceSubscriptions: [uri] }, { token, capabilities: NONE, id: `${token}-listen` });
  assert.equal(listen.status, 200, `listen of ${token} refused: ${JSON.stringify(listen.json)}`);
  await listen.waitFor((frame) => frame.method === ACK, 10_000, "the subscription acknowledgement");
  return listen;
}

describe("server-everything (HTTP): one session per identity, whatever each request declares", () => {
  const URI = "demo://resource/static/document/architecture.md";
  const front = inFrontOf("everything");

  test("a toggle from a request declaring elicitation reaches alice's listen (declaring nothing); bob's stream gets none", async () => {
    const toggle = async (capabilities: JsonObject, token = "alice") =>
      textOf(expectComplete(await callTool(front.gateway.url, "toggle-subscriber-updates", {}, { token, capabilities })));
    const session = (text: string) => /for session (\S+)/.exec(text)?.[1];
    await ready(front.gateway);
    const sessionsBefore = (await scrape(front.gateway.url)).value("taskgate_upstream_sessions"); // taskgate's own readiness session
    const alice = await listenTo(front.gateway.url, "alice", URI);
    const bob = await listenTo(front.gateway.url, "bob", URI);
    try {
      const on = await toggle(FORMS);
      assert.match(on, /^Started simulated resource updated notifications/);
      await alice.waitFor(isUpdateOf(URI), UPDATE_WAIT_MS, "a resources/updated on alice's stream");
      await alice.waitFor((frame) => updatesOf(alice, URI) >= 2 && frame.method === UPDATED, UPDATE_WAIT_MS, "a second update");
      assert.equal(updatesOf(bob, URI), 0, "alice's toggle must not reach bob's stream (another identity, another session)");
      const off = await toggle(NONE);
      assert.match(off, /^Stopped simulated resource updates/, "the same session, toggled off from a request declaring nothing");
      assert.equal(session(off), session(on));
      // Two identities, each on one upstream session, although alice used three capability profiles.
      await callTool(front.gateway.url, "echo", { message: "sampling" }, { token: "alice", capabilities: SAMPLING });
      assert.equal((await scrape(front.gateway.url)).value("taskgate_upstream_sessions") - sessionsBefore, 2);
    } finally {
      alice.close();
      bob.close();
    }
  });
});

describe("server-memory (stdio): one process per identity; a change from any of the user's requests reaches their listen", () => {
  const URI = "memory://knowledge-graph";
  let dir: string;
  let gateway: Gateway;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "taskgate-memory-"));
    // One MEMORY_FILE_PATH for every process: the server's own storage, shared (see the last test).
    gateway = await startGatewayOnCommand(STDIO_COMMANDS.memory(), { upstream: { env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } } });
  });
  after(async () => {
    await gateway?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const create = (token: string, capabilities: JsonObject, name: string) =>
    callTool(gateway.url, "create_entities", { entities: [{ name, entityType: "person", observations: [] }] }, { token, capabilities });

  test("create_entities declaring elicitation updates alice's listen (declaring nothing); bob's listen stays quiet", async () => {
    const before = await pidsOf(gateway);
    const alice = await listenTo(gateway.url, "alice", URI);
    const bob = await listenTo(gateway.url, "bob", URI);
    try {
      expectComplete(await create("alice", FORMS, "Ada"));
      await alice.waitFor(isUpdateOf(URI), UPDATE_WAIT_MS, "a resources/updated on alice's stream");
      expectComplete(await create("alice", NONE, "Alan"));
      await alice.waitFor(() => updatesOf(alice, URI) >= 2, UPDATE_WAIT_MS, "the second update");
      assert.equal(updatesOf(bob, URI), 0, "alice's changes reach only alice's process's subscriber");
      assert.equal(startedSince(gateway, before), 2, "one process for alice, one for bob");
    } finally {
      alice.close();
      bob.close();
    }
  });

  test("a shared MEMORY_FILE_PATH is one store: bob's read_graph shows alice's entities (not isolated by taskgate)", async () => {
    expectComplete(await create("alice", SAMPLING, "Grace"));
    const graph = textOf(expectComplete(await callTool(gateway.url, "read_graph", {}, { token: "bob", capabilities: NONE })));
    assert.match(graph, /Grace/);
  });
});

/** One sequentialthinking step; returns the server's thoughtHistoryLength. */
async function think(url: string, token: string, capabilities: JsonObject, n: number): Promise<number> {
  const args = { thought: `step ${n}`, thoughtNumber: n, totalThoughts: 9, nextThoughtNeeded: true };
  const text = textOf(expectComplete(await callTool(url, "sequentialthinking", args, { token, capabilities })));
  return (JSON.parse(text) as { thoughtHistoryLength: number }).thoughtHistoryLength;
}

describe("server-sequential-thinking (stdio): a user's thought history stays whole across declared capabilities", () => {
  let gateway: Gateway;

  before(async () => {
    gateway = await startGatewayOnCommand(STDIO_COMMANDS.sequentialThinking(), { upstream: { env: { DISABLE_THOUGHT_LOGGING: "true" } } });
  });
  after(async () => gateway?.close());

  test("alice's calls declaring none, none, elicitation, sampling, none count 1..5; bob starts at 1", async () => {
    const before = await pidsOf(gateway);
    const lengths: number[] = [];
    for (const [n, capabilities] of [NONE, NONE, FORMS, SAMPLING, NONE].entries())
      lengths.push(await think(gateway.url, "alice", capabilities, n + 1));
    assert.deepEqual(lengths, [1, 2, 3, 4, 5]);
    assert.equal(await think(gateway.url, "bob", FORMS, 1), 1, "bob has a process (and a history) of his own");
    assert.equal(startedSince(gateway, before), 2, "one process for alice, one for bob");
  });
});

describe("server-sequential-thinking with upstream.sessionsPer capabilities: the old split, kept as an option", () => {
  let gateway: Gateway;

  before(async () => {
    gateway = await startGatewayOnCommand(STDIO_COMMANDS.sequentialThinking(), {
      upstream: { sessionsPer: "capabilities", env: { DISABLE_THOUGHT_LOGGING: "true" } },
    });
  });
  after(async () => gateway?.close());

  test("a call declaring elicitation runs in a process of its own: the histories split (1, 2, 1, 3)", async () => {
    const before = await pidsOf(gateway);
    const lengths: number[] = [];
    for (const [n, capabilities] of [NONE, NONE, FORMS, NONE].entries())
      lengths.push(await think(gateway.url, "alice", capabilities, n + 1));
    assert.deepEqual(lengths, [1, 2, 1, 3]);
    assert.equal(startedSince(gateway, before), 2, "alice alone holds two processes");
  });
});
