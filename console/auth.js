// Signing in, with the credentials the gateway accepts: a bearer token pasted by the person (any
// auth mode), or, when taskgate offers it (settings.oauth: auth.mode jwt and a console client id),
// OAuth 2.0 authorization code with PKCE (S256) at the authorization server named by taskgate's
// Protected Resource Metadata (RFC 9728), its endpoints discovered from its metadata (RFC 8414, or
// OpenID Connect discovery). The token asked for is for taskgate's resource (RFC 8707 `resource`).
// Only sessionStorage holds anything: the token while the tab lives, and the PKCE verifier and
// state between leaving for the authorization server and coming back; the code is taken out of
// the address bar at once.

import { el } from "./form.js";

const TOKEN = "taskgate.token";
const PENDING = "taskgate.oauth";

/**
 * @typedef {{ authMode: string, resourceMetadata?: string, oauth?: { clientId: string, scope: string } }} Settings
 * @typedef {{ issuer: string, authorization_endpoint: string, token_endpoint: string, code_challenge_methods_supported?: string[] }} ServerMetadata
 * @typedef {{ server: ServerMetadata, resource: string, clientId: string, scope: string }} OAuthPlan
 */

export const savedToken = () => sessionStorage.getItem(TOKEN) ?? undefined;
/** @param {string} token */
export const saveToken = (token) => sessionStorage.setItem(TOKEN, token);
export const forgetToken = () => sessionStorage.removeItem(TOKEN);

/** @param {string} url */
async function getJson(url) {
  const response = await fetch(url, { credentials: "omit", cache: "no-store", signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`);
  return response.json();
}

/**
 * Where to sign in with OAuth, or undefined when taskgate does not offer it or the server cannot do PKCE.
 * @param {Settings} settings @returns {Promise<OAuthPlan | undefined>}
 */
export async function oauthPlan(settings) {
  if (!settings.oauth || !settings.resourceMetadata) return undefined;
  const metadata = await getJson(settings.resourceMetadata.replace(/^\//, ""));
  const issuer = metadata.authorization_servers?.[0];
  if (typeof issuer !== "string") return undefined;
  const server = await serverMetadata(issuer);
  if (!server?.code_challenge_methods_supported?.includes("S256")) return undefined;
  return { server, resource: metadata.resource, clientId: settings.oauth.clientId, scope: settings.oauth.scope };
}

/** RFC 8414 first (well-known segment before the issuer's path), then OpenID Connect discovery. @param {string} issuer */
async function serverMetadata(issuer) {
  const url = new URL(issuer);
  const path = url.pathname === "/" ? "" : url.pathname;
  const candidates = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`,
  ];
  for (const candidate of candidates) {
    try {
      const found = /** @type {ServerMetadata} */ (await getJson(candidate));
      if (found.issuer === issuer && found.authorization_endpoint && found.token_endpoint) return found;
    } catch {
      // the next form of discovery
    }
  }
  return undefined;
}

/** @param {Uint8Array} bytes */
const base64url = (bytes) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)));
const redirectUri = () => new URL("console", new URL(".", location.href)).href;

/** Leaves for the authorization server. @param {OAuthPlan} plan */
export async function startOAuth(plan) {
  const verifier = random();
  const state = random();
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  sessionStorage.setItem(
    PENDING,
    JSON.stringify({
      verifier,
      state,
      tokenEndpoint: plan.server.token_endpoint,
      issuer: plan.server.issuer,
      resource: plan.resource,
      clientId: plan.clientId,
    }),
  );
  const url = new URL(plan.server.authorization_endpoint);
  const params = {
    response_type: "code",
    client_id: plan.clientId,
    redirect_uri: redirectUri(),
    code_challenge: challenge,
    code_challenge_method: "S256",
    state,
    resource: plan.resource,
    ...(plan.scope ? { scope: plan.scope } : {}),
  };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  location.assign(url.href);
}

/**
 * Back from the authorization server (?code&state, or ?error): the token, saved; undefined when this is not a return.
 * Throws with a sentence when the return is wrong (state mismatch, refused, token endpoint error).
 */
export async function finishOAuth() {
  const query = new URLSearchParams(location.search);
  if (!query.has("code") && !query.has("error")) return undefined;
  history.replaceState(null, "", location.pathname + location.hash); // the code leaves the address bar
  const pending = JSON.parse(sessionStorage.getItem(PENDING) ?? "null");
  sessionStorage.removeItem(PENDING);
  if (!pending || query.get("state") !== pending.state)
    throw new Error("This sign-in was not started here (its state does not match): sign in again.");
  if (query.has("error")) throw new Error(`The authorization server refused: ${query.get("error_description") ?? query.get("error")}`);
  if (query.has("iss") && query.get("iss") !== pending.issuer)
    throw new Error("The answer came from another authorization server: sign in again.");
  const body = new URLSearchParams({
    grant_type: "authorization_code",
    code: query.get("code") ?? "",
    redirect_uri: redirectUri(),
    client_id: pending.clientId,
    code_verifier: pending.verifier,
    resource: pending.resource,
  });
  const response = await fetch(pending.tokenEndpoint, { method: "POST", body, credentials: "omit", signal: AbortSignal.timeout(10_000) });
  const json = await response.json().catch(() => ({}));
  if (!response.ok || typeof json.access_token !== "string")
    throw new Error(`The token endpoint answered ${response.status}: ${json.error_description ?? json.error ?? "no token"}`);
  saveToken(json.access_token);
  return json.access_token;
}

/**
 * The sign-in screen. @param {HTMLElement} main @param {Settings} settings @param {(token: string) => void} onToken
 * @param {string} [problem]
 */
export function showSignIn(main, settings, onToken, problem) {
  const input = /** @type {HTMLInputElement} */ (el("input", { id: "token", type: "password", autocomplete: "off", spellcheck: "false" }));
  const hint = settings.authMode === "demo" ? "Demo mode: your name is your token (e.g. alice)." : "The bearer token you give MCP clients.";
  const form = el("form", { class: "sign-in" }, [
    el("label", { for: "token" }, ["Bearer token"]),
    el("p", { class: "hint" }, [hint]),
    input,
    el("div", { class: "buttons" }, [el("button", { type: "submit", class: "primary" }, ["Sign in"])]),
  ]);
  const oauth = el("div", { class: "oauth" });
  const error = el("p", { class: "error", role: "alert" }, [problem ?? ""]);
  main.replaceChildren(el("h1", {}, ["Sign in"]), error, oauth, form);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (token !== "") onToken(token);
  });
  oauthPlan(settings)
    .then((plan) => {
      if (!plan) return;
      const button = el("button", { type: "button", class: "primary" }, [`Sign in with ${new URL(plan.server.issuer).host}`]);
      button.addEventListener("click", () => startOAuth(plan));
      oauth.replaceChildren(button, el("p", { class: "hint" }, ["or paste a token:"]));
    })
    .catch((failure) => oauth.replaceChildren(el("p", { class: "hint" }, [`OAuth sign-in unavailable: ${failure.message}`])));
}
