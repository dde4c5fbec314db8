// The legacy door in front of a modern (2026-07-28-only) backend: taskgate serves the session
// protocol itself, so an old (2025-era) client works as if the server were legacy. `initialize` is
// answered from the backend's server/discover (its serverInfo, capabilities and instructions; the
// protocol version negotiated with the client); the Mcp-Session-Id is minted and kept here (at most
// upstream.maxSessions, forgotten after upstream.sessionIdleMs idle, bound to the identity that
// opened it when the door authenticates); DELETE ends it. Every other request is translated to a
// 2026-07-28 one — `_meta` with the protocol version and the capabilities the client declared in
// its initialize, its progress token kept — and sent over the modern link with the caller's
// credentials. The answer goes back on the POST's SSE stream: the backend's progress and log
// notifications, each MRTR `input_required` round asked of the client as server→client requests
// (elicitation/create, sampling/createMessage, roots/list) whose answers go back as the retry's
// inputResponses with the backend's requestState, a backend task followed with tasks/get until
// it ends, then the response in the old shape (no resultType). `notifications/cancelled` from the
// client aborts the relayed exchange (the backend sees its request closed) and cancels a followed task.
// With tracing on, each request of the client is a server span; the exchanges with the backend are
// the modern link's client spans under it (a followed task's polls go untraced).

import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { endLegacySpan, failLegacySpan, startLegacySpan } from "../observability/legacySpan.js";
import { activeSpan, traceIdsOf, withSpan } from "../observability/tracing.js";
import { internalError, invalidRequest, RpcError, requestCancelled } from "../protocol/errors.js";
import { type JsonObject, META, PROTOCOL_VERSION, type RequestId, TASKS_EXTENSION } from "../protocol/wire.js";
import type { BackendEra } from "../upstream/backendEra.js";
import type { ModernLink } from "../upstream/modernLink.js";
import type { UpstreamCredentials } from "../upstream/upstreamCredentials.js";
import { toClientError } from "../upstream/upstreamFailure.js";
import { isObject } from "../util/json.js";
import { LEGACY_VERSIONS } from "./envelope.js";
import { sendError, sendJson } from "./jsonResponse.js";
import type { LegacyCaller, LegacyVisit, PassThrough } from "./passThrough.js";
import { SseWriter } from "./sseWriter.js";

export interface OldClientDoorOptions {
  era: BackendEra;
  link: ModernLink;
  credentials: UpstreamCredentials;
  bindSessions: boolean;
  /** upstream.maxSessions: sessions kept at most. */
  maxSessions: number;
  /** upstream.sessionIdleMs: a session unused this long is forgotten. */
  sessionIdleMs: number;
  /** upstream.requestTimeoutMs: how long the client's answer to a question is waited for. */
  answerTimeoutMs: number;
  /** tasks.ttlMs: how long a backend task is followed for an old client at most. */
  followTaskMs: number;
  log: Logger;
}

interface OldSession {
  owner: string | undefined;
  capabilities: JsonObject;
  clientInfo: JsonObject | undefined;
  lastSeen: number;
  /** Relayed requests in flight, by the client's id (notifications/cancelled aborts them). */
  running: Map<string, AbortController>;
  /** Questions asked of the client, by the id taskgate gave them. */
  asked: Map<string, (answer: JsonObject) => void>;
}

/** The legacy door of an era-aware backend: the pass-through while it is legacy, the session protocol served here while it is modern. */
export function eraAwareLegacyDoor(passThrough: PassThrough, options: OldClientDoorOptions): PassThrough {
  const sessions = new Map<string, OldSession>();
  const live = (id: string): OldSession | undefined => {
    const session = sessions.get(id);
    if (session && Date.now() - session.lastSeen > options.sessionIdleMs) {
      sessions.delete(id);
      for (const running of session.running.values()) running.abort("session expired");
      return undefined;
    }
    return session;
  };
  return {
    handle(req, res, body, visit, caller) {
      const { requestId } = visit;
      void (async () => {
        const used = req.headers["mcp-session-id"];
        const ours = typeof used === "string" && sessions.has(used);
        const theirs = typeof used === "string" && !ours && passThrough.isKnownSession(used);
        if (theirs || (!ours && (await eraOf(options, req, caller)) !== "modern")) return passThrough.handle(req, res, body, visit, caller);
        const context: DoorContext = { options, sessions, live, visit, caller, authorization: req.headers.authorization };
        await serveOldClient(context, req, res, body);
      })().catch((error: unknown) => {
        options.log.warn({ event: "legacy.modern.failed", requestId, err: String(error) }, "old client request failed");
        if (!res.headersSent) sendError(res, null, toClientError(error));
        else res.end();
      });
    },
    isKnownSession: (id) => live(id) !== undefined || passThrough.isKnownSession(id),
    async close() {
      for (const session of sessions.values()) for (const running of session.running.values()) running.abort("taskgate is closing");
      sessions.clear();
      await passThrough.close();
    },
  };
}

