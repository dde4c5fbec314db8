// "Notify me on this device": Web Push for the signed-in person, offered when taskgate has it on
// (GET notify/vapid-public-key answers) and the browser can (a service worker, PushManager). The
// browser subscribes with taskgate's VAPID key and the subscription goes to POST
// notify/push-subscriptions; sw.js shows each push (the question, a task's end) and opens the
// console at the task when the notification is clicked.

import { el } from "./form.js";

/** @param {string} base64url @returns {Uint8Array<ArrayBuffer>} */
function keyBytes(base64url) {
  const base64 = base64url
    .replace(/-/g, "+")
    .replace(/_/g, "/")
    .padEnd(Math.ceil(base64url.length / 4) * 4, "=");
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

/**
 * The button, or undefined when push is not available here.
 * @param {import("./api.js").Api} api @returns {Promise<HTMLElement | undefined>}
 */
export async function pushButton(api) {
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) return undefined;
  /** @type {string} */
  let publicKey;
  try {
    publicKey = (await api.get("notify/vapid-public-key")).publicKey;
  } catch {
    return undefined; // Web Push is off on this taskgate
  }
  const status = el("span", { class: "form-status", role: "status" });
  const button = el("button", { type: "button" }, ["Notify me on this device"]);
  button.addEventListener("click", async () => {
    try {
      if ((await Notification.requestPermission()) !== "granted") throw new Error("notifications are not allowed for this site");
      const registration = await navigator.serviceWorker.register("console/sw.js", { scope: "console/" });
      await navigator.serviceWorker.ready;
      const subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(publicKey) });
      await api.post("notify/push-subscriptions", subscription.toJSON());
      status.textContent = "This device will be told when a task needs you, completes or fails.";
    } catch (error) {
      status.textContent = `Not subscribed: ${error instanceof Error ? error.message : String(error)}`;
    }
  });
  return el("p", { class: "push" }, [button, " ", status]);
}
