// Issue 9, problem 8: an inline MRTR conversation works on any instance. Two taskgates share one
// real Redis (store.kind redis, a fresh random key prefix, the same mrtr.secret) in front of
// simpleStreamableHttp: round 1 of collect-user-info (which asks on its call's POST stream) goes to
// A, its retry with the answer to B, and B completes the call that A holds. Another identity
// presenting the same requestState on B is refused like on A, and the call still completes.
// Run: node --import tsx --test test/e2e/realServers/mrtrAcrossInstances.test.ts

import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { createClient } from "@redis/client";
import type { Gateway } from "../../../src/gateway.js";
import { accept, callTool, expectComplete, expectError, expectInputRequired, FORMS, textOf } from "./calls.js";
import { startGatewayInFront } from "./gatewayInFront.js";
import type { ServerProcess } from "./serverProcess.js";
import { startThirdPartyServer } from "./thirdPartyServers.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const PREFIX = `taskgate-test-${randomUUID()}`;
const SECRET = randomBytes(32).toString("hex");
const ARGS = { infoType: "contact" };
const CONTACT = { name: "Ada Lovelace", email: "ada@example.com" };

describe("simpleStreamableHttp (SDK 1.x) behind two taskgates sharing Redis", () => {
  let server: ServerProcess;
  let a: Gateway;
  let b: Gateway;

  before(async () => {
    server = await startThirdPartyServer("simpleStreamableHttp");
    const options = { store: { kind: "redis" as const, url: REDIS_URL, prefix: PREFIX }, mrtr: { secret: SECRET } };
    a = await startGatewayInFront(server.url, options);
    b = await startGatewayInFront(server.url, options);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await server?.stop();
    const client = createClient({ url: REDIS_URL });
    await client.connect();
    for await (const keys of client.scanIterator({ MATCH: `${PREFIX}*`, COUNT: 500 })) if (keys.length > 0) await client.del(keys);
    await client.close();
  });

  const alice = { token: "alice", capabilities: FORMS };

  test("round 1 on instance A, round 2 on instance B: B completes the call A holds", async () => {
    const round = expectInputRequired(await callTool(a.url, "collect-user-info", ARGS, alice));
    assert.equal(round.inputRequests[round.key]!.method, "elicitation/create");
    const done = expectComplete(
      await callTool(b.url, "collect-user-info", ARGS, alice, { params: { requestState: round.requestState, inputResponses: { [round.key]: accept(CONTACT) } } }),
    );
    assert.match(textOf(done), /^Thank you! Collected contact information: .*"name": "Ada Lovelace"/s);
  });

  test("another identity presenting alice's requestState on B is refused with -32602, and alice then completes on B", async () => {
    const round = expectInputRequired(await callTool(a.url, "collect-user-info", ARGS, alice));
    const retry = { requestState: round.requestState, inputResponses: { [round.key]: accept(CONTACT) } };
    const refused = expectError(await callTool(b.url, "collect-user-info", ARGS, { token: "mallory", capabilities: FORMS }, { params: retry }), -32602);
    assert.match(refused.message, /another identity/);
    const done = expectComplete(await callTool(b.url, "collect-user-info", ARGS, alice, { params: retry }));
    assert.match(textOf(done), /"email": "ada@example.com"/);
  });
});
