// Relays one 2026-07-28 request to a modern backend as the client sent it: its params with their
// `_meta` (protocol version, capabilities, progress token, trace context), MRTR `inputResponses`
// and `requestState`, the client's Mcp-Param-* headers, and the owner's credentials (taskgate has
// authenticated the caller; the backend sees the identity the way a legacy one does). The backend's
// answer comes back as it was: one JSON reply, or a stream (its progress and log notifications,
// then the response) under the client's id; its errors keep their code and HTTP status. Two
// handles change, so each is good only for its owner: a task's id is wrapped (BackendTasks), and an
// `input_required` round's requestState is sealed for the caller, path and call (RelayedStates),
// a retry's opened again before it is relayed. The client leaving closes the exchange (the
// backend's cancellation).

import type { UpstreamAccess } from "../access/upstreamAccess.js";
import { ownerHashOf } from "../auth/identity.js";
import { internalError, invalidParams, RpcError } from "../protocol/errors.js";
import { errorMessage, type Reply, resultMessage } from "../protocol/reply.js";
import type { JsonObject, RequestId } from "../protocol/wire.js";
import type { BackendTasks } from "../tasks/backendTasks.js";
import { type ModernLink, type ModernMessage, paramHeadersOf } from "../upstream/modernLink.js";
import { toClientError } from "../upstream/upstreamFailure.js";
import { isObject } from "../util/json.js";
import type { MethodRequest } from "./handler.js";
import { LISTED, refuseHiddenReference } from "./relay.js";
import type { RelayedStates, StateBinding } from "./relayedStates.js";

export interface ModernBackend {
  link: ModernLink;
  tasks: BackendTasks;
  /** The requestState of the backend's MRTR rounds, sealed for each caller. */
  states: RelayedStates;
  /** The headers of `owner`'s requests to the backend (its credentials). */
  headersFor(owner: string): Record<string, string>;
}

export function modernRelayHandler(backend: ModernBackend, policy: UpstreamAccess) {
  return async (request: MethodRequest): Promise<Reply> => {
    const owner = ownerHashOf(request.identity);
    refuseHidden(request, policy);
    const { link } = backend;
    const binding: StateBinding = { owner, endpoint: request.endpoint, method: request.method, params: request.params };
    // A retry's state is the client's handle: the backend gets its own state back, or nothing is relayed.
    const params =
      request.params.requestState === undefined
        ? request.params
        : { ...request.params, requestState: backend.states.open(request.params.requestState, binding) };
    for (const key of ["name", "uri"] as const) if (typeof request.params[key] === "string") request.note[key] = request.params[key];
    const controller = new AbortController();
    const stop = () => controller.abort("client closed the stream");
    request.gone.signal.addEventListener("abort", stop, { once: true });
    const exchange = link.exchange({
      id: link.nextId(),
      method: request.method,
      params,
      headers: { ...backend.headersFor(owner), ...paramHeadersOf(request.headers) },
      signal: controller.signal,
      long: true,
    });
    const first = await exchange.next();
    if (first.done) throw internalError("Upstream call lost: the backend ended the exchange without a response");
    if (!isNotification(first.value.message)) {
      request.gone.signal.removeEventListener("abort", stop);
      // The response is in: the exchange is closed, and with it the HTTP request, whose stream a backend may leave open.
      void exchange.return(undefined);
      return finalReply(first.value, binding, backend, request, policy);
    }
    return {
      kind: "stream",
      messages: streamOf(first.value, exchange, request.id, (m) => finalMessage(m, binding, backend, request, policy)),
      onClientGone: stop,
    };
  };
}

const isNotification = (message: JsonObject): boolean => typeof message.method === "string" && message.id === undefined;

async function* streamOf(
  first: ModernMessage,
  rest: AsyncGenerator<ModernMessage>,
  id: RequestId,
  final: (message: ModernMessage) => JsonObject,
): AsyncGenerator<JsonObject> {
  try {
    yield first.message;
    for await (const next of rest) {
      if (isNotification(next.message)) yield next.message;
      else return yield final(next);
    }
  } catch (error) {
    yield errorMessage(id, toClientError(error));
  } finally {
    // Also when the reply writer stops after the first message: the exchange is closed, not left suspended.
    await rest.return(undefined);
  }
}

/** The response as the client gets it: its own id, a task's id wrapped. */
function finalMessage(
  answer: ModernMessage,
  binding: StateBinding,
  backend: ModernBackend,
  request: MethodRequest,
  policy: UpstreamAccess,
) {
  const { message } = answer;
  if (isObject(message.error)) return errorMessage(request.id, message.error as { code: number; message: string });
  return resultMessage(request.id, shown(resultOf(message.result, binding, backend, request), request, policy));
}

function finalReply(
  answer: ModernMessage,
  binding: StateBinding,
  backend: ModernBackend,
  request: MethodRequest,
  policy: UpstreamAccess,
): Reply {
  const { message, httpStatus } = answer;
  if (isObject(message.error)) {
    const error = RpcError.from(message.error as { code: number; message: string }, httpStatus);
    request.note.outcome = "error";
    return { kind: "error", error };
  }
  return { kind: "result", result: shown(resultOf(message.result, binding, backend, request), request, policy) };
}

/** The access rules, as for a legacy backend: a hidden prompt, resource or reference is refused in an SDK server's words. */
function refuseHidden(request: MethodRequest, policy: UpstreamAccess): void {
  if (request.method === "completion/complete") refuseHiddenReference(request, policy);
  const { name, uri } = request.params;
  if (request.method === "prompts/get" && typeof name === "string" && !policy.allows(request.identity, "prompts", name)) {
    throw invalidParams(`Prompt ${name} not found`);
  }
  if (request.method === "resources/read" && typeof uri === "string" && !policy.allows(request.identity, "resources", uri)) {
    throw invalidParams(`Resource ${uri} not found`);
  }
}

/** A list as this caller may see it (the access rules). */
function shown(result: JsonObject, request: MethodRequest, policy: UpstreamAccess): JsonObject {
  const listed = LISTED[request.method];
  if (!listed) return result;
  return { ...result, [listed.field]: policy.visible(request.identity, listed.kind, result[listed.field], listed.key) };
}

function resultOf(result: unknown, binding: StateBinding, backend: ModernBackend, request: MethodRequest): JsonObject {
  const plain: JsonObject = isObject(result) ? result : { resultType: "complete" };
  if (plain.resultType === "task") {
    const created = backend.tasks.created(binding.owner, plain);
    request.note.outcome = "task";
    request.note.taskId = created.taskId as string;
    return created;
  }
  if (plain.resultType === "input_required") {
    request.note.outcome = "input_required";
    if (typeof plain.requestState === "string") return { ...plain, requestState: backend.states.seal(plain.requestState, binding) };
  } else if (plain.isError === true) request.note.outcome = "tool_error";
  return plain;
}