interface DoorContext {
  options: OldClientDoorOptions;
  sessions: Map<string, OldSession>;
  live: (id: string) => OldSession | undefined;
  visit: LegacyVisit;
  caller: LegacyCaller | undefined;
  /** The caller's Authorization (sent on with upstream.forwardAuthorization only). */
  authorization: string | undefined;
}

/** The backend's era, probed first when not known yet (an unreachable backend: the pass-through says so). */
async function eraOf(options: OldClientDoorOptions, req: IncomingMessage, caller: LegacyCaller | undefined) {
  if (options.era.current) return options.era.current.era;
  const headers = options.credentials.compose(caller?.subject, req.headers.authorization);
  return (await options.era.resolve(headers).catch(() => undefined))?.era;
}

async function serveOldClient(context: DoorContext, req: IncomingMessage, res: ServerResponse, body: Buffer | undefined): Promise<void> {
  const message = parsed(body);
  const span = req.method === "POST" ? startLegacySpan(req, message, "old_client", context.caller?.owner) : undefined;
  if (!span) return answerOldClient(context, req, res, message);
  Object.assign(context.visit.note, traceIdsOf(span));
  res.once("close", () => endLegacySpan(span, res.statusCode, res.writableFinished));
  return withSpan(span, () => answerOldClient(context, req, res, message));
}

async function answerOldClient(context: DoorContext, req: IncomingMessage, res: ServerResponse, message: unknown): Promise<void> {
  const { options, caller } = context;
  const used = req.headers["mcp-session-id"];
  if (req.method === "POST" && isObject(message) && message.method === "initialize") return initialize(context, res, message);
  const session = typeof used === "string" ? context.live(used) : undefined;
  if (session === undefined || (options.bindSessions && session.owner !== caller?.owner)) {
    return sendError(res, null, invalidRequest("Session not found: send initialize to start a new session", 404));
  }
  session.lastSeen = Date.now();
  if (req.method === "DELETE") {
    context.sessions.delete(used as string);
    for (const running of session.running.values()) running.abort("the client ended its session");
    res.writeHead(200).end();
    return;
  }
  // No standalone stream: the backend's requests and notifications come on each POST's stream.
  if (req.method !== "POST") return void res.writeHead(405, { Allow: "POST, DELETE" }).end();
  if (!isObject(message)) return sendError(res, null, invalidRequest("Expected one JSON-RPC message (batches are not served here)"));
  if (typeof message.method !== "string") return answered(session, res, message);
  if (message.id === undefined || message.id === null) return notified(session, res, message);
  return relay(context, session, res, message);
}

function parsed(body: Buffer | undefined): unknown {
  try {
    return body && body.length > 0 ? JSON.parse(body.toString("utf8")) : undefined;
  } catch {
    return undefined;
  }
}

/** initialize: answered from the backend's discover; a session of taskgate's own. */
async function initialize(context: DoorContext, res: ServerResponse, message: JsonObject): Promise<void> {
  const { options, caller } = context;
  for (const id of context.sessions.keys()) context.live(id); // expired ones go first
  if (context.sessions.size >= options.maxSessions) {
    return sendError(
      res,
      (message.id ?? null) as RequestId | null,
      invalidRequest(`Too many sessions: taskgate keeps at most ${options.maxSessions} old-client sessions (upstream.maxSessions)`, 503),
    );
  }
  const found = options.era.current?.discover ?? (await options.era.resolve(headersOf(context))).discover ?? {};
  const params = isObject(message.params) ? message.params : {};
  const asked = typeof params.protocolVersion === "string" ? params.protocolVersion : "";
  const id = randomUUID();
  context.sessions.set(id, {
    owner: caller?.owner,
    capabilities: isObject(params.capabilities) ? params.capabilities : {},
    clientInfo: isObject(params.clientInfo) ? params.clientInfo : undefined,
    lastSeen: Date.now(),
    running: new Map(),
    asked: new Map(),
  });
  const result: JsonObject = {
    protocolVersion: LEGACY_VERSIONS.has(asked) ? asked : "2025-11-25",
    capabilities: legacyCapabilities(found.capabilities),
    serverInfo: serverInfoOf(found),
    ...(typeof found.instructions === "string" ? { instructions: found.instructions } : {}),
  };
  options.log.info(
    { event: "legacy.modern.session", requestId: context.visit.requestId },
    "old client session opened in front of a modern backend",
  );
  sendJson(res, 200, { jsonrpc: "2.0", id: message.id ?? null, result }, { "Mcp-Session-Id": id });
}

