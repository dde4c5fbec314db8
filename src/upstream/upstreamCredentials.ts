// UpstreamCredentials: what the upstream sees of taskgate and of the caller, on both doors.
// In: upstream.headers (static, already expanded from the environment), upstream.forwardAuthorization
// and upstream.subjectHeader. Out: the headers for one owner's upstream requests.
// - Static headers go on every request.
// - With forwardAuthorization, the caller's own Authorization header goes on unchanged: the latest
//   one the owner presented, so a session opened with a token that since expired uses the fresh one.
// - With a subjectHeader, the caller's subject (percent-encoded when it is not printable ASCII).
// The schema refuses forwarding together with a static Authorization, so they never mix. A caller's
// copy of the subject header is never passed on (the legacy door strips it): only taskgate says who.

import type { IncomingHttpHeaders } from "node:http";

export interface UpstreamCredentialOptions {
  headers: Readonly<Record<string, string>>;
  forwardAuthorization: boolean;
  subjectHeader?: string;
}

interface CallerCredentials {
  subject: string;
  authorization?: string;
}

/** Owners remembered at most; the oldest is forgotten first (its open sessions keep what they had). */
const OWNER_LIMIT = 10_000;

const PRINTABLE = /^[\x20-\x7E]*$/;

export class UpstreamCredentials {
  private readonly callers = new Map<string, CallerCredentials>();

  constructor(private readonly options: UpstreamCredentialOptions) {}

  /** Whether the upstream sees anything of the caller (then sessions need the caller's credentials first). */
  get perCaller(): boolean {
    return this.options.forwardAuthorization || this.options.subjectHeader !== undefined;
  }

  /** Remembers what an authenticated caller presented; called on every request, before any upstream use. */
  remember(owner: string, subject: string, authorization: string | undefined): void {
    if (!this.perCaller) return;
    const known = this.callers.get(owner);
    if (known) {
      if (authorization !== undefined) known.authorization = authorization;
      // Most recently seen last: eviction below takes the oldest.
      this.callers.delete(owner);
      this.callers.set(owner, known);
      return;
    }
    if (this.callers.size >= OWNER_LIMIT) this.callers.delete(this.callers.keys().next().value as string);
    this.callers.set(owner, { subject, ...(authorization !== undefined ? { authorization } : {}) });
  }

  /** The headers for `owner`'s upstream requests now. */
  headersFor(owner: string): Record<string, string> {
    const caller = this.callers.get(owner);
    return this.compose(caller?.subject, caller?.authorization);
  }

  /** The headers one request from a caller carries upstream (the legacy door: per request). */
  compose(subject: string | undefined, authorization: string | undefined): Record<string, string> {
    const { headers, forwardAuthorization, subjectHeader } = this.options;
    return {
      ...headers,
      ...(forwardAuthorization && authorization !== undefined ? { authorization } : {}),
      ...(subjectHeader && subject !== undefined ? { [subjectHeader.toLowerCase()]: headerSafe(subject) } : {}),
    };
  }

  /** Rewrites a legacy request's headers in place: the caller's Authorization only when forwarding,
   *  never the caller's own subject header, then the static and per-caller headers. */
  rewrite(
    incoming: IncomingHttpHeaders,
    subject: string | undefined,
    set: (name: string, value: string) => void,
    remove: (name: string) => void,
  ): void {
    const { forwardAuthorization, subjectHeader } = this.options;
    if (!forwardAuthorization) remove("authorization");
    if (subjectHeader) remove(subjectHeader.toLowerCase());
    const authorization = typeof incoming.authorization === "string" ? incoming.authorization : undefined;
    for (const [name, value] of Object.entries(this.compose(subject, authorization))) set(name, value);
  }
}

/** A subject as a header value: as is when printable ASCII, else percent-encoded (no header injection). */
function headerSafe(subject: string): string {
  return PRINTABLE.test(subject) ? subject : encodeURIComponent(subject);
}
