// RelayedStates: a modern backend's requestState, sealed for the caller, path and call that got it.
// Each way a retry can differ is refused with -32602 naming it; the backend's state comes back only
// for the same binding, from any instance with the same mrtr.secret.
// Run: node --import tsx --test test/unit/relayedStates.test.ts

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { RelayedStates, type StateBinding } from "../../src/methods/relayedStates.js";
import { RpcError } from "../../src/protocol/errors.js";

const ISSUED: StateBinding = {
  owner: "owner-alice",
  endpoint: "/mcp/ops",
  method: "tools/call",
  params: { name: "deploy", arguments: { service: "web", version: 9 } },
};

function refusal(states: RelayedStates, token: unknown, by: StateBinding): string {
  try {
    states.open(token, by);
  } catch (error) {
    assert.ok(error instanceof RpcError);
    assert.equal(error.code, -32602);
    return error.message;
  }
  assert.fail("the state was accepted");
}

describe("RelayedStates", () => {
  const states = new RelayedStates("one secret for every instance");
  const token = states.seal("backend-state-42", ISSUED);

  test("the same binding gets the backend's state back, on another instance with the same secret too", () => {
    assert.match(token, /^rs\.[A-Za-z0-9_-]+$/);
    assert.ok(!token.includes("backend-state-42"));
    assert.equal(states.open(token, ISSUED), "backend-state-42");
    const reordered = { ...ISSUED, params: { arguments: { version: 9, service: "web" }, name: "deploy", inputResponses: {} } };
    assert.equal(new RelayedStates("one secret for every instance").open(token, reordered), "backend-state-42");
  });

  test("each other binding is refused, saying what differs", () => {
    assert.match(refusal(states, token, { ...ISSUED, owner: "owner-bob" }), /another identity/);
    assert.match(refusal(states, token, { ...ISSUED, endpoint: "/mcp" }), /another endpoint/);
    assert.match(refusal(states, token, { ...ISSUED, params: { ...ISSUED.params, name: "rollback" } }), /tools\/call 'deploy'/);
    assert.match(refusal(states, token, { ...ISSUED, method: "prompts/get" }), /not prompts\/get/);
    assert.match(refusal(states, token, { ...ISSUED, params: { name: "deploy", arguments: { service: "db" } } }), /other arguments/);
  });

  test("a state that is not taskgate's, altered, or sealed under another secret is refused", () => {
    for (const bad of ["backend-state-42", 42, "rs.", `rs.${"A".repeat(60)}`, `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`]) {
      assert.match(refusal(states, bad, ISSUED), /malformed or altered/);
    }
    assert.match(refusal(new RelayedStates("another secret"), token, ISSUED), /malformed or altered/);
  });
});
