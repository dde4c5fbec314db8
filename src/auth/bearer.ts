// parseBearer: extracts the token from an HTTP Authorization header value ("Bearer <token>").
// The scheme is case-insensitive and surrounding whitespace is ignored; anything else — missing header,
// another scheme, no token, or a token containing whitespace — yields undefined. Never throws.

const BEARER = /^bearer[ \t]+(\S+)$/i;

export function parseBearer(authorizationHeader: string | undefined): string | undefined {
  if (typeof authorizationHeader !== "string") return undefined;
  const match = BEARER.exec(authorizationHeader.trim());
  return match?.[1];
}
