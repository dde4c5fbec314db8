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

/** Subscribing waits at most this long at each step, then says which step did not finish. */
const STEP_LIMIT_MS = 15_000;

/**
 * @template T
 * @param {Promise<T>} promise @param {string} what @returns {Promise<T>}
 */
function limited(promise, what) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${STEP_LIMIT_MS / 1000} s`)), STEP_LIMIT_MS);
  });
  return /** @type {Promise<T>} */ (Promise.race([promise, late]).finally(() => clearTimeout(timer)));
}

/** Resolves once the registration's worker is active (the page is outside its scope, so serviceWorker.ready never would).
 * @param {ServiceWorkerRegistration} registration @returns {Promise<void>} */
function activated(registration) {
  const worker = registration.installing ?? registration.waiting ?? registration.active;
  if (!worker || worker.state === "activated") return Promise.resolve();
  return new Promise((resolve) => {
    worker.addEventListener("statechange", () => {
      if (worker.state === "activated") resolve();
    });
  });
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
      status.textContent = "Asking the browser…";
      const registration = await navigator.serviceWorker.register("console/sw.js", { scope: "console/" });
      await limited(activated(registration), "the service worker did not start");
      const asked = registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(publicKey) });
      const subscription = await limited(asked, "the browser's push service did not answer");
      await api.post("notify/push-subscriptions", subscription.toJSON());
      status.textContent = "This device will be told when a task needs you, completes or fails.";
    } catch (error) {
      status.textContent = `Not subscribed: ${error instanceof Error ? error.message : String(error)}`;
    }
  });
  return el("p", { class: "push" }, [button, " ", status]);
}
