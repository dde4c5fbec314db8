// Checks a client's answer against the question it answers before it goes upstream, so a bad
// answer is refused with a message saying what is wrong and the question stays open.
// Form answers are checked against the flat, primitive-only requestedSchema MCP allows.

import type { InputRequest } from "../protocol/wire.js";

type Schema = { type?: string; enum?: unknown[]; minimum?: number; maximum?: number };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function checkPrimitive(name: string, value: unknown, schema: Schema): string | undefined {
  const type = schema.type;
  if (type === "boolean" && typeof value !== "boolean") return `'${name}' must be a boolean`;
  if (type === "string" && typeof value !== "string") return `'${name}' must be a string`;
  if (type === "number" && typeof value !== "number") return `'${name}' must be a number`;
  if (type === "integer" && !Number.isInteger(value)) return `'${name}' must be an integer`;
  if (type === "array" && !Array.isArray(value)) return `'${name}' must be an array`;
  if (schema.enum && !schema.enum.includes(value)) return `'${name}' must be one of ${JSON.stringify(schema.enum)}`;
  return undefined;
}

function checkElicitation(request: InputRequest, answer: Record<string, unknown>): string | undefined {
  if (!["accept", "decline", "cancel"].includes(answer.action as string)) {
    return "action must be 'accept', 'decline' or 'cancel'";
  }
  const params = request.params as { mode?: string; requestedSchema?: { properties?: Record<string, Schema>; required?: string[] } };
  if (answer.action !== "accept" || params.mode === "url") return undefined;
  if (!isObject(answer.content)) return "an accepted form answer needs a 'content' object";
  const properties = params.requestedSchema?.properties ?? {};
  for (const name of params.requestedSchema?.required ?? []) {
    if (!(name in answer.content)) return `content is missing the required property '${name}'`;
  }
  for (const [name, value] of Object.entries(answer.content)) {
    const schema = properties[name];
    if (!schema) continue; // JSON Schema allows extra properties; the upstream decides what to make of them
    const problem = checkPrimitive(name, value, schema);
    if (problem) return problem;
  }
  return undefined;
}

/** undefined when the answer fits the question; otherwise what is wrong with it. */
export function checkInputResponse(request: InputRequest, answer: unknown): string | undefined {
  if (!isObject(answer)) return "each answer must be a JSON object";
  switch (request.method) {
    case "elicitation/create":
      return checkElicitation(request, answer);
    case "sampling/createMessage":
      if (typeof answer.role !== "string" || !isObject(answer.content) || typeof answer.model !== "string") {
        return "a sampling answer needs 'role', 'content' (object) and 'model'";
      }
      return undefined;
    case "roots/list":
      if (!Array.isArray(answer.roots) || !answer.roots.every((r) => isObject(r) && typeof r.uri === "string")) {
        return "a roots answer needs 'roots': an array of objects with a 'uri' string";
      }
      return undefined;
  }
}
