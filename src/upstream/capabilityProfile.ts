// The legacy client capabilities an upstream session is opened with, and the capability profile
// of a modern request (what it declared it can answer). With upstream.sessionsPer "identity" (the
// default) an identity's one session declares every kind taskgate can relay (ALL_KINDS) and each
// call is held to its own request's profile (UpstreamCall answers an undeclared question the way a
// client without that capability would); with "capabilities" sessions are pooled per profile, so
// the upstream is never told of a capability the real client lacks.

import type { ClientCapabilities } from "../protocol/wire.js";

export interface LegacyClientCapabilities {
  elicitation?: { form?: Record<string, never>; url?: Record<string, never> };
  sampling?: Record<string, never>;
  roots?: Record<string, never>;
}

/** How an upstream's sessions are shared: one per identity, or one per identity and capability profile. */
export type SessionsPer = "identity" | "capabilities";

/** Every question kind taskgate can relay to a modern client: what an identity's one session declares. */
export const ALL_KINDS: LegacyClientCapabilities = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} };

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
