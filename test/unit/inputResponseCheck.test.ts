// checkInputResponse: answers are checked against the question before going upstream — form content
// against the question's requestedSchema with ajv (bounds, lengths, pattern, format, enum, oneOf/anyOf
// consts, array items, required, additionalProperties), sampling answers against the SDK's
// CreateMessageResult schemas, roots answers against ListRootsResult. Messages name the property and
// the rule. Schemas are compiled once.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { InputRequest } from "../../src/protocol/wire.js";
import { checkInputResponse } from "../../src/questions/inputResponseCheck.js";
import { compiledRequestedSchema } from "../../src/questions/requestedSchemaCheck.js";

const form = (requestedSchema: Record<string, unknown>): InputRequest => ({
  method: "elicitation/create",
  params: { mode: "form", message: "Please fill in", requestedSchema } as InputRequest["params"],
});
const accept = (content: unknown) => ({ action: "accept", content });

const schema = {
  type: "object",
  properties: {
    count: { type: "integer", minimum: 1, maximum: 100 },
    ratio: { type: "number", exclusiveMaximum: 1 },
    name: { type: "string", minLength: 2, maxLength: 5, pattern: "^[a-z]+$" },
    email: { type: "string", format: "email" },
    when: { type: "string", format: "date" },
    colour: {
      type: "string",
      oneOf: [
        { const: "red", title: "Red" },
        { const: "green", title: "Green" },
      ],
    },
    size: { type: "string", enum: ["S", "M", "L"], enumNames: ["Small", "Medium", "Large"] },
    tags: { type: "array", items: { type: "string", enum: ["a", "b"] }, maxItems: 2 },
    picks: {
      type: "array",
      items: {
        anyOf: [
          { const: "x", title: "X" },
          { const: "y", title: "Y" },
        ],
      },
      minItems: 1,
    },
    agree: { type: "boolean" },
  },
  required: ["count"],
};

describe("checkInputResponse: form elicitation content against requestedSchema (ajv)", () => {
  const check = (content: unknown, s: Record<string, unknown> = schema) => checkInputResponse(form(s), accept(content));

  it("the three answers issue 11 saw forwarded: a number over maximum, a oneOf const outside the list, an array item outside its enum", () => {
    assert.equal(check({ count: 500 }), "'count' must be <= 100");
    assert.equal(check({ count: 5, colour: "blue" }), `'colour' must be one of ["red","green"]`);
    assert.equal(check({ count: 5, tags: ["a", "c"] }), `'tags[1]' must be one of ["a","b"]`);
  });

  it("numbers: integer, minimum, exclusiveMaximum", () => {
    assert.equal(check({ count: 5.5 }), "'count' must be an integer");
    assert.equal(check({ count: 0 }), "'count' must be >= 1");
    assert.equal(check({ count: 5, ratio: 1 }), "'ratio' must be < 1");
    assert.equal(check({ count: "5" }), "'count' must be an integer");
  });

  it("strings: minLength, maxLength, pattern, format", () => {
    assert.equal(check({ count: 5, name: "a" }), "'name' must NOT have fewer than 2 characters");
    assert.equal(check({ count: 5, name: "abcdef" }), "'name' must NOT have more than 5 characters");
    assert.equal(check({ count: 5, name: "AB" }), `'name' must match pattern "^[a-z]+$"`);
    assert.equal(check({ count: 5, email: "not-an-address" }), "'email' must be a valid email");
    assert.equal(check({ count: 5, when: "2026-13-45" }), "'when' must be a valid date");
    assert.equal(check({ count: 5, name: 42 }), "'name' must be a string");
  });

  it("enums (with enumNames), anyOf consts for multi-select, array bounds, booleans", () => {
    assert.equal(check({ count: 5, size: "XL" }), `'size' must be one of ["S","M","L"]`);
    assert.equal(check({ count: 5, picks: ["x", "z"] }), `'picks[1]' must be one of ["x","y"]`);
    assert.equal(check({ count: 5, picks: [] }), "'picks' must NOT have fewer than 1 items");
    assert.equal(check({ count: 5, tags: ["a", "b", "a"] }), "'tags' must NOT have more than 2 items");
    assert.equal(check({ count: 5, agree: "yes" }), "'agree' must be a boolean");
  });

  it("required properties", () => {
    assert.equal(check({}), "content is missing the required property 'count'");
  });

  it("a full valid answer passes; extra properties are allowed unless the schema says otherwise", () => {
    const valid = {
      count: 100,
      ratio: 0.5,
      name: "ada",
      email: "ada@example.com",
      when: "2026-07-28",
      colour: "green",
      size: "M",
      tags: ["b"],
      picks: ["x", "y"],
      agree: true,
    };
    assert.equal(check(valid), undefined);
    assert.equal(check({ ...valid, note: "extra" }), undefined);
    assert.equal(
      check({ ...valid, note: "extra" }, { ...schema, additionalProperties: false }),
      "'note' is not allowed (the question accepts no other properties)",
    );
  });

  it("a schema naming a newer draft ($schema) and one with local $refs are checked too", () => {
    const draft2020 = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { n: { type: "integer", maximum: 3 } },
    };
    assert.equal(check({ n: 4 }, draft2020), "'n' must be <= 3");
    const withRef = {
      type: "object",
      definitions: { small: { type: "integer", maximum: 3 } },
      properties: { n: { $ref: "#/definitions/small" } },
    };
    assert.equal(check({ n: 4 }, withRef), "'n' must be <= 3");
    assert.equal(check({ n: 2 }, withRef), undefined);
  });

  it("a schema ajv cannot compile (the upstream's bug) does not make the question unanswerable", () => {
    assert.equal(check({ a: 1 }, { type: "object", properties: { a: { type: "strnig" } } }), undefined);
    assert.equal(compiledRequestedSchema({ type: "object", properties: { a: { type: "strnig" } } }), "uncheckable");
  });

  it("compiles each schema once: same object, or an equal schema read back as a new object", () => {
    const s = { type: "object", properties: { z: { type: "string" } } };
    const first = compiledRequestedSchema(s);
    assert.equal(typeof first, "function");
    assert.equal(compiledRequestedSchema(s), first);
    assert.equal(compiledRequestedSchema(JSON.parse(JSON.stringify(s))), first);
    assert.notEqual(compiledRequestedSchema({ type: "object", properties: { z: { type: "number" } } }), first);
  });

  it("action and content shape; decline, cancel and URL mode carry nothing to check", () => {
    assert.equal(checkInputResponse(form(schema), { action: "maybe" }), "action must be 'accept', 'decline' or 'cancel'");
    assert.equal(checkInputResponse(form(schema), { action: "accept" }), "an accepted form answer needs a 'content' object");
    assert.equal(checkInputResponse(form(schema), accept([1])), "an accepted form answer needs a 'content' object");
    assert.equal(checkInputResponse(form(schema), { action: "decline" }), undefined);
    assert.equal(checkInputResponse(form(schema), { action: "cancel", content: { count: 999 } }), undefined);
    const url: InputRequest = {
      method: "elicitation/create",
      params: { mode: "url", message: "Sign in", url: "https://x", elicitationId: "e1" },
    };
    assert.equal(checkInputResponse(url, { action: "accept" }), undefined);
    assert.equal(checkInputResponse(form(schema), "accept"), "each answer must be a JSON object");
  });
});

