// Issue 9, problem 1: one identity's upstream session state never reaches another identity.
// Against @modelcontextprotocol/server-everything (Streamable HTTP), whose session resources
// (gzip-file-as-resource) and toggles (toggle-subscriber-updates) are per upstream session: a
// client talking to it directly never sees another client's. Through taskgate, alice and bob must
// not either.
// Run: node --import tsx --test test/e2e/realServers/upstreamSessionsPerIdentity.test.ts

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { inFrontOf } from "../../support/gatewayInFront.js";
import { resultOf } from "../../support/mcpClient.js";
import { call, callTool, expectComplete, textOf } from "../../support/realServerCalls.js";

const NONE = {};
const alice = { token: "alice", capabilities: NONE };
const bob = { token: "bob", capabilities: NONE };
/** "hello gateway" as a data: URI, so gzip-file-as-resource needs no network. */
const DATA_URI = "data:text/plain;base64,aGVsbG8gZ2F0ZXdheQ==";

describe("server-everything: session resources and toggles stay with the identity that made them", () => {
  const front = inFrontOf("everything");

  const listUris = async (who: typeof alice) => {
    const reply = await call(front.gateway.url, "resources/list", {}, who);
    const result = resultOf(reply);
    assert.ok(result, `resources/list failed for ${who.token}: ${JSON.stringify(reply.message)}`);
    return (result.resources as { uri: string }[]).map((resource) => resource.uri);
  };

  test("a session resource alice creates with gzip-file-as-resource is not in bob's resources/list and bob cannot read it", async () => {
    const name = `alice-secret-${randomUUID()}.gz`;
    const created = expectComplete(await callTool(front.gateway.url, "gzip-file-as-resource", { name, data: DATA_URI }, alice));
    const link = (created.content as JsonObject[]).find((block) => block.type === "resource_link");
    assert.ok(link, `expected a resource_link, got ${JSON.stringify(created)}`);
    const uri = link.uri as string;
    assert.equal(uri, `demo://resource/session/${name}`);

    assert.ok((await listUris(alice)).includes(uri), "alice sees the resource she created (same identity, same upstream session)");
    assert.equal((await listUris(bob)).includes(uri), false, "bob's resources/list must not show alice's session resource");

    const read = await call(front.gateway.url, "resources/read", { uri }, bob);
    assert.equal("result" in read.message, false, `bob must not read alice's resource, got ${JSON.stringify(read.message).slice(0, 300)}`);
    const error = read.message.error as { code: number; message: string };
    assert.equal(error.code, -32602, `bob gets 'not found' (-32602), got ${JSON.stringify(error)}`);
  });

  test("toggle-subscriber-updates is per identity: bob's first toggle starts his own updates instead of stopping alice's", async () => {
    const toggle = async (who: typeof alice) =>
      textOf(expectComplete(await callTool(front.gateway.url, "toggle-subscriber-updates", {}, who)));
    const session = (text: string) => /for session (\S+)/.exec(text)?.[1];

    const aliceOn = await toggle(alice);
    assert.match(aliceOn, /^Started simulated resource updated notifications for session/);
    const bobOn = await toggle(bob);
    try {
      assert.match(
        bobOn,
        /^Started simulated resource updated notifications for session/,
        "bob's toggle must not switch off alice's updates",
      );
      assert.notEqual(session(bobOn), session(aliceOn), "alice and bob must be on different upstream sessions");
    } finally {
      // Switch the server's 5-second timers off again, whatever state the toggles ended in.
      const switchOff = async (who: typeof alice) => {
        if (/^Started/.test(await toggle(who))) await toggle(who);
      };
      await switchOff(alice);
      if (session(bobOn) !== session(aliceOn)) await switchOff(bob);
    }
  });
});
