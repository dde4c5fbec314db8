// requestedSchemaCheck: does the content of an accepted form elicitation answer fit the question's
// `requestedSchema`? Checked with ajv (a real JSON Schema validator, with ajv-formats for `format`):
// types, numeric minimum/maximum, string minLength/maxLength/pattern/format, enum, oneOf/anyOf const
// options, arrays (items, minItems/maxItems), required, and additionalProperties when the schema sets
// it (otherwise extra properties are allowed: the upstream decides what to make of them).
//
// Each schema is compiled once: validators are cached by the schema object (WeakMap: a held question
// keeps its schema object for its whole life) and by the schema's JSON text (bounded, for questions
// read back from a task store as new objects). A schema ajv cannot compile (the upstream's bug: an
// unknown type, an unresolvable $ref) cannot be checked here; the answer then goes upstream unchecked
// rather than making the question unanswerable.
//
// The problem is returned as one sentence naming the property and the rule: "'count' must be <= 100".

import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS with `module.exports = plugin`; under NodeNext its typed default is the module.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as typeof addFormatsModule.default;

// strict: false — MCP schemas carry keywords ajv does not know (enumNames); they are annotations.
const ajv = new Ajv({ allErrors: false, strict: false, verbose: true, logger: false });
addFormats(ajv);

type Compiled = ValidateFunction | "uncheckable";

const byObject = new WeakMap<object, Compiled>();
const byText = new Map<string, Compiled>();
const BY_TEXT_MAX = 256;

/** The validator for a schema (compiled on first use), or "uncheckable". Exported for the cache tests. */
export function compiledRequestedSchema(schema: Record<string, unknown>): Compiled {
  const known = byObject.get(schema);
  if (known) return known;
  const text = JSON.stringify(schema);
  let validator = byText.get(text);
  if (validator) {
    byText.delete(text); // least recently used goes first
  } else {
    // $schema / $id are dropped: the elicitation subset means the same in every draft, and ajv would
    // refuse an unknown meta-schema URI or a second schema reusing an $id.
    const { $schema: _schema, $id: _id, ...body } = schema;
    try {
      validator = ajv.compile(body);
    } catch {
      validator = "uncheckable";
    } finally {
      ajv.removeSchema(body); // ajv would otherwise keep every compiled schema forever
    }
  }
  byText.set(text, validator);
  if (byText.size > BY_TEXT_MAX) byText.delete(byText.keys().next().value as string);
  byObject.set(schema, validator);
  return validator;
}

/** undefined when `content` fits `schema` (or the schema cannot be compiled); otherwise the problem. */
export function checkRequestedSchema(schema: Record<string, unknown>, content: Record<string, unknown>): string | undefined {
  return requestedSchemaProblem(schema, content)?.message;
}

/** The problem and the top-level property of `content` it is about (a form's field), when there is one. */
export function requestedSchemaProblem(
  schema: Record<string, unknown>,
  content: Record<string, unknown>,
): { message: string; property?: string } | undefined {
  const validate = compiledRequestedSchema(schema);
  if (validate === "uncheckable" || validate(content)) return undefined;
  const errors = validate.errors ?? [];
  // Errors inside a oneOf/anyOf branch are details of the oneOf/anyOf error: report the outermost.
  const outermost = errors.filter((e) => !errors.some((other) => other !== e && e.schemaPath.startsWith(`${other.schemaPath}/`)));
  const error = outermost[0] ?? errors[0];
  if (!error) return { message: "content does not fit the question's schema" };
  const property = propertyOf(error);
  return property === undefined ? { message: describe(error) } : { message: describe(error), property };
}

function propertyOf(error: ErrorObject): string | undefined {
  const [first] = error.instancePath.slice(1).split("/");
  if (first) return first.replace(/~1/g, "/").replace(/~0/g, "~");
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required") return String(params.missingProperty);
  if (error.keyword === "additionalProperties") return String(params.additionalProperty);
  return undefined;
}

function subjectOf(instancePath: string): string {
  if (instancePath === "") return "content";
  const segments = instancePath
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  const [first, ...rest] = segments;
  return `'${first}${rest.map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`)).join("")}'`;
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

function constOptions(branches: unknown): unknown[] | undefined {
  if (!Array.isArray(branches) || branches.length === 0) return undefined;
  const values = branches.map((b) => (b && typeof b === "object" && "const" in b ? (b as { const: unknown }).const : undefined));
  return values.every((v) => v !== undefined) ? values : undefined;
}

function describe(error: ErrorObject): string {
  const subject = subjectOf(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return `${subject === "content" ? "content" : subject} is missing the required property '${String(params.missingProperty)}'`;
    case "type":
      return `${subject} must be ${String(params.type).split(",").map(article).join(" or ")}`;
    case "enum":
      return `${subject} must be one of ${JSON.stringify(params.allowedValues)}`;
    case "const":
      return `${subject} must be ${JSON.stringify(params.allowedValue)}`;
    case "oneOf":
    case "anyOf": {
      const options = constOptions((error.parentSchema as Record<string, unknown> | undefined)?.[error.keyword]);
      return options
        ? `${subject} must be one of ${JSON.stringify(options)}`
        : `${subject} ${error.message ?? `must match the schema's ${error.keyword}`}`;
    }
    case "additionalProperties": {
      const where = subject === "content" ? "" : ` in ${subject}`;
      return `'${String(params.additionalProperty)}' is not allowed${where} (the question accepts no other properties)`;
    }
    case "format":
      return `${subject} must be a valid ${String(params.format)}`;
    default:
      return `${subject} ${error.message ?? `does not satisfy '${error.keyword}'`}`;
  }
}
