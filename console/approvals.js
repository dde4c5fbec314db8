// Approvals: calls held until a person allows them (GET approvals lists those the signed-in
// person may decide; POST approvals/{id} approves or denies, with a reason). The section shows
// only when taskgate answers GET approvals with 200.

import { el } from "./form.js";
import { ago } from "./tasks.js";

/**
 * @typedef {{ approvalId: string, taskId: string, caller: string, backend?: string, tool: string, arguments?: unknown,
 *   argumentsDigest: string, rule: string, requestedAt: string, expiresAt: string }} Approval
 */

/** @param {import("./api.js").Api} api @param {HTMLElement} main */
export async function showApprovals(api, main) {
  const { approvals } = /** @type {{ approvals: Approval[] }} */ (await api.get("approvals"));
  const list = el("div", { class: "approvals" });
  main.replaceChildren(
    el("h1", {}, ["Approvals"]),
    approvals.length === 0 ? el("p", { class: "empty" }, ["Nothing waits for an approval."]) : list,
  );
  for (const approval of approvals) list.append(approvalCard(api, approval, () => showApprovals(api, main)));
}

/** @param {import("./api.js").Api} api @param {Approval} approval @param {() => void} done */
function approvalCard(api, approval, done) {
  const id = `approval-${approval.approvalId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const reason = /** @type {HTMLInputElement} */ (el("input", { id: `${id}-reason`, type: "text" }));
  const status = el("p", { class: "form-status", role: "status" });
  const form = el("form", { class: "task", "data-approval": approval.approvalId }, [
    el("h2", {}, [`${approval.tool}${approval.backend ? ` on ${approval.backend}` : ""}`]),
    el("p", {}, [
      `Asked by ${approval.caller} ${ago(approval.requestedAt)} (rule ${approval.rule}); expires ${new Date(approval.expiresAt).toLocaleTimeString()}.`,
    ]),
    approval.arguments === undefined
      ? el("p", { class: "hint" }, [`Arguments digest ${approval.argumentsDigest.slice(0, 16)}…`])
      : el("pre", {}, [JSON.stringify(approval.arguments, null, 2)]),
    el("label", { for: `${id}-reason` }, ["Reason (optional)"]),
    reason,
    el("div", { class: "buttons" }, [
      el("button", { type: "submit", value: "approve", class: "primary" }, ["Approve"]),
      el("button", { type: "submit", value: "deny", class: "danger" }, ["Deny"]),
    ]),
    status,
  ]);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const submitter = /** @type {SubmitEvent} */ (event).submitter;
    const decision = submitter instanceof HTMLButtonElement ? submitter.value : "approve";
    try {
      await api.post(`approvals/${encodeURIComponent(approval.approvalId)}`, {
        decision,
        ...(reason.value.trim() ? { reason: reason.value.trim() } : {}),
      });
      done();
    } catch (error) {
      status.textContent = `Not sent: ${error instanceof Error ? error.message : String(error)}`;
    }
  });
  return form;
}