function serverInfoOf(found: JsonObject): JsonObject {
  if (isObject(found.serverInfo)) return found.serverInfo;
  const meta = isObject(found._meta) ? found._meta : {};
  const info = meta[META.serverInfo];
  return isObject(info) ? info : { name: "taskgate", version: "0.1.0" };
}

/** The backend's capabilities as a 2025 server states them (the extensions block is 2026's). */
function legacyCapabilities(capabilities: unknown): JsonObject {
  if (!isObject(capabilities)) return {};
  const { extensions: _extensions, ...rest } = capabilities;
  return rest;
}

function headersOf(context: DoorContext): Record<string, string> {
  return context.options.credentials.compose(context.caller?.subject, context.authorization);
}

/** A notification from the client: a cancel aborts what it names; the others need nothing. */
function notified(session: OldSession, res: ServerResponse, message: JsonObject): void {
  const params = isObject(message.params) ? message.params : {};
  if (message.method === "notifications/cancelled" && params.requestId !== undefined) {
    session.running.get(String(params.requestId))?.abort("the client cancelled the request");
  }
  res.writeHead(202).end();
}

/** The client's answer to a question taskgate asked on a POST stream. */
function answered(session: OldSession, res: ServerResponse, message: JsonObject): void {
  const waiting = session.asked.get(String(message.id));
  if (waiting) waiting(message);
  res.writeHead(202).end();
}

/** MRTR rounds of one request at most (a backend asking forever is refused, not followed). */
const MAX_ROUNDS = 16;

/** A request relayed to the backend; everything it says goes to the client on the POST's SSE stream. */
async function relay(context: DoorContext, session: OldSession, res: ServerResponse, message: JsonObject): Promise<void> {
  const id = message.id as RequestId;
  if (message.method === "ping") return sendJson(res, 200, { jsonrpc: "2.0", id, result: {} });
  const controller = new AbortController();
  session.running.set(String(id), controller);
  res.on("close", () => {
    if (!res.writableEnded) controller.abort("the client closed the stream");
  });
  // Keep-alives while a task is followed; a client that stops reading is cut off (SseWriter).
  const sse = new SseWriter(res);
  const emit = (frame: JsonObject) => sse.send({ jsonrpc: "2.0", ...frame });
  try {
    const result = await rounds(context, session, message, controller.signal, emit);
    emit({ id, result });
  } catch (error) {
    // A cancelled request gets no response (the client has given up on it).
    if (!controller.signal.aborted) {
      const failure = errorObject(toClientError(error));
      const span = activeSpan();
      if (span) failLegacySpan(span, { error: failure });
      emit({ id, error: failure });
    }
  } finally {
    session.running.delete(String(id));
    context.options.log.info(
      {
        event: "legacy.modern.relayed",
        requestId: context.visit.requestId,
        rpcMethod: message.method,
        cancelled: controller.signal.aborted,
      },
      "old client request served by a modern backend",
    );
    sse.end();
  }
}

function errorObject(error: RpcError): JsonObject {
  return { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data as JsonObject } : {}) };
}

/** The request in 2026-07-28, its input_required rounds asked of the client, a task followed: the result in the old shape. */
async function rounds(
  context: DoorContext,
  session: OldSession,
  message: JsonObject,
  signal: AbortSignal,
  emit: (frame: JsonObject) => void,
): Promise<JsonObject> {
  const params = isObject(message.params) ? message.params : {};
  const clientMeta = isObject(params._meta) ? params._meta : {};
  const meta: JsonObject = { ...clientMeta, ...envelope(session) };
  let retry: JsonObject = {};
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const result = await exchanged(context, String(message.method), { ...params, ...retry, _meta: meta }, signal, emit);
    if (result.resultType === "input_required") {
      retry = await askClient(context, session, result, signal, emit);
      continue;
    }
    const { resultType: _type, ...plain } =
      result.resultType === "task" ? await followed(context, session, result, envelope(session), signal, emit) : result;
    return plain;
  }
  throw internalError(`The backend asked for input more than ${MAX_ROUNDS} times for one request`);
}

/** One exchange with the backend: its notifications passed on, its result (or error) returned. */
async function exchanged(
  context: DoorContext,
  method: string,
  params: JsonObject,
  signal: AbortSignal,
  emit: (frame: JsonObject) => void,
  untraced = false,
): Promise<JsonObject> {
  const { link } = context.options;
  const headers = headersOf(context);
  for await (const { message, httpStatus } of link.exchange({ id: link.nextId(), method, params, headers, signal, long: true, untraced })) {
    if (typeof message.method === "string" && message.id === undefined) {
      emit(message);
      continue;
    }
    if (isObject(message.error)) throw RpcError.from(message.error as { code: number; message: string }, httpStatus);
    return isObject(message.result) ? message.result : {};
  }
  if (signal.aborted) throw requestCancelled();
  throw internalError("Upstream call lost: the backend ended the exchange without a response");
}

