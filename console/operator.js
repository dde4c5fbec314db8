// The operator view (GET me says operator): counts of tasks by state and a chart of them over the
// last hour (/admin/summary's history, drawn as inline SVG), the questions waiting longest, every
// task filtered by state and backend with its owner, holder and age, and cancel / fail actions;
// then what the instances hold: held calls, upstream sessions, processes, instances. Refreshed
// every 10 s while shown (the summary is a snapshot, not a stream).

import { el } from "./form.js";
import { badge } from "./tasks.js";

/**
 * @typedef {import("./api.js").Api} Api
 * @typedef {import("./api.js").TaskItem} TaskItem
 * @typedef {{ tasksByState: Record<string, number>, history: { at: string, byState: Record<string, number> }[],
 *   waiting: TaskItem[], heldCalls: number, upstreamSessions: Record<string, unknown>[], processes: Record<string, unknown>[],
 *   instances: Record<string, unknown>[] }} Summary
 */

export const STATES = ["working", "input_required", "completed", "failed", "cancelled"];
const REFRESH_MS = 10_000;

/** @param {number | undefined} ms */
export function duration(ms) {
  if (ms === undefined) return "";
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/**
 * @param {Api} api @param {HTMLElement} main @param {AbortSignal} signal
 */
export async function showOperator(api, main, signal) {
  const counts = el("div", { class: "counts" });
  const chart = el("figure", { class: "chart" });
  const waiting = el("div");
  const filters = filterBar();
  const table = el("div", { class: "scroll" });
  const held = el("div", { class: "held" });
  const status = el("p", { class: "form-status", role: "status" });
  main.replaceChildren(
    el("h1", {}, ["Operator"]),
    counts,
    chart,
    el("h2", {}, ["Waiting for an answer, oldest first"]),
    waiting,
    el("h2", {}, ["Tasks"]),
    filters.node,
    table,
    status,
    el("h2", {}, ["Held by the instances"]),
    held,
  );
  const act = async (/** @type {string} */ path, /** @type {unknown} */ body) => {
    try {
      await api.post(path, body);
      status.textContent = "Done.";
    } catch (error) {
      status.textContent = `Refused: ${error instanceof Error ? error.message : String(error)}`;
    }
    await refresh();
  };
  const refresh = async () => {
    const summary = /** @type {Summary} */ (await api.get("admin/summary"));
    const query = filters.query();
    const tasks = /** @type {{ tasks: TaskItem[] }} */ (await api.get(`admin/tasks?limit=100${query}`));
    counts.replaceChildren(
      ...STATES.map((state) => el("div", { class: "count" }, [badge(state), el("strong", {}, [String(summary.tasksByState[state] ?? 0)])])),
    );
    // The history is sampled once a minute: the counts of now end the line.
    const points = [...summary.history, { at: new Date().toISOString(), byState: summary.tasksByState }];
    chart.replaceChildren(chartOf(points), el("figcaption", {}, ["Tasks by state, last hour"]), legend());
    waiting.replaceChildren(
      summary.waiting.length === 0 ? el("p", { class: "empty" }, ["No task is waiting."]) : waitingList(summary.waiting),
    );
    table.replaceChildren(taskTable(tasks.tasks, act));
    held.replaceChildren(heldOf(summary));
  };
  filters.onChange(() => refresh().catch(() => {}));
  await refresh();
  // One refresh at a time: one held back by a rate limit is not joined by the next tick's.
  let refreshing = false;
  const timer = setInterval(() => {
    if (refreshing) return;
    refreshing = true;
    refresh()
      .catch(() => {})
      .finally(() => (refreshing = false));
  }, REFRESH_MS);
  signal.addEventListener("abort", () => clearInterval(timer));
}

function filterBar() {
  const state = /** @type {HTMLSelectElement} */ (
    el("select", { id: "filter-state" }, [el("option", { value: "" }, ["Any"]), ...STATES.map((s) => el("option", { value: s }, [s]))])
  );
  const backend = /** @type {HTMLInputElement} */ (el("input", { id: "filter-backend", type: "text", placeholder: "any" }));
  const node = el("div", { class: "filters" }, [
    el("label", { for: "filter-state" }, ["State"]),
    state,
    el("label", { for: "filter-backend" }, ["Backend"]),
    backend,
  ]);
  return {
    node,
    query: () =>
      `${state.value ? `&status=${encodeURIComponent(state.value)}` : ""}${backend.value.trim() ? `&backend=${encodeURIComponent(backend.value.trim())}` : ""}`,
    /** @param {() => void} listener */
    onChange: (listener) => {
      state.addEventListener("change", listener);
      backend.addEventListener("change", listener);
    },
  };
}

/** @param {TaskItem[]} tasks */
function waitingList(tasks) {
  return el(
    "ol",
    { class: "waiting" },
    tasks.map((task) => {
      const questions = Object.values(task.inputRequests ?? {}).map((request) => String(request.params.message ?? request.method));
      return el("li", { "data-task": task.taskId }, [
        el("strong", {}, [task.tool]),
        ` for ${task.owner ?? "?"}, waiting ${duration(task.inputRequiredForMs)}: `,
        el("q", {}, [questions.join(" / ")]),
      ]);
    }),
  );
}

/**
 * @param {TaskItem[]} tasks @param {(path: string, body?: unknown) => Promise<void>} act
 */
function taskTable(tasks, act) {
  const head = el(
    "tr",
    {},
    ["Task", "Tool", "Backend", "Owner", "State", "Age", "Holder", ""].map((h) => el("th", { scope: "col" }, [h])),
  );
  const rows = tasks.map((task) => {
    const id = encodeURIComponent(task.taskId);
    const actions = el("td", { class: "actions" });
    if (!["completed", "failed", "cancelled"].includes(task.status)) {
      const cancel = el("button", { type: "button" }, ["Cancel"]);
      cancel.addEventListener("click", () => act(`admin/tasks/${id}/cancel`));
      const fail = el("button", { type: "button", class: "danger" }, ["Fail…"]);
      fail.addEventListener("click", () => {
        const reason = prompt("Why fail this task? (the caller sees this reason)");
        if (reason) act(`admin/tasks/${id}/fail`, { reason });
      });
      actions.append(cancel, fail);
    }
    return el("tr", { "data-task": task.taskId }, [
      el("td", {}, [el("code", {}, [task.taskId.slice(0, 8)])]),
      el("td", {}, [task.tool]),
      el("td", {}, [task.backend ?? "—"]),
      el("td", {}, [task.owner ?? "?"]),
      el("td", {}, [badge(task.status)]),
      el("td", {}, [duration(task.ageMs)]),
      el("td", {}, [task.holder?.slice(0, 8) ?? "—"]),
      actions,
    ]);
  });
  return el("table", { class: "tasks" }, [el("thead", {}, [head]), el("tbody", {}, rows)]);
}

/** @param {Summary} summary */
function heldOf(summary) {
  const list = (/** @type {string} */ title, /** @type {Record<string, unknown>[]} */ items) =>
    el("section", {}, [
      el("h3", {}, [`${title} (${items.length})`]),
      el(
        "ul",
        {},
        items.map((item) =>
          el("li", {}, [
            Object.entries(item)
              .map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : String(v)}`)
              .join(", "),
          ]),
        ),
      ),
    ]);
  return el("div", { class: "held-grid" }, [
    el("section", {}, [el("h3", {}, ["Held calls"]), el("p", { class: "big" }, [String(summary.heldCalls)])]),
    list("Upstream sessions", summary.upstreamSessions ?? []),
    list("Processes", summary.processes ?? []),
    list("Instances", summary.instances ?? []),
  ]);
}

const SVG = "http://www.w3.org/2000/svg";

/** @param {string} tag @param {Record<string, string | number>} attributes */
function svg(tag, attributes) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

/**
 * One line per state over the history's points (one a minute); y from 0 to the largest count.
 * @param {Summary["history"]} history
 */
export function chartOf(history) {
  const [w, h, pad] = [600, 160, 24];
  const root = svg("svg", { viewBox: `0 0 ${w} ${h}`, role: "img", class: "chart-svg" });
  const top = Math.max(1, ...history.flatMap((point) => STATES.map((s) => point.byState[s] ?? 0)));
  const last = history[history.length - 1];
  const label = last ? STATES.map((s) => `${s} ${last.byState[s] ?? 0}`).join(", ") : "no data yet";
  root.append(Object.assign(svg("title", {}), { textContent: `Tasks by state over the last hour; now: ${label}` }));
  root.append(svg("line", { x1: pad, y1: h - pad, x2: w, y2: h - pad, class: "axis" }));
  const scale = Object.assign(svg("text", { x: 2, y: pad - 8, class: "tick" }), { textContent: String(top) });
  const zero = Object.assign(svg("text", { x: 2, y: h - pad, class: "tick" }), { textContent: "0" });
  root.append(scale, zero, Object.assign(svg("text", { x: w - 40, y: h - 6, class: "tick" }), { textContent: "now" }));
  const step = (w - pad) / Math.max(1, history.length - 1);
  for (const state of STATES) {
    const points = history.map(
      (point, i) => `${(pad + i * step).toFixed(1)},${(h - pad - ((point.byState[state] ?? 0) / top) * (h - 2 * pad)).toFixed(1)}`,
    );
    if (points.length > 0) root.append(svg("polyline", { points: points.join(" "), class: `line s-${state}`, fill: "none" }));
  }
  return root;
}

function legend() {
  return el(
    "ul",
    { class: "legend" },
    STATES.map((state) => el("li", { class: `s-${state}` }, [state.replace("_", " ")])),
  );
}
