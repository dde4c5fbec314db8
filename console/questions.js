// A task's open questions (its inputRequests), each as something a person can answer: a form
// elicitation as a form built from its requestedSchema, a URL elicitation as a link to follow, a
// sampling request as the conversation and a box for the reply, a roots request as a list of
// file:// URIs to give. Answers go to POST tasks/{id}/input; a refusal naming a field (HTTP 422) is
// shown next to that field, any other next to the buttons.

import { ApiError } from "./api.js";
import { buildFields, el, fieldNamed, readFields, showError } from "./form.js";

/**
 * @typedef {import("./api.js").Api} Api
 * @typedef {import("./api.js").TaskItem} TaskItem
 * @typedef {import("./api.js").InputRequest} InputRequest
 * @typedef {{ role?: string, content?: { type?: string, text?: string } | { type?: string, text?: string }[] }} SamplingMessage
 */

/**
 * @param {Api} api @param {TaskItem} task
 * @returns {HTMLElement}
 */
export function questionsOf(api, task) {
  const box = el("div", { class: "questions" });
  for (const [key, request] of Object.entries(task.inputRequests ?? {})) box.append(questionOf(api, task.taskId, key, request));
  return box;
}

/**
 * @param {Api} api @param {string} taskId @param {string} key @param {InputRequest} request
 * @returns {HTMLElement}
 */
function questionOf(api, taskId, key, request) {
  const params = request.params;
  const form = /** @type {HTMLFormElement} */ (el("form", { class: "question", "data-key": key }));
  form.noValidate = true; // the page's own check shows its messages next to each field
  const status = el("p", { class: "form-status", role: "status" });
  /** @type {import("./form.js").Field[]} */
  let fields = [];
  /** @type {(action: string) => unknown} */
  let answer;
  if (request.method === "elicitation/create" && params.mode === "url") {
    const url = String(params.url ?? "");
    const safe = /^https?:/i.test(url);
    form.append(
      el("h3", {}, [String(params.message ?? "Open this link")]),
      safe ? el("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, [url]) : el("code", {}, [url]),
    );
    answer = (action) => ({ action });
  } else if (request.method === "elicitation/create") {
    const built = buildFields(/** @type {import("./form.js").RequestedSchema} */ (params.requestedSchema ?? {}));
    fields = built.fields;
    form.append(el("h3", {}, [String(params.message ?? "A question")]), built.element);
    answer = (action) => (action === "accept" ? { action, content: readFields(fields) } : { action });
  } else if (request.method === "sampling/createMessage") {
    const reply = samplingView(form, params, `${taskId}-${key}`);
    answer = (action) =>
      action === "accept"
        ? { role: "assistant", content: { type: "text", text: reply.value }, model: "person (taskgate console)", stopReason: "endTurn" }
        : undefined;
  } else if (request.method === "roots/list") {
    const list = rootsView(form, `${taskId}-${key}`);
    answer = (action) => (action === "accept" ? { roots: rootsOf(list.value) } : undefined);
  } else {
    form.append(el("h3", {}, [`A ${request.method} request`]), el("pre", {}, [JSON.stringify(params, null, 2)]));
    answer = () => undefined;
  }
  const declinable = request.method === "elicitation/create";
  form.append(buttons(declinable), status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const submitter = /** @type {SubmitEvent} */ (event).submitter;
    const action = submitter instanceof HTMLButtonElement ? submitter.value : "accept";
    const value = answer(action);
    if (
      value === undefined ||
      (action === "accept" &&
        request.method === "elicitation/create" &&
        params.mode !== "url" &&
        !(/** @type {{content?: unknown}} */ (value).content))
    ) {
      status.textContent = value === undefined ? "" : "Some answers need fixing.";
      return;
    }
    await send(api, taskId, key, value, { form, fields, status });
  });
  return form;
}

/** @param {boolean} declinable */
function buttons(declinable) {
  const row = el("div", { class: "buttons" }, [el("button", { type: "submit", value: "accept", class: "primary" }, ["Send answer"])]);
  if (declinable)
    row.append(
      el("button", { type: "submit", value: "decline" }, ["Decline"]),
      el("button", { type: "submit", value: "cancel" }, ["Dismiss"]),
    );
  return row;
}

/**
 * @param {Api} api @param {string} taskId @param {string} key @param {unknown} value
 * @param {{ form: HTMLFormElement, fields: import("./form.js").Field[], status: HTMLElement }} view
 */
async function send(api, taskId, key, value, { form, fields, status }) {
  const controls = [...form.querySelectorAll("button")];
  for (const button of controls) button.disabled = true;
  status.textContent = "Sending…";
  try {
    await api.post(`tasks/${encodeURIComponent(taskId)}/input`, { inputResponses: { [key]: value } });
    status.textContent = "Answer sent.";
    form.classList.add("answered");
  } catch (error) {
    for (const button of controls) button.disabled = false;
    const message = error instanceof Error ? error.message : String(error);
    const field = error instanceof ApiError ? fieldNamed(fields, error.field) : undefined;
    if (field) {
      showError(field, message);
      field.control.focus();
      status.textContent = "taskgate refused an answer.";
    } else status.textContent = error instanceof ApiError && error.status === 409 ? `Not sent: ${message}` : `Not sent: ${message}`;
  }
}

/** @param {HTMLFormElement} form @param {Record<string, unknown>} params @param {string} id */
function samplingView(form, params, id) {
  const messages = /** @type {SamplingMessage[]} */ (Array.isArray(params.messages) ? params.messages : []);
  const conversation = el("ol", { class: "conversation" });
  if (typeof params.systemPrompt === "string")
    conversation.append(el("li", { class: "system" }, [el("b", {}, ["System: "]), params.systemPrompt]));
  for (const message of messages) {
    const parts = Array.isArray(message.content) ? message.content : [message.content ?? {}];
    const text = parts.map((part) => (part.type === "text" ? (part.text ?? "") : `[${part.type ?? "content"}]`)).join("\n");
    conversation.append(el("li", { class: message.role ?? "user" }, [el("b", {}, [`${message.role ?? "user"}: `]), text]));
  }
  const reply = /** @type {HTMLTextAreaElement} */ (el("textarea", { id: `${id}-reply`, rows: "3", required: "" }));
  const limit = typeof params.maxTokens === "number" ? ` (at most about ${params.maxTokens} tokens)` : "";
  form.append(
    el("h3", {}, ["The tool asks for a model's reply"]),
    conversation,
    el("label", { for: `${id}-reply` }, [`Your reply${limit}`]),
    reply,
  );
  return reply;
}

/** @param {HTMLFormElement} form @param {string} id */
function rootsView(form, id) {
  const list = /** @type {HTMLTextAreaElement} */ (
    el("textarea", { id: `${id}-roots`, rows: "3", placeholder: "file:///home/me/project" })
  );
  form.append(
    el("h3", {}, ["The tool asks which folders it may use"]),
    el("label", { for: `${id}-roots` }, ["Folders (file:// URIs, one per line; none: leave empty)"]),
    list,
  );
  return list;
}

/** @param {string} text */
function rootsOf(text) {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .map((uri) => ({ uri, name: decodeURIComponent(uri.replace(/\/+$/, "").split("/").pop() ?? uri) }));
}
