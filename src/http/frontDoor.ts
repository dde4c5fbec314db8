// The one MCP endpoint. Every request: Origin/Host check, body read (size-limited), then the
// legacy pass-through for legacy-shaped requests, 405 for GET/DELETE without a legacy session,
// and for modern POSTs: bearer identity, envelope checks in the spec's order, the method router.
// One log line per request says what happened to it.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { parseBearer } from "../auth/bearer.js";
import { loggableSubject, type IdentityResolver } from "../auth/identity.js";
import type { Config } from "../config/schema.js";
import { ErrorCode, RpcError } from "../protocol/errors.js";
import type { JsonObject, RequestId } from "../protocol/wire.js";
import { STREAMED, type RequestContext } from "../methods/context.js";
import type { MethodRouter } from "../methods/router.js";
import { classifyLegacy, parseEnvelope, parseJsonBody } from "./envelope.js";
import { checkOriginAndHost } from "./originGuard.js";
import type { PassThrough } from "./passThrough.js";
import { readBody, BodyTooLargeError } from "./readBody.js";
import { sendError, sendJson, sendResult } from "./rpcResponse.js";

export interface FrontDoorDeps {
  config: Config;
  identity: IdentityResolver;
  router: MethodRouter;
  passThrough: PassThrough;
  log: Logger;
}

const WWW_AUTHENTICATE = 'Bearer realm="taskgate", error="invalid_token"';

function idOf(body: unknown): RequestId | null {
  const id = (body as { id?: unknown } | undefined)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}


export function frontDoor(deps: FrontDoorDeps) {
  const { config, log } = deps;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const note: Record<string, unknown> = {};
    res.on("close", () => {
      const line = { event: "request", httpMethod: req.method, status: res.statusCode, ms: Math.round(performance.now() - started), ...note };
      if (res.statusCode >= 500) log.error(line, "request failed");
      else log.info(line, "request");
    });

    const forbidden = checkOriginAndHost(req.headers, { origins: config.allowedOrigins, hosts: config.allowedHosts });
    if (forbidden) return sendError(res, null, forbidden);

    let body: Buffer | undefined;
    if (req.method === "POST") {
      try {
        body = await readBody(req, config.bodyLimitBytes);
      } catch (error) {
        if (error instanceof BodyTooLargeError) {
          note.rejected = "body_too_large";
          return sendError(res, null, new RpcError(ErrorCode.InvalidRequest, error.message, undefined, 413), { Connection: "close" });
        }
        throw error;
      }
    }
    const text = body?.toString("utf8") ?? "";
    const parsed = parseJsonBody(text);
    const json = parsed instanceof RpcError ? undefined : parsed;
    const legacy = classifyLegacy({
      method: req.method ?? "",
      headers: req.headers,
      body: json,
      isKnownLegacySession: (id) => deps.passThrough.isKnownSession(id),
    });
    if (legacy) {
      note.door = "legacy";
      return deps.passThrough.handle(req, res, body);
    }
    if (req.method !== "POST") {
      note.rejected = "method_not_allowed";
      return sendJson(
        res,
        405,
        { jsonrpc: "2.0", id: null, error: { code: ErrorCode.InvalidRequest, message: `${req.method} is not allowed: 2026-07-28 uses POST only (GET/DELETE serve legacy sessions only)` } },
        { Allow: "POST" },
      );
    }

    const token = parseBearer(req.headers.authorization);
    const resolved = token === undefined ? undefined : await deps.identity.resolve(token);
    const identity = resolved?.ok ? resolved.identity : undefined;
    if (!identity) {
      note.rejected = "unauthenticated";
      const message = token === undefined ? "Authorization: Bearer <token> is required" : "The bearer token is not valid";
      return sendError(res, idOf(json), new RpcError(ErrorCode.InvalidRequest, message, undefined, 401), { "WWW-Authenticate": WWW_AUTHENTICATE });
    }
    note.subject = loggableSubject(identity, deps.identity.mode);

    const envelope = parseEnvelope({ headers: req.headers, body: text, parsed });
    if (envelope.kind === "error") {
      note.rejected = envelope.error.code;
      return sendError(res, envelope.id, envelope.error);
    }
    if (envelope.kind === "notification") {
      note.notification = envelope.method;
      res.writeHead(202).end();
      return;
    }

    const { request } = envelope;
    note.rpcMethod = request.method;
    note.rpcId = request.id;
    const ctx: RequestContext = {
      id: request.id,
      method: request.method,
      params: request.params,
      meta: request.params._meta as JsonObject,
      capabilities: envelope.capabilities,
      identity,
      req,
      res,
      log: log.child({ rpcMethod: request.method }),
      note,
    };
    try {
      const result = await deps.router.dispatch(ctx);
      if (result !== STREAMED) sendResult(res, request.id, result);
    } catch (error) {
      const rpc = error instanceof RpcError ? error : new RpcError(ErrorCode.InternalError, "Internal error");
      if (!(error instanceof RpcError)) log.error({ event: "request.crashed", err: error }, "handler crashed");
      note.error = rpc.code;
      if (!res.headersSent) sendError(res, request.id, rpc);
    }
  };
}
