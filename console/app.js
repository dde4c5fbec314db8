// The console's entry: reads /console/settings.json, finishes an OAuth return if this is one, then
// with the session's token asks GET me who is signed in (an operator gets the operator view, and
// the approvals section shows only when GET approvals answers 200) and shows the view the address
// names: #/tasks (default), #/tasks/<taskId> (the link notifications carry), #/operator, #/approvals,
// #/approvals/<approvalId> (the link approval notifications carry).
// Each view gets an AbortSignal that ends its streams and timers when another replaces it.

import { Api, ApiError } from "./api.js";
import { showApprovals } from "./approvals.js";
import { finishOAuth, forgetToken, savedToken, saveToken, showSignIn } from "./auth.js";
import { showOperator } from "./operator.js";
import { showMyTasks, showTask } from "./tasks.js";

const main = /** @type {HTMLElement} */ (document.getElementById("main"));
const who = /** @type {HTMLElement} */ (document.getElementById("who"));
const nav = /** @type {HTMLElement} */ (document.getElementById("nav"));
const signOut = /** @type {HTMLButtonElement} */ (document.getElementById("sign-out"));
const limited = /** @type {HTMLElement} */ (document.getElementById("limited"));

/** Shows (or, with undefined, hides) that taskgate asked this console to slow down. @param {number | undefined} seconds */
function showLimited(seconds) {
  limited.hidden = seconds === undefined;
  limited.textContent =
    seconds === undefined ? "" : `taskgate is limiting your requests (too many per minute): trying again in ${seconds} s.`;
}

/** @type {AbortController | undefined} */
let current;

/** @param {Api} api @param {{ operator: boolean, approvals: boolean }} can */
async function route(api, can) {
  current?.abort();
  current = new AbortController();
  const { signal } = current;
  const hash = location.hash.replace(/^#\/?/, "");
  const view = hash === "operator" ? hash : hash === "approvals" || hash.startsWith("approvals/") ? "approvals" : "tasks";
  for (const link of nav.querySelectorAll("a")) link.toggleAttribute("aria-current", link.dataset.view === view);
  try {
    if (hash.startsWith("tasks/")) await showTask(api, main, decodeURIComponent(hash.slice("tasks/".length)), signal);
    else if (hash === "operator" && can.operator) await showOperator(api, main, signal);
    else if (view === "approvals" && can.approvals) await showApprovals(api, main, linkedApproval(hash));
    else await showMyTasks(api, main, signal);
  } catch (error) {
    if (signal.aborted) return;
    if (error instanceof ApiError && error.status === 401) return restart("Your sign-in has expired: sign in again.");
    const message = describe(error, 404, "No such task (or not yours).");
    main.replaceChildren(Object.assign(document.createElement("p"), { className: "error", textContent: message }));
  }
}

/** The approval id in #/approvals/<approvalId>, if the address names one. @param {string} hash */
function linkedApproval(hash) {
  return hash.startsWith("approvals/") ? decodeURIComponent(hash.slice("approvals/".length)) : undefined;
}

/** What went wrong, for the person: `known` for an ApiError of HTTP `status`, else the error's message.
 * @param {unknown} error @param {number} status @param {string} known */
function describe(error, status, known) {
  if (error instanceof ApiError && error.status === status) return known;
  return error instanceof Error ? error.message : String(error);
}

/** The sign-in screen; a token typed there starts the console again. @param {unknown} settings @param {string | undefined} problem */
function signIn(settings, problem) {
  showSignIn(
    main,
    /** @type {import("./auth.js").Settings} */ (settings),
    (typed) => {
      saveToken(typed);
      boot();
    },
    problem,
  );
}

/** @param {string} [problem] */
function restart(problem) {
  forgetToken();
  current?.abort();
  location.hash = "";
  boot(problem);
}

/** @param {string} [refused] why the last sign-in failed */
async function boot(refused) {
  let problem = refused;
  const settings = await (await fetch("console/settings.json", { cache: "no-store" })).json();
  let token = savedToken();
  try {
    token = (await finishOAuth()) ?? token;
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error);
  }
  nav.hidden = true;
  signOut.hidden = true;
  who.textContent = "";
  if (token === undefined) {
    signIn(settings, problem);
    return;
  }
  const api = new Api(token, showLimited);
  /** @type {{ subject: string, operator: boolean }} */
  let me;
  try {
    me = await api.get("me");
  } catch (error) {
    // Only a refused token is forgotten: taskgate being busy or unreachable says nothing about it.
    if (error instanceof ApiError && error.status === 401) forgetToken();
    signIn(settings, describe(error, 401, "That token is not accepted."));
    return;
  }
  const approvals = await api.get("approvals").then(
    () => true,
    () => false,
  );
  const can = { operator: me.operator === true, approvals };
  who.textContent = me.subject;
  signOut.hidden = false;
  nav.hidden = false;
  for (const link of nav.querySelectorAll("a")) {
    if (link.dataset.view === "operator") link.hidden = !can.operator;
    if (link.dataset.view === "approvals") link.hidden = !can.approvals;
  }
  window.onhashchange = () => route(api, can);
  await route(api, can);
}

signOut.addEventListener("click", () => restart());
boot();
