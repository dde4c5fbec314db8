// The headers the front door must see with every value they were sent with (a repeated
// Authorization or X-Request-Id is refused; a repeated traceparent is ignored), read from the
// request's raw headers in one pass. Node's `headersDistinct` would build an array for every
// header of every request; the door needs three.

/** Authorization, X-Request-Id and traceparent, each with every value sent (absent when not sent). */
export interface DistinctHeaders {
  authorization?: string[];
  "x-request-id"?: string[];
  traceparent?: string[];
}

type Name = keyof DistinctHeaders;

/** The wanted names by length: most header names are skipped on their length alone. */
const BY_LENGTH = new Map<number, Name>([
  [13, "authorization"],
  [12, "x-request-id"],
  [11, "traceparent"],
]);

/** `raw`: IncomingMessage.rawHeaders (name, value, name, value, …; names as sent). */
export function distinctHeaders(raw: readonly string[]): DistinctHeaders {
  const found: DistinctHeaders = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const sent = raw[i] as string;
    const name = BY_LENGTH.get(sent.length);
    if (name === undefined || sent.toLowerCase() !== name) continue;
    const values = found[name];
    if (values) values.push(raw[i + 1] as string);
    else found[name] = [raw[i + 1] as string];
  }
  return found;
}
