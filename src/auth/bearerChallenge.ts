// bearerChallenge: the `WWW-Authenticate` header value of a refused request (RFC 6750 §3, RFC 9728 §5.1).
// - `resource_metadata="<url>"` whenever the resource publishes Protected Resource Metadata;
// - `error` (and `error_description`) only when the request presented a token: RFC 6750 §3.1 says a
//   request without authentication information gets no error code — pass `error` only then;
// - `scope="a b"` to say which scopes are needed (insufficient_scope, and 401s when scopes are required).
// Values are made safe for the header: `error_description` keeps only the characters RFC 6750 allows
// (printable ASCII without '"' and '\'; others replaced) and is shortened; scopes that are not RFC 6749
// scope-tokens are dropped; quoted values escape '"' and '\'; nothing can carry a CR or LF.

export type BearerError = "invalid_request" | "invalid_token" | "insufficient_scope";

export interface BearerChallengeParts {
  /** URL of the Protected Resource Metadata document. */
  resourceMetadata?: string | undefined;
  /** Only when a token was presented. */
  error?: BearerError | undefined;
  errorDescription?: string | undefined;
  scope?: readonly string[];
}

const DESCRIPTION_MAX = 300;
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** RFC 6750 error_description: %x20-21 / %x23-5B / %x5D-7E only. */
function safeDescription(text: string): string {
  const cleaned = text
    .replace(/"/g, "'")
    .replace(/\\/g, "/")
    .replace(/[^\x20-\x7E]/g, "?");
  return cleaned.length > DESCRIPTION_MAX ? `${cleaned.slice(0, DESCRIPTION_MAX - 3)}...` : cleaned;
}

/** RFC 9110 quoted-string: escape '"' and '\'; control characters are not allowed at all. */
function quoted(value: string): string {
  return `"${value.replace(/[\x00-\x1F\x7F]/g, "").replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

export function bearerChallenge(parts: BearerChallengeParts = {}): string {
  const params: string[] = [];
  if (parts.resourceMetadata !== undefined) params.push(`resource_metadata=${quoted(parts.resourceMetadata)}`);
  const scope = (parts.scope ?? []).filter((s) => SCOPE_TOKEN.test(s));
  if (scope.length > 0) params.push(`scope=${quoted(scope.join(" "))}`);
  if (parts.error !== undefined) {
    params.push(`error=${quoted(parts.error)}`);
    if (parts.errorDescription) params.push(`error_description=${quoted(safeDescription(parts.errorDescription))}`);
  }
  return params.length === 0 ? "Bearer" : `Bearer ${params.join(", ")}`;
}