describe("checkInputResponse: sampling answers (SDK CreateMessageResult schemas)", () => {
  const sampling: InputRequest = { method: "sampling/createMessage", params: { messages: [], maxTokens: 10 } };
  const good = { role: "assistant", content: { type: "text", text: "Pong" }, model: "m-1" };

  it("a well-formed answer passes, with or without stopReason", () => {
    assert.equal(checkInputResponse(sampling, good), undefined);
    assert.equal(checkInputResponse(sampling, { ...good, stopReason: "endTurn" }), undefined);
    assert.equal(checkInputResponse(sampling, { ...good, content: { type: "image", data: "aGk=", mimeType: "image/png" } }), undefined);
  });

  it("names what is wrong", () => {
    const { model: _model, ...noModel } = good;
    assert.equal(checkInputResponse(sampling, noModel), "a sampling answer: 'model' is required (a string)");
    assert.equal(checkInputResponse(sampling, { ...good, role: "bot" }), `a sampling answer: 'role' must be one of "user", "assistant"`);
    assert.equal(
      checkInputResponse(sampling, { ...good, content: { type: "text" } }),
      "a sampling answer: 'content.text' is required (a string)",
    );
    assert.match(
      checkInputResponse(sampling, { ...good, content: { type: "video" } }) ?? "",
      /^a sampling answer: 'content.type' is not a content block of a known type/,
    );
    assert.equal(checkInputResponse(sampling, { ...good, stopReason: 5 }), "a sampling answer: 'stopReason' is not of an accepted type");
  });

  it("tool-use content only when the question offered tools", () => {
    const toolUse = { ...good, content: [{ type: "tool_use", id: "t1", name: "search", input: { q: "x" } }], stopReason: "toolUse" };
    assert.ok(checkInputResponse(sampling, toolUse), "refused without tools in the question");
    const withTools: InputRequest = {
      method: "sampling/createMessage",
      params: { messages: [], maxTokens: 10, tools: [{ name: "search", inputSchema: { type: "object" } }] },
    };
    assert.equal(checkInputResponse(withTools, toolUse), undefined);
  });
});

describe("checkInputResponse: roots answers (SDK ListRootsResult schema)", () => {
  const roots: InputRequest = { method: "roots/list", params: {} };

  it("file:// roots (or none) pass; a missing or non-file uri is named", () => {
    assert.equal(checkInputResponse(roots, { roots: [] }), undefined);
    assert.equal(checkInputResponse(roots, { roots: [{ uri: "file:///home/ada/project", name: "project" }] }), undefined);
    assert.equal(checkInputResponse(roots, { roots: [{ name: "no uri" }] }), "a roots answer: 'roots[0].uri' is required (a string)");
    assert.equal(
      checkInputResponse(roots, { roots: [{ uri: "https://example.com" }] }),
      `a roots answer: 'roots[0].uri' must start with "file://"`,
    );
    assert.equal(checkInputResponse(roots, {}), "a roots answer: 'roots' is required (an array)");
  });
});
