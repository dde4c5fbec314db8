// Issue 9, problem 8: an inline MRTR conversation works on any instance. Two taskgates share one
// real Redis (this file's own redis-server; store.kind redis, a fresh random key prefix, the same mrtr.secret) in front of
// simpleStreamableHttp: round 1 of collect-user-info (which asks on its call's POST stream) goes to
// A, its retry with the answer to B, and B completes the call that A holds. Another identity
// presenting the same requestState on B is refused like on A, and the call still completes. When
// the instance holding the call stops before the retry, B says the call is gone, and why.
// Run: node --import tsx --test test/e2e/realServers/mrtrAcrossInstances.test.ts

import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import { startGatewayInFront } from "../../support/gatewayInFront.js";
import { accept, callTool, expectComplete, expectError, expectInputRequired, FORMS, textOf } from "../../support/realServerCalls.js";
import { needsRedis, testRedisUrl } from "../../support/redisServer.js";
import type { ServerProcess } from "../../support/servers/serverProcess.js";
import { startThirdPartyServer } from "../../support/servers/thirdParty.js";

const PREFIX = `taskgate-test-${randomUUID()}`;
const SECRET = randomBytes(32).toString("hex");
const ARGS = { infoType: "contact" };
const CONTACT = { name: "Ada Lovelace", email: "ada@example.com" };

describe("simpleStreamableHttp (SDK 1.x) behind two taskgates sharing Redis", needsRedis, () => {
  let server: ServerProcess;
  let a: Gateway;
  let b: Gateway;
  let options: { store: { kind: "redis"; url: string; prefix: string }; mrtr: { secret: string } };

  before(async () => {
    options = { store: { kind: "redis", url: await testRedisUrl(), prefix: PREFIX }, mrtr: { secret: SECRET } };
    server = await startThirdPartyServer("simpleStreamableHttp");
    a = await startGatewayInFront(server.url, options);
    b = await startGatewayInFront(server.url, options);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await server?.stop();
  });

  const alice = { token: "alice", capabilities: FORMS };

  test("round 1 on instance A, round 2 on instance B: B completes the call A holds", async () => {
    const round = expectInputRequired(await callTool(a.url, "collect-user-info", ARGS, alice));
    assert.equal(round.inputRequests[round.key]!.method, "elicitation/create");
    const done = expectComplete(
      await callTool(b.url, "collect-user-info", ARGS, alice, {
        params: { requestState: round.requestState, inputResponses: { [round.key]: accept(CONTACT) } },
      }),
    );
    assert.match(textOf(done), /^Thank you! Collected contact information: .*"name": "Ada Lovelace"/s);
  });

  test("another identity presenting alice's requestState on B is refused with -32602, and alice then completes on B", async () => {
    const round = expectInputRequired(await callTool(a.url, "collect-user-info", ARGS, alice));
    const retry = { requestState: round.requestState, inputResponses: { [round.key]: accept(CONTACT) } };
    const refused = expectError(
      await callTool(b.url, "collect-user-info", ARGS, { token: "mallory", capabilities: FORMS }, { params: retry }),
      -32602,
    );
    assert.match(refused.message, /another identity/);
    const done = expectComplete(await callTool(b.url, "collect-user-info", ARGS, alice, { params: retry }));
    assert.match(textOf(done), /"email": "ada@example.com"/);
  });

  test("the instance holding the call stopped (a real close) before round 2: B answers -32602 at once, naming the cause", async () => {
    const c = await startGatewayInFront(server.url, options);
    let closed = false;
    try {
      const round = expectInputRequired(await callTool(c.url, "collect-user-info", ARGS, alice));
      await c.close();
      closed = true;
      const started = Date.now();
      const gone = expectError(
        await callTool(b.url, "collect-user-info", ARGS, alice, {
          params: { requestState: round.requestState, inputResponses: { [round.key]: accept(CONTACT) } },
        }),
        -32602,
      );
      assert.match(gone.message, /is gone: the taskgate instance holding it stopped or does not answer/);
      assert.deepEqual(gone.data, { reason: "holder_gone" });
      assert.ok(Date.now() - started < 2_000, `answered after ${Date.now() - started} ms`);
    } finally {
      if (!closed) await c.close();
    }
  });
});
