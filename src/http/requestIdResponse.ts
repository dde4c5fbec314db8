// The MCP endpoint's responses: each carries its request's id as X-Request-Id, written with the
// status line by writeHead itself, so whoever answers (a JSON reply, an SSE stream, the legacy door
// passing an upstream answer on) need not know of it. Why not res.setHeader at arrival: a header set
// ahead turns every later writeHead with a headers object onto Node's slow path (each header set
// and checked again one by one), and setting it was a measurable part of a quick call's way in.
// A header of the same name the writer gives (an upstream's own, passed through), in any spelling, wins.

import { type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, ServerResponse } from "node:http";

type Headers = OutgoingHttpHeaders | OutgoingHttpHeader[];

export class RequestIdResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** Written as X-Request-Id with the status line (set by the front door when the request arrives). */
  requestId: string | undefined;

  override writeHead(statusCode: number, message?: string | Headers, headers?: Headers): this {
    const id = this.requestId;
    const given = typeof message === "string" ? headers : message;
    let sent = given;
    if (id !== undefined) {
      if (given === undefined) sent = { "X-Request-Id": id };
      // Rare (no writer of ours passes a list): Node merges a header set ahead with the writer's, which win.
      else if (Array.isArray(given)) this.setHeader("X-Request-Id", id);
      else if (!namesRequestId(given)) sent = { "X-Request-Id": id, ...given };
    }
    return typeof message === "string" ? super.writeHead(statusCode, message, sent) : super.writeHead(statusCode, sent);
  }
}

/** The writer gives its own X-Request-Id, however spelled (header names are case-insensitive). Every reply
 *  without one walks its few names anyway, so no spelling is looked up ahead of the walk. */
function namesRequestId(headers: OutgoingHttpHeaders): boolean {
  for (const name in headers) if (name.length === 12 && name.toLowerCase() === "x-request-id") return true;
  return false;
}
