// A form from an elicitation's requestedSchema (a flat object of primitive properties): strings
// (format email/uri/date/date-time, minLength, maxLength, pattern), numbers and integers with
// bounds, booleans, single choices (enum, enumNames, oneOf/anyOf of const+title) as a select,
// multi-selects (an array of enum or anyOf items) as checkboxes, defaults and required fields.
// Every field has a visible label (the schema's title, else its description, else its key) and a
// place for its error. check() applies the schema's rules in the page; taskgate checks the answer
// again and its message for a field is shown in the same place (showError).

/**
 * @typedef {{ type?: string, title?: string, description?: string, default?: unknown, format?: string,
 *   minLength?: number, maxLength?: number, pattern?: string, minimum?: number, maximum?: number,
 *   exclusiveMinimum?: number, exclusiveMaximum?: number, enum?: unknown[], enumNames?: string[],
 *   oneOf?: Property[], anyOf?: Property[], const?: unknown, items?: Property, minItems?: number, maxItems?: number }} Property
 * @typedef {{ type?: string, properties?: Record<string, Property>, required?: string[] }} RequestedSchema
 * @typedef {{ value: unknown, title: string }} Choice
 * @typedef {{ key: string, property: Property, required: boolean, read: () => unknown, error: HTMLElement,
 *   control: HTMLElement }} Field
 */

let formCount = 0;

/**
 * @param {string} tag
 * @param {Record<string, string>} [attributes]
 * @param {(Node | string)[]} [children]
 * @returns {HTMLElement}
 */
export function el(tag, attributes = {}, children = []) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/** @param {Property} property @returns {Choice[] | undefined} */
function choicesOf(property) {
  const listed = property.oneOf ?? property.anyOf;
  if (Array.isArray(listed)) return listed.map((option) => ({ value: option.const, title: option.title ?? String(option.const) }));
  if (Array.isArray(property.enum)) return property.enum.map((value, i) => ({ value, title: property.enumNames?.[i] ?? String(value) }));
  return undefined;
}

/** @param {string} key @param {Property} property */
const labelOf = (key, property) => property.title ?? property.description ?? key;

const INPUT_TYPES = /** @type {Record<string, string>} */ ({ email: "email", uri: "url", date: "date", "date-time": "datetime-local" });

/**
 * @param {RequestedSchema} schema
 * @returns {{ element: HTMLElement, fields: Field[] }}
 */
export function buildFields(schema) {
  const prefix = `q${++formCount}`;
  const required = new Set(schema.required ?? []);
  const element = el("div", { class: "fields" });
  /** @type {Field[]} */
  const fields = [];
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    const field = buildField(`${prefix}-${key.replace(/[^A-Za-z0-9_-]/g, "_")}`, key, property, required.has(key));
    fields.push(field.field);
    element.append(field.node);
  }
  return { element, fields };
}

/**
 * @param {string} id @param {string} key @param {Property} property @param {boolean} required
 * @returns {{ node: HTMLElement, field: Field }}
 */
function buildField(id, key, property, required) {
  const title = labelOf(key, property);
  const error = el("p", { class: "error", id: `${id}-error`, role: "alert" });
  error.hidden = true;
  const hint =
    property.title !== undefined && property.description !== undefined
      ? el("p", { class: "hint", id: `${id}-hint` }, [property.description])
      : undefined;
  const describedBy = [hint ? `${id}-hint` : "", `${id}-error`].filter(Boolean).join(" ");
  const mark = required ? [el("span", { class: "required", "aria-hidden": "true" }, [" *"])] : [];
  const made = makeControl(id, property, required, title, mark);
  made.control.setAttribute("aria-describedby", describedBy);
  const node = el("div", { class: `field field-${made.kind}`, "data-field": key }, [...made.nodes, ...(hint ? [hint] : []), error]);
  return { node, field: { key, property, required, read: made.read, error, control: made.control } };
}

/**
 * @param {string} id @param {Property} property @param {boolean} required @param {string} title @param {HTMLElement[]} mark
 * @returns {{ kind: string, nodes: HTMLElement[], control: HTMLElement, read: () => unknown }}
 */
function makeControl(id, property, required, title, mark) {
  if (property.type === "boolean") {
    const box = /** @type {HTMLInputElement} */ (el("input", { type: "checkbox", id }));
    box.checked = property.default === true;
    return { kind: "boolean", nodes: [el("label", { for: id }, [box, ` ${title}`, ...mark])], control: box, read: () => box.checked };
  }
  const items = property.type === "array" && property.items ? choicesOf(property.items) : undefined;
  if (items) return multiSelect(id, property, items, title, mark);
  const choices = choicesOf(property);
  if (choices) return singleSelect(id, property, choices, required, title, mark);
  const label = el("label", { for: id }, [title, ...mark]);
  const numeric = property.type === "number" || property.type === "integer";
  const input = /** @type {HTMLInputElement} */ (
    el("input", { id, name: id, type: numeric ? "number" : (INPUT_TYPES[property.format ?? ""] ?? "text") })
  );
  if (numeric) {
    input.step = property.type === "integer" ? "1" : "any";
    if (property.minimum !== undefined) input.min = String(property.minimum);
    if (property.maximum !== undefined) input.max = String(property.maximum);
  }
  if (property.maxLength !== undefined) input.maxLength = property.maxLength * 2; // the check, not the box, says what is too long
  if (property.default !== undefined) input.value = String(property.default);
  const read = () => {
    const text = input.value.trim();
    if (text === "") return undefined;
    if (numeric) return Number(text);
    if (property.format === "date-time") return Number.isNaN(Date.parse(text)) ? text : new Date(text).toISOString();
    return input.value;
  };
  return { kind: numeric ? "number" : "text", nodes: [label, input], control: input, read };
}

