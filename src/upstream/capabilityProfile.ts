// The legacy client capabilities an upstream session is opened with, derived from what a modern
// request declared. Sessions are pooled per profile so an upstream never asks a question the
// real client could not answer (it falls back on its own logic instead).

import type { ClientCapabilities } from "../protocol/wire.js";

export interface LegacyClientCapabilities {
  elicitation?: { form?: Record<string, never>; url?: Record<string, never> };
  sampling?: Record<string, never>;
  roots?: Record<string, never>;
}

export function profileOf(declared: ClientCapabilities | undefined): LegacyClientCapabilities {
  const profile: LegacyClientCapabilities = {};
  const elicitation = declared?.elicitation;
  if (elicitation && typeof elicitation === "object") {
    const url = typeof elicitation.url === "object" && elicitation.url !== null;
    // {} means form only; an explicit url without form means url only.
    const form = typeof elicitation.form === "object" && elicitation.form !== null ? true : !url;
    profile.elicitation = { ...(form ? { form: {} } : {}), ...(url ? { url: {} } : {}) };
  }
  if (declared?.sampling && typeof declared.sampling === "object") profile.sampling = {};
  // No listChanged: 2026 has no roots change signal we could relay.
  if (declared?.roots && typeof declared.roots === "object") profile.roots = {};
  return profile;
}

export const profileKey = (profile: LegacyClientCapabilities): string =>
  [
    profile.elicitation?.form ? "form" : "",
    profile.elicitation?.url ? "url" : "",
    profile.sampling ? "sampling" : "",
    profile.roots ? "roots" : "",
  ]
    .filter(Boolean)
    .join("+") || "none";

/** Whether a session of this profile can be asked anything (elicitation, sampling or roots). */
export const hasQuestions = (profile: LegacyClientCapabilities): boolean =>
  Boolean(profile.elicitation || profile.sampling || profile.roots);
