// The console's service worker, for Web Push only (it serves no requests): shows each push
// taskgate sends ({event, taskId, status, message, tool, consoleUrl}: a question's text, never an
// answer) and opens the console at that task when the notification is clicked (only a console URL
// of this origin).

/**
 * @typedef {{ event?: string, taskId?: string, status?: string, message?: string, tool?: string, consoleUrl?: string }} Payload
 * @typedef {{ data?: { json(): unknown } | null, notification?: Notification, waitUntil(promise: Promise<unknown>): void }} WorkerEvent
 * @typedef {{ registration: ServiceWorkerRegistration, clients: { openWindow(url: string): Promise<unknown> }, location: Location,
 *   addEventListener(type: "push" | "notificationclick", listener: (event: WorkerEvent) => void): void }} WorkerScope
 */

const worker = /** @type {WorkerScope} */ (/** @type {unknown} */ (self));

worker.addEventListener("push", (event) => {
  /** @type {Payload} */
  let payload = {};
  try {
    payload = /** @type {Payload} */ (event.data?.json() ?? {});
  } catch {
    // not JSON: a generic notification
  }
  const title =
    payload.event === "input_required"
      ? (payload.message ?? "A task needs your answer")
      : `${payload.tool ?? "A task"}: ${payload.status ?? "changed"}`;
  const body = payload.event === "input_required" ? `${payload.tool ?? "A task"} is waiting for you` : (payload.message ?? "");
  event.waitUntil(
    worker.registration.showNotification(title, { body, tag: payload.taskId ?? "taskgate", data: { url: payload.consoleUrl } }),
  );
});

worker.addEventListener("notificationclick", (event) => {
  event.notification?.close();
  const url = /** @type {{ url?: string } | undefined} */ (event.notification?.data)?.url;
  const same = url !== undefined && URL.canParse(url) && new URL(url).origin === worker.location.origin;
  event.waitUntil(worker.clients.openWindow(same ? url : new URL("console", worker.location.origin).href));
});