/**
 * @param {string} id @param {Property} property @param {Choice[]} choices @param {boolean} required @param {string} title
 * @param {HTMLElement[]} mark
 */
function singleSelect(id, property, choices, required, title, mark) {
  const select = /** @type {HTMLSelectElement} */ (el("select", { id }));
  if (!required || property.default === undefined) select.append(el("option", { value: "" }, [required ? "Choose…" : "—"]));
  for (const [i, choice] of choices.entries()) {
    const option = el("option", { value: String(i) }, [choice.title]);
    if (choice.value === property.default) option.setAttribute("selected", "");
    select.append(option);
  }
  // An option's value is its index; one that is not an index (a page tampered with) is sent as it is, for taskgate to judge.
  const read = () => (select.value === "" ? undefined : /^\d+$/.test(select.value) ? choices[Number(select.value)]?.value : select.value);
  return { kind: "select", nodes: [el("label", { for: id }, [title, ...mark]), select], control: select, read };
}

/**
 * @param {string} id @param {Property} property @param {Choice[]} choices @param {string} title @param {HTMLElement[]} mark
 */
function multiSelect(id, property, choices, title, mark) {
  const chosen = Array.isArray(property.default) ? property.default : [];
  const legend = el("legend", { id: `${id}-legend` }, [title, ...mark]);
  const boxes = choices.map((choice, i) => {
    const box = /** @type {HTMLInputElement} */ (el("input", { type: "checkbox", id: `${id}-${i}` }));
    box.checked = chosen.includes(choice.value);
    return { box, label: el("label", { for: `${id}-${i}` }, [box, ` ${choice.title}`]) };
  });
  const group = el("fieldset", { id, "aria-labelledby": `${id}-legend` }, [legend, ...boxes.map((b) => b.label)]);
  const read = () => choices.filter((_, i) => boxes[i]?.box.checked).map((choice) => choice.value);
  return { kind: "multi", nodes: [group], control: group, read };
}

/** @param {number} n @param {string} word */
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * The page's check of one value: a sentence for the person, or undefined when it fits.
 * @param {Field} field @param {unknown} value @returns {string | undefined}
 */
export function checkValue(field, value) {
  const p = field.property;
  if (value === undefined) return field.required ? "Required." : undefined;
  if (Array.isArray(value)) {
    if (p.minItems !== undefined && value.length < p.minItems) return `Choose at least ${p.minItems}.`;
    if (p.maxItems !== undefined && value.length > p.maxItems) return `Choose at most ${p.maxItems}.`;
    return undefined;
  }
  if (typeof value === "number") return checkNumber(p, value);
  if (typeof value !== "string" || choicesOf(p)) return undefined;
  const length = [...value].length;
  if (p.minLength !== undefined && length < p.minLength) return `At least ${plural(p.minLength, "character")}.`;
  if (p.maxLength !== undefined && length > p.maxLength) return `At most ${plural(p.maxLength, "character")}.`;
  if (p.pattern !== undefined && !safeRegExp(p.pattern)?.test(value)) return `Does not match the expected form (${p.pattern}).`;
  if (p.format === "email" && !/^[^\s@]+@[^\s@]+$/.test(value)) return "Not an email address.";
  if (p.format === "uri" && !URL.canParse(value)) return "Not a URL.";
  if ((p.format === "date" || p.format === "date-time") && Number.isNaN(Date.parse(value))) return "Not a date.";
  return undefined;
}

/** @param {Property} p @param {number} value */
function checkNumber(p, value) {
  if (!Number.isFinite(value)) return "Not a number.";
  if (p.type === "integer" && !Number.isInteger(value)) return "A whole number.";
  if (p.minimum !== undefined && value < p.minimum) return `At least ${p.minimum}.`;
  if (p.maximum !== undefined && value > p.maximum) return `At most ${p.maximum}.`;
  if (p.exclusiveMinimum !== undefined && value <= p.exclusiveMinimum) return `More than ${p.exclusiveMinimum}.`;
  if (p.exclusiveMaximum !== undefined && value >= p.exclusiveMaximum) return `Less than ${p.exclusiveMaximum}.`;
  return undefined;
}

/** @param {string} pattern */
function safeRegExp(pattern) {
  try {
    return new RegExp(pattern, "u");
  } catch {
    return undefined;
  }
}

/** @param {Field} field @param {string | undefined} message */
export function showError(field, message) {
  field.error.textContent = message ?? "";
  field.error.hidden = message === undefined;
  field.control.setAttribute("aria-invalid", message === undefined ? "false" : "true");
}

/**
 * Reads every field and checks it: the content to send, or undefined when a field is wrong (shown next to it).
 * @param {Field[]} fields @returns {Record<string, unknown> | undefined}
 */
export function readFields(fields) {
  /** @type {Record<string, unknown>} */
  const content = {};
  let ok = true;
  for (const field of fields) {
    const value = field.read();
    const problem = checkValue(field, value);
    showError(field, problem);
    if (problem !== undefined) {
      if (ok) field.control.focus();
      ok = false;
    } else if (value !== undefined) content[field.key] = value;
  }
  return ok ? content : undefined;
}

/**
 * The field taskgate named in a refusal ("content.canary", "canary", "/canary"), if it is one of these.
 * @param {Field[]} fields @param {string | undefined} name
 */
export function fieldNamed(fields, name) {
  if (name === undefined) return undefined;
  const key = name.replace(/^\/?(content[./])?/, "").split(/[./[]/)[0];
  return fields.find((field) => field.key === key);
}
