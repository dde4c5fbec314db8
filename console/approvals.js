// Approvals: calls held until a person allows them (GET approvals lists those the signed-in
// person may decide; POST approvals/{id} approves or denies, with a reason). The section shows
// only when taskgate answers GET approvals with 200. #/approvals/<approvalId> (the link an
// approval_requested notification carries) marks that one and scrolls to it. Each card names the
// tool (and backend), the caller, when it was asked, when it expires (date and time: approvals can
// last days), the rule, and the arguments only when taskgate shows them (audit.arguments),
// otherwise their digest. What was decided stays said above the list, which is read again. The list
// is read when shown (and on Refresh), not followed live.

import { el } from "./form.js";
import { ago } from "./tasks.js";

/**
 * @typedef {{ approvalId: string, taskId: string, caller: string, backend?: string, tool: string, arguments?: unknown,
 *   argumentsDigest: string, rule: string, requestedAt: string, expiresAt: string }} Approval
 */

/** @param {import("./api.js").Api} api @param {HTMLElement} main @param {string} [linked] @param {string} [said] */
export async function showApprovals(api, main, linked, said) {
  const { approvals } = /** @type {{ approvals: Approval[] }} */ (await api.get("approvals"));
  const list = el("div", { class: "approvals" });
  const decided = el("p", { class: "form-status", role: "status" }, said ? [said] : []);
  const gone = linked !== undefined && !approvals.some((approval) => approval.approvalId === linked);
  const refresh = el("button", { type: "button" }, ["Refresh"]);
  refresh.addEventListener("click", () => showApprovals(api, main, linked));
  main.replaceChildren(
    el("h1", {}, ["Approvals"]),
    refresh,
    decided,
    ...(gone && !said ? [el("p", { class: "hint" }, ["The approval this link names is no longer waiting for you."])] : []),
    approvals.length === 0 ? el("p", { class: "empty" }, ["Nothing waits for an approval."]) : list,
  );
  const again = (/** @type {string} */ text) => showApprovals(api, main, undefined, text);
  for (const approval of approvals) {
    const form = approvalCard(api, approval, again);
    list.append(form);
    if (approval.approvalId === linked) {
      form.classList.add("linked");
      form.scrollIntoView({ block: "center" });
    }
  }
}

/** @param {string} iso */
const when = (iso) => el("time", { datetime: iso }, [new Date(iso).toLocaleString()]);

/** @param {import("./api.js").Api} api @param {Approval} approval @param {(said: string) => void} done */
function approvalCard(api, approval, done) {
  const id = `approval-${approval.approvalId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const reason = /** @type {HTMLInputElement} */ (el("input", { id: `${id}-reason`, type: "text", maxlength: "500" }));
  const status = el("p", { class: "form-status", role: "status" });
  const what = `${approval.tool}${approval.backend ? ` on ${approval.backend}` : ""}`;
  const form = el("form", { class: "task", "data-approval": approval.approvalId }, [
    el("h2", {}, [what]),
    el("p", { class: "caller" }, [`Asked by ${approval.caller} ${ago(approval.requestedAt)} (rule ${approval.rule}).`]),
    el("p", { class: "expires" }, ["Expires ", when(approval.expiresAt), "."]),
    approval.arguments === undefined
      ? el("p", { class: "hint", title: approval.argumentsDigest }, [`Arguments digest (sha256) ${approval.argumentsDigest.slice(0, 16)}…`])
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
    const buttons = form.querySelectorAll("button");
    for (const button of buttons) button.disabled = true;
    try {
      await api.post(`approvals/${encodeURIComponent(approval.approvalId)}`, {
        decision,
        ...(reason.value.trim() ? { reason: reason.value.trim() } : {}),
      });
      done(`${decision === "approve" ? "Approved" : "Denied"}: ${what}, asked by ${approval.caller}.`);
    } catch (error) {
      status.textContent = `Not sent: ${error instanceof Error ? error.message : String(error)}`;
      for (const button of buttons) button.disabled = false;
    }
  });
  return form;
}
