// checkInputResponse: does a client's answer fit the question it answers? Checked before the answer
// goes upstream, so a bad answer is refused with a message saying what is wrong (and the question
// stays open) instead of reaching a legacy server that may accept it.
// - elicitation/create: `action` is accept | decline | cancel; an accepted form answer needs a
//   `content` object that fits the question's requestedSchema (requestedSchemaCheck.ts, ajv).
//   URL-mode answers and declines/cancels carry no content to check.
// - sampling/createMessage: the SDK's CreateMessageResult schema (role, content of a known type,
//   model, optional stopReason); the tool-use variant when the question offered tools.
// - roots/list: the SDK's ListRootsResult schema (roots with file:// URIs).
// Returns undefined when the answer fits, otherwise one sentence naming the property and the rule.

import { CreateMessageResultSchema, CreateMessageResultWithToolsSchema, ListRootsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import type { InputRequest } from "../protocol/wire.js";
import { isObject } from "../util/json.js";
import { requestedSchemaProblem } from "./requestedSchemaCheck.js";

/** What is wrong with an answer, and where: `field` is `action`, `content` or a property of the form. */
export interface AnswerProblem {
  message: string;
  field?: string;
}

function checkElicitation(request: InputRequest, answer: Record<string, unknown>): AnswerProblem | undefined {
  if (!["accept", "decline", "cancel"].includes(answer.action as string)) {
    return { message: "action must be 'accept', 'decline' or 'cancel'", field: "action" };
  }
  const params = request.params as { mode?: string; requestedSchema?: unknown };
  if (answer.action !== "accept" || params.mode === "url") return undefined;
  if (!isObject(answer.content)) return { message: "an accepted form answer needs a 'content' object", field: "content" };
  if (!isObject(params.requestedSchema)) return undefined;
  const problem = requestedSchemaProblem(params.requestedSchema, answer.content);
  if (!problem) return undefined;
  return problem.property === undefined
    ? { message: problem.message, field: "content" }
    : { message: problem.message, field: problem.property };
}

interface ShapeIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: unknown;
  values?: unknown[];
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/** The first problem zod found, as "'content.text' is required (a string)" for the person who wrote the answer. */
function describeIssue(what: string, issue: ShapeIssue): string {
  const path = issue.path
    .map((segment, index) => (typeof segment === "number" ? `[${segment}]` : `${index === 0 ? "" : "."}${String(segment)}`))
    .join("");
  const subject = path === "" ? what : `${what}: '${path}'`;
  switch (issue.code) {
    case "invalid_type": {
      const expected = article(String(issue.expected));
      return /received undefined/.test(issue.message) ? `${subject} is required (${expected})` : `${subject} must be ${expected}`;
    }
    case "invalid_value":
      return `${subject} must be one of ${(issue.values ?? []).map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_union":
      return path.startsWith("content")
        ? `${subject} is not a content block of a known type (e.g. text, image or audio, with their fields)`
        : `${subject} is not of an accepted type`;
    default:
      return `${subject} ${issue.message.replace(/^Invalid (input|string): /, "")}`;
  }
}

type Shape = { safeParse(value: unknown): { success: true } | { success: false; error: { issues: ShapeIssue[] } } };

function checkShape(schema: Shape, what: string, answer: unknown): string | undefined {
  const parsed = schema.safeParse(answer);
  if (parsed.success) return undefined;
  const [first] = parsed.error.issues;
  return first ? describeIssue(what, first) : `${what} does not have the expected shape`;
}

export function checkInputResponse(request: InputRequest, answer: unknown): string | undefined {
  return answerProblem(request, answer)?.message;
}

/** The same check, saying which part of the answer is wrong (the inventory's 422 names it). */
export function answerProblem(request: InputRequest, answer: unknown): AnswerProblem | undefined {
  if (!isObject(answer)) return { message: "each answer must be a JSON object" };
  const shaped = (message: string | undefined) => (message === undefined ? undefined : { message });
  switch (request.method) {
    case "elicitation/create":
      return checkElicitation(request, answer);
    case "sampling/createMessage": {
      const withTools = Array.isArray((request.params as { tools?: unknown }).tools);
      return shaped(checkShape(withTools ? CreateMessageResultWithToolsSchema : CreateMessageResultSchema, "a sampling answer", answer));
    }
    case "roots/list":
      return shaped(checkShape(ListRootsResultSchema, "a roots answer", answer));
  }
}
