// "My tasks": the caller's own tasks, newest first, those waiting for an answer on top with their
// questions, kept live by the tasks/events stream (no reload); and one task's page: its status,
// the timeline of its states, its open questions and a cancel button, kept live by its own stream.
// A card is rebuilt only when its open questions change, so a half-filled form survives progress
// updates.

import { TERMINAL } from "./api.js";
import { el } from "./form.js";
import { pushButton } from "./push.js";
import { questionsOf } from "./questions.js";

/**
 * @typedef {import("./api.js").Api} Api
 * @typedef {import("./api.js").TaskItem} TaskItem
 */

/** @param {string} iso */
export function ago(iso) {
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return new Date(iso).toLocaleString();
}

/** @param {string} status */
export const badge = (status) => el("span", { class: `badge s-${status}` }, [status.replace("_", " ")]);

/** @param {TaskItem} task */
const questionKeys = (task) =>
  Object.keys(task.inputRequests ?? {})
    .sort()
    .join(",");

/**
 * @param {Api} api @param {TaskItem} task
 * @returns {{ node: HTMLElement, update: (task: TaskItem) => void }}
 */
function card(api, task) {
  const head = el("div", { class: "card-head" });
  const message = el("p", { class: "status-message" });
  const slot = el("div");
  const node = el("article", { class: "task", "data-task": task.taskId }, [head, message, slot]);
  let keys = "";
  const update = (/** @type {TaskItem} */ next) => {
    node.dataset.status = next.status;
    const link = el("a", { href: `#/tasks/${encodeURIComponent(next.taskId)}` }, [next.tool]);
    const where = next.backend ? ` on ${next.backend}` : "";
    head.replaceChildren(
      el("h2", {}, [link]),
      badge(next.status),
      el("span", { class: "when" }, [`${where} · started ${ago(next.createdAt)}`]),
    );
    message.textContent = next.statusMessage ?? "";
    const nextKeys = next.status === "input_required" ? questionKeys(next) : "";
    if (nextKeys !== keys) slot.replaceChildren(...(nextKeys === "" ? [] : [questionsOf(api, next)]));
    keys = nextKeys;
  };
  update(task);
  return { node, update };
}

/**
 * @param {Api} api @param {HTMLElement} main @param {AbortSignal} signal
 */
export async function showMyTasks(api, main, signal) {
  const live = el("p", { class: "live", role: "status" }, ["Connecting…"]);
  const waiting = el("section", { "aria-labelledby": "waiting-title" }, [el("h2", { id: "waiting-title" }, ["Waiting for you"])]);
  const others = el("section", { "aria-labelledby": "others-title" }, [el("h2", { id: "others-title" }, ["Recent"])]);
  const empty = el("p", { class: "empty" }, ["No tasks yet. Tasks you start through taskgate appear here."]);
  const push = el("div");
  main.replaceChildren(el("h1", {}, ["My tasks"]), live, push, waiting, others, empty);
  pushButton(api).then((button) => button && push.replaceChildren(button));
  /** @type {Map<string, { node: HTMLElement, update: (task: TaskItem) => void, task: TaskItem }>} */
  const cards = new Map();
  const place = () => {
    const sorted = [...cards.values()].sort((a, b) => b.task.createdAt.localeCompare(a.task.createdAt));
    waiting.replaceChildren(waiting.firstChild ?? "", ...sorted.filter((c) => c.task.status === "input_required").map((c) => c.node));
    others.replaceChildren(others.firstChild ?? "", ...sorted.filter((c) => c.task.status !== "input_required").map((c) => c.node));
    waiting.hidden = waiting.childElementCount < 2;
    others.hidden = others.childElementCount < 2;
    empty.hidden = cards.size > 0;
  };
  const upsert = (/** @type {TaskItem} */ task) => {
    const known = cards.get(task.taskId);
    if (known && known.task.lastUpdatedAt > task.lastUpdatedAt) return; // an older frame after a newer answer
    if (known) {
      const moved = (known.task.status === "input_required") !== (task.status === "input_required");
      known.task = task;
      known.update(task);
      if (moved) place();
    } else {
      cards.set(task.taskId, { ...card(api, task), task });
      place();
    }
  };
  const more = el("button", { type: "button" }, ["Older tasks"]);
  main.append(more);
  /** @param {string | undefined} cursor */
  const load = async (cursor) => {
    const page = /** @type {{ tasks: TaskItem[], nextCursor?: string }} */ (
      await api.get(`tasks?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`)
    );
    for (const task of page.tasks) upsert(task);
    place();
    more.hidden = page.nextCursor === undefined;
    more.onclick = () => load(page.nextCursor).catch((error) => (live.textContent = `Older tasks not loaded: ${error.message}`));
  };
  await load(undefined);
  api.follow("tasks/events", upsert, signal, { onState: (state) => (live.textContent = liveText(state)) });
}

/** @param {"live" | "reconnecting" | "ended"} state */
const liveText = (state) => (state === "live" ? "Live" : state === "reconnecting" ? "Reconnecting…" : "Not live: reload the page");

/**
 * @param {Api} api @param {HTMLElement} main @param {string} taskId @param {AbortSignal} signal
 */
export async function showTask(api, main, taskId, signal) {
  const path = `tasks/${encodeURIComponent(taskId)}`;
  const task = /** @type {TaskItem} */ (await api.get(path));
  const timeline = el("ol", { class: "timeline", "aria-label": "Timeline" });
  const entries = [...(task.history ?? [])];
  const drawTimeline = () =>
    timeline.replaceChildren(
      ...entries.map((entry) =>
        el("li", { "data-status": entry.status }, [
          badge(entry.status),
          el("time", { datetime: entry.at }, [new Date(entry.at).toLocaleTimeString()]),
          ...(entry.statusMessage ? [el("span", {}, [` ${entry.statusMessage}`])] : []),
        ]),
      ),
    );
  const cancel = el("button", { type: "button", class: "danger" }, ["Cancel task"]);
  const result = el("p", { class: "result", role: "status" });
  const view = card(api, task);
  main.replaceChildren(
    el("p", {}, [el("a", { href: "#/tasks" }, ["← My tasks"])]),
    view.node,
    cancel,
    result,
    el("h2", {}, ["Timeline"]),
    timeline,
  );
  drawTimeline();
  const update = (/** @type {TaskItem} */ next) => {
    view.update(next);
    const last = entries[entries.length - 1];
    if (!last || last.status !== next.status)
      entries.push({ status: next.status, at: next.lastUpdatedAt, ...(next.statusMessage ? { statusMessage: next.statusMessage } : {}) });
    drawTimeline();
    cancel.hidden = TERMINAL.has(next.status);
    if (TERMINAL.has(next.status)) result.textContent = finished(next);
  };
  update(task);
  cancel.addEventListener("click", async () => {
    cancel.setAttribute("disabled", "");
    try {
      update(await api.post(`${path}/cancel`));
    } catch (error) {
      result.textContent = `Not cancelled: ${error instanceof Error ? error.message : String(error)}`;
      cancel.removeAttribute("disabled");
    }
  });
  if (!TERMINAL.has(task.status)) api.follow(`${path}/events`, update, signal, { untilEnd: true });
}

/** @param {TaskItem} task */
function finished(task) {
  if (task.status === "completed") return "Done. The result went to the client that started the task.";
  if (task.status === "failed") return `Failed${task.statusMessage ? `: ${task.statusMessage}` : "."}`;
  return "Cancelled.";
}
