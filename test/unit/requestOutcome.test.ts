// What became of a request, as requests_total labels it (http/requestOutcome.ts): read from the
// request's log note and its response. Every outcome word, and the method label's fixed words.

import assert from "node:assert/strict";
import { test } from "node:test";
import { methodLabel, requestOutcome } from "../../src/http/requestOutcome.js";

test("outcomes, from the note and the response", () => {
  const cases: Array<[Record<string, unknown>, number, boolean, string]> = [
    [{ rpcMethod: "tools/list" }, 200, true, "ok"],
    [{ rpcMethod: "tools/call", outcome: "result" }, 200, true, "ok"],
    [{ rpcMethod: "tools/call", outcome: "tool_error" }, 200, true, "tool_error"],
    [{ rpcMethod: "tools/call", outcome: "input_required" }, 200, true, "input_required"],
    [{ rpcMethod: "tools/call", outcome: "task" }, 200, true, "task"],
    [{ rpcMethod: "tools/call", outcome: "error" }, 200, true, "error"],
    [{ rpcMethod: "tools/call", outcome: "missing_capability" }, 200, true, "error"],
    [{ rpcMethod: "tasks/get", error: -32602 }, 200, true, "error"],
    [{ rejected: "host_not_allowed" }, 403, true, "rejected"],
    [{ rejected: -32022 }, 400, true, "rejected"],
    [{ rejected: "temporarily_unavailable" }, 503, true, "failed"],
    [{ rpcMethod: "tools/list", error: -32603, reason: "upstream_unreachable" }, 502, true, "failed"],
    [{ rpcMethod: "tools/call", outcome: "client_disconnected" }, 200, false, "disconnected"],
    [{ rpcMethod: "tools/list" }, 200, false, "disconnected"],
    [{ rpcMethod: "subscriptions/listen", outcome: "listen" }, 200, false, "ok"],
    [{ notification: "notifications/initialized" }, 202, true, "ok"],
    [{ door: "legacy" }, 200, false, "ok"],
    [{ door: "legacy" }, 404, true, "error"],
    [{ door: "legacy" }, 502, true, "failed"],
    [{ rpcMethod: "tools/call", outcome: "constructor" }, 200, true, "ok"],
  ];
  for (const [note, status, finished, expected] of cases) {
    assert.equal(requestOutcome(note, status, finished), expected, JSON.stringify({ note, status, finished }));
  }
});

test("method labels: the method, else notification, legacy or none", () => {
  assert.equal(methodLabel({ rpcMethod: "tasks/get" }), "tasks/get");
  assert.equal(methodLabel({ notification: "notifications/cancelled" }), "notification");
  assert.equal(methodLabel({ door: "legacy" }), "legacy");
  assert.equal(methodLabel({ rejected: "invalid_token" }), "none");
});
