// The console's service worker, for Web Push only (it serves no requests): shows each push
// taskgate sends ({event, taskId, status, message, tool, consoleUrl}: a question's text, never an
// answer; for approval_requested {approvalId, tool, caller, expiresAt}, never the arguments) and
// opens the console at that task or approval when the notification is clicked (only a console URL
// of this origin).

/**
 * @typedef {{ event?: string, taskId?: string, status?: string, message?: string, tool?: string, consoleUrl?: string,
 *   approvalId?: string, caller?: string, expiresAt?: string }} Payload
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
  const { title, body } = shown(payload);
  const tag = payload.approvalId ?? payload.taskId ?? "taskgate";
  event.waitUntil(worker.registration.showNotification(title, { body, tag, data: { url: payload.consoleUrl } }));
});

/** The notification's title and text. @param {Payload} payload */
function shown(payload) {
  const tool = payload.tool ?? "A task";
  if (payload.event === "approval_requested") {
    const until = payload.expiresAt ? `, until ${new Date(payload.expiresAt).toLocaleString()}` : "";
    return { title: `Approval asked: ${tool}`, body: `Asked by ${payload.caller ?? "someone"}${until}` };
  }
  if (payload.event === "input_required")
    return { title: payload.message ?? "A task needs your answer", body: `${tool} is waiting for you` };
  return { title: `${tool}: ${payload.status ?? "changed"}`, body: payload.message ?? "" };
}

worker.addEventListener("notificationclick", (event) => {
  event.notification?.close();
  const url = /** @type {{ url?: string } | undefined} */ (event.notification?.data)?.url;
  const same = url !== undefined && URL.canParse(url) && new URL(url).origin === worker.location.origin;
  event.waitUntil(worker.clients.openWindow(same ? url : new URL("console", worker.location.origin).href));
});
