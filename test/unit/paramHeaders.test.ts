import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkParamHeaders, paramHeadersOf } from "../../src/protocol/paramHeaders.js";

const schema = {
  type: "object",
  properties: {
    region: { type: "string", "x-mcp-header": "Region" },
    days: { type: "integer", "x-mcp-header": "Days" },
    note: { type: "string" },
  },
};
const params = paramHeadersOf(schema);

describe("Mcp-Param-* headers", () => {
  it("reads the x-mcp-header properties of a tool's input schema", () => {
    assert.deepEqual(params, { Region: "region", Days: "days" });
    assert.deepEqual(paramHeadersOf({ type: "object" }), {});
    assert.deepEqual(paramHeadersOf(undefined), {});
  });

  it("accepts equal values: plain, base64-encoded, numbers compared numerically, names case-insensitive", () => {
    assert.equal(
      checkParamHeaders({ "mcp-param-region": "Hello", "mcp-param-days": "3" }, params, { region: "Hello", days: 3 }),
      undefined,
    );
    assert.equal(checkParamHeaders({ "mcp-param-region": "=?base64?SGVsbG8=?=" }, params, { region: "Hello" }), undefined);
    assert.equal(
      checkParamHeaders({ "MCP-PARAM-REGION": "  Hello  ", "mcp-param-days": "03" }, params, { region: "Hello", days: 3 }),
      undefined,
    );
    // Only the prefix or only the suffix: a literal value.
    assert.equal(checkParamHeaders({ "mcp-param-region": "SGVsbG8=" }, params, { region: "SGVsbG8=" }), undefined);
    assert.equal(checkParamHeaders({ "mcp-param-region": "=?base64?SGVsbG8=" }, params, { region: "=?base64?SGVsbG8=" }), undefined);
  });

  it("an absent or null argument needs no header", () => {
    assert.equal(checkParamHeaders({}, params, {}), undefined);
    assert.equal(checkParamHeaders({}, params, { region: null }), undefined);
    assert.equal(checkParamHeaders({}, params, undefined), undefined);
  });

  const rejects = (headers: Record<string, string>, args: Record<string, unknown>, message: RegExp) => {
    const error = checkParamHeaders(headers, params, args);
    assert.ok(error, "expected a rejection");
    assert.equal(error.code, -32020);
    assert.equal(error.httpStatus, 400);
    assert.match(error.message, message);
  };

  it("rejects a missing header for a present argument, naming it and the expected value", () => {
    rejects({}, { region: "Hello" }, /Missing required header Mcp-Param-Region \(expected 'Hello'/);
  });
  it("rejects a mismatch", () => {
    rejects(
      { "mcp-param-region": "Paris" },
      { region: "Hello" },
      /Mcp-Param-Region header value 'Paris' does not match argument 'region' value 'Hello'/,
    );
    rejects({ "mcp-param-region": "Hello", "mcp-param-days": "4" }, { region: "Hello", days: 3 }, /Mcp-Param-Days/);
  });
  it("rejects malformed base64 (bad padding, bad alphabet)", () => {
    rejects({ "mcp-param-region": "=?base64?SGVsbG8?=" }, { region: "Hello" }, /Mcp-Param-Region is malformed/);
    rejects({ "mcp-param-region": "=?base64?SGVs!!!bG8=?=" }, { region: "Hello" }, /Mcp-Param-Region is malformed/);
  });
  it("rejects a header for an absent argument", () => {
    rejects(
      { "mcp-param-region": "x", "mcp-param-days": "3" },
      { region: "x", note: "y" },
      /Mcp-Param-Days is set but argument 'days' is absent/,
    );
  });
});