/** The 2026-07-28 `_meta` of the session's requests: its client's capabilities and info. */
function envelope(session: OldSession): JsonObject {
  return {
    [META.protocolVersion]: PROTOCOL_VERSION,
    // The backend may answer a call with a task of its own: taskgate follows it to its result.
    [META.clientCapabilities]: { ...session.capabilities, extensions: { [TASKS_EXTENSION]: {} } },
    ...(session.clientInfo ? { [META.clientInfo]: session.clientInfo } : {}),
  };
}

/** Each of the round's inputRequests asked of the client on its stream; the answers as the retry's params. */
async function askClient(
  context: DoorContext,
  session: OldSession,
  round: JsonObject,
  signal: AbortSignal,
  emit: (frame: JsonObject) => void,
): Promise<JsonObject> {
  const requests = isObject(round.inputRequests) ? round.inputRequests : {};
  const answers = await Promise.all(
    Object.entries(requests).map(async ([key, asked]) => {
      if (!isObject(asked) || typeof asked.method !== "string") throw internalError(`The backend's input request '${key}' has no method`);
      const id = `taskgate-${randomUUID()}`;
      const answer = waitForAnswer(context, session, id, signal);
      emit({ id, method: asked.method, params: isObject(asked.params) ? asked.params : {} });
      const reply = await answer;
      if (isObject(reply.error)) throw RpcError.from(reply.error as { code: number; message: string });
      return [key, isObject(reply.result) ? reply.result : {}] as const;
    }),
  );
  return { inputResponses: Object.fromEntries(answers), ...(round.requestState !== undefined ? { requestState: round.requestState } : {}) };
}

function waitForAnswer(context: DoorContext, session: OldSession, id: string, signal: AbortSignal): Promise<JsonObject> {
  const ms = context.options.answerTimeoutMs;
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      session.asked.delete(id);
      signal.removeEventListener("abort", gone);
    };
    const gone = () => (done(), reject(requestCancelled()));
    const timer = setTimeout(() => {
      done();
      reject(internalError(`The client did not answer the backend's question within ${ms} ms (upstream.requestTimeoutMs)`));
    }, ms);
    signal.addEventListener("abort", gone, { once: true });
    session.asked.set(id, (answer) => (done(), resolve(answer)));
  });
}

/** How often a followed task is polled: its pollIntervalMs, within these bounds. */
const POLL_MIN_MS = 250;
const POLL_MAX_MS = 5_000;

/** A backend task followed with tasks/get until it ends (its questions asked of the client, answered with
 *  tasks/update); its result is the call's. The client cancelling cancels the task on the backend. */
async function followed(
  context: DoorContext,
  session: OldSession,
  created: JsonObject,
  meta: JsonObject,
  signal: AbortSignal,
  emit: (frame: JsonObject) => void,
): Promise<JsonObject> {
  const taskId = String(created.taskId);
  const { link, followTaskMs } = context.options;
  const cancel = () =>
    void link
      .send({ id: link.nextId(), method: "tasks/cancel", params: { taskId, _meta: meta }, headers: headersOf(context) })
      .catch(() => undefined);
  signal.addEventListener("abort", cancel, { once: true });
  const deadline = Date.now() + followTaskMs;
  try {
    for (let task = created; ; task = await exchanged(context, "tasks/get", { taskId, _meta: meta }, signal, emit, true)) {
      if (task.status === "completed" || task.status === "failed") {
        if (isObject(task.result)) return task.result;
        throw internalError(`The backend's task ${task.status}${typeof task.statusMessage === "string" ? `: ${task.statusMessage}` : ""}`);
      }
      if (task.status === "cancelled") throw internalError("The backend cancelled its task");
      if (task.status === "input_required" && isObject(task.inputRequests)) {
        const answers = await askClient(context, session, task, signal, emit);
        await exchanged(context, "tasks/update", { taskId, inputResponses: answers.inputResponses ?? {}, _meta: meta }, signal, emit);
        continue;
      }
      if (Date.now() >= deadline) throw internalError(`The backend's task did not end within ${followTaskMs} ms (tasks.ttlMs)`);
      const interval = typeof task.pollIntervalMs === "number" ? task.pollIntervalMs : POLL_MIN_MS;
      await delay(Math.min(POLL_MAX_MS, Math.max(POLL_MIN_MS, interval)), signal);
    }
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const gone = () => (clearTimeout(timer), reject(requestCancelled()));
    const timer = setTimeout(() => (signal.removeEventListener("abort", gone), resolve()), ms);
    signal.addEventListener("abort", gone, { once: true });
  });
}
