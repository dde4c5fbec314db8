// RemoteRounds: MRTR rounds of a call held by another instance. An inline call's upstream call
// lives on the instance that started it (its holder, named in the sealed requestState); a retry
// reaching any other instance is checked there (seal, identity, method, name, arguments), then sent
// to the holder over the HolderLink (the mechanism tasks/update uses), which resumes its parked call
// as if the retry had reached it and replies with the call's next final message: the result, an
// error, the next input_required round, or a task handle (policy auto). Only that final message
// crosses: progress and log notifications of a resumed call are not relayed.
//
// Waits: the sender waits as long as the holder says it still works on the call (HolderLink
// heartbeats), and gives up once it falls silent for the link's timeout or nobody serves it. The
// holder resumes a call only once the sender said it still waits (the link's ready/go), so a
// holder woken from a pause does not resume a call for a client already answered. A holder whose
// lease is gone stopped or died, and the upstream call with it: -32602, the call is gone. One
// whose lease lives is paused or overloaded: 503, the call not resumed (or, if it took the retry
// before falling silent, perhaps resumed), and the client sends the same retry again. A retrying
// client that goes away makes the holder cancel the call upstream, as on the holder itself; one
// that left before the holder resumed its retry (it waited for the go) leaves the call waiting.

import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import {
  HOLDER_SILENCE_MS,
  type HolderLink,
  type HolderReply,
  type LeaveCommand,
  type ResumeCommand,
  type RoundCommand,
} from "../cluster/holderLink.js";
import { holderGone, internalError, leaseUnreadable, RpcError, roundUnresponsive } from "../protocol/errors.js";
import { errorMessage, errorReply, type Reply, resultMessage, resultReply } from "../protocol/reply.js";
import { noteErrorReason, type RequestNote } from "../protocol/requestNote.js";
import type { ClientCapabilities, JsonObject, JsonRpcErrorObject } from "../protocol/wire.js";
import { ClientGone } from "../util/clientGone.js";
import type { InlineRequest } from "./inlineCall.js";
import type { CallBinding } from "./parkedCalls.js";

/** A retry as the holder resumes it: its request (no JSON window: only the final message crosses). */
export type ResumeHere = (request: InlineRequest & { params: JsonObject }, binding: CallBinding, asTask: boolean) => Promise<Reply>;

export interface RemoteRoundsOptions {
  link: HolderLink;
  /** The holder side: resumes a call parked here for a retry another instance received. */
  resume: ResumeHere;
  /** Whether an instance's lease lives (it runs, though it may be paused). */
  holderAlive: (instanceId: string) => Promise<boolean>;
  log: Logger;
}

type FinalReply = Extract<Reply, { kind: "result" | "error" }>;

/** How long a holder remembers a leave for a retry it had not started (it waited for its sender's go, or the leave
 *  came first): longer than any wait for a go. */
const LEFT_EARLY_MS = 60_000;

export class RemoteRounds {
  /** Retries this instance is resuming for other instances, by requestState: a `leave` cancels them. */
  private readonly serving = new Map<string, { owner: string; leave: ClientGone; retryId: string | undefined }>();
  /** Holder side: retries (by retryId) whose client left before they were resumed here. */
  private readonly leftEarly = new Set<string>();

  constructor(private readonly options: RemoteRoundsOptions) {}

  /** Sender side: the retry goes to the holder; answered like an inline call (JSON within the window, else a stream). */
  async forward(
    holder: string,
    request: InlineRequest & { params: JsonObject },
    binding: CallBinding,
    inputResponses: JsonObject,
    options: { asTask: boolean; jsonWindowMs: number; decorate?: ((result: JsonObject) => JsonObject) | undefined },
  ): Promise<Reply> {
    const requestState = request.params.requestState as string; // it opened, so it is a string
    const retryId = randomUUID();
    const command: ResumeCommand = {
      kind: "resume",
      ownerHash: binding.owner,
      requestState,
      method: binding.method,
      name: binding.name,
      args: binding.args,
      inputResponses,
      capabilities: request.capabilities as JsonObject,
      asTask: options.asTask,
      ...(request.endpoint !== undefined ? { endpoint: request.endpoint } : {}),
      retryId,
    };
    request.note.holder = holder;
    let taken = false;
    const final = this.options.link
      .send(holder, command, { onTaken: () => void (taken = true) })
      .then(async (reply) => finalOf(reply ?? (await this.silence(holder, taken)), request.note, options.decorate));

    let answered = false;
    void final.then(() => (answered = true));
    const leave = () => {
      if (answered) return;
      answered = true;
      request.note.outcome = "client_disconnected";
      const command: LeaveCommand = { kind: "leave", ownerHash: binding.owner, requestState, retryId };
      void this.options.link.send(holder, command);
    };
    request.gone.onGone(leave);

    let timer: NodeJS.Timeout | undefined;
    const window = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), options.jsonWindowMs)));
    const quick = await Promise.race([final, window]);
    clearTimeout(timer);
    if (quick) return quick;
    const { id } = request;
    async function* messages(): AsyncGenerator<JsonObject> {
      const reply = await final;
      yield reply.kind === "result" ? resultMessage(id, reply.result) : errorMessage(id, reply.error);
    }
    return { kind: "stream", messages: messages(), onClientGone: leave };
  }

  /** Remembers a leave for a retry not resumed here (yet): if it comes, it is not resumed. */
  private leaveEarly(retryId: string): void {
    this.leftEarly.add(retryId);
    setTimeout(() => this.leftEarly.delete(retryId), LEFT_EARLY_MS).unref();
  }

  /** What the holder's silence means for the retry: gone (its lease too), or only not answering. Never throws. */
  private async silence(holder: string, taken: boolean): Promise<RpcError> {
    try {
      return (await this.options.holderAlive(holder)) ? roundUnresponsive(taken, HOLDER_SILENCE_MS) : holderGone();
    } catch (error) {
      return leaseUnreadable(holder, "the call", error);
    }
  }

  /** Holder side: a command from another instance for an inline call parked here. */
  async serve(command: RoundCommand): Promise<HolderReply> {
    if (command.kind === "leave") {
      const served = this.serving.get(command.requestState);
      // A leave names its forwarding: it does not stop another retry of the same state (its client retried elsewhere).
      const same = served?.owner === command.ownerHash && (command.retryId === undefined || served.retryId === command.retryId);
      if (same) served.leave.leave();
      else if (command.retryId !== undefined) this.leaveEarly(command.retryId);
      return { ok: true };
    }
    const { ownerHash: owner, requestState, inputResponses, retryId } = command;
    if (retryId !== undefined && this.leftEarly.delete(retryId)) {
      // Its client left while this instance waited for the sender's go (or the leave overtook it): the call still waits.
      return { ok: false, error: internalError("the retrying client went away before the call was resumed; it was not").toJSON() };
    }
    const leave = new ClientGone();
    const served = { owner, leave, retryId };
    // The same state sent twice at once: the second is refused as already used; it must not take the first's place.
    if (!this.serving.has(requestState)) this.serving.set(requestState, served);
    const note: RequestNote = {};
    const request = {
      id: 0,
      capabilities: command.capabilities as ClientCapabilities,
      gone: leave,
      note,
      params: { requestState, inputResponses },
      // A task made of the call answers on the path the retry came to, as it would on this instance.
      ...(command.endpoint !== undefined ? { endpoint: command.endpoint } : {}),
    };
    const binding: CallBinding = {
      owner,
      method: command.method,
      name: command.name,
      args: command.args,
      ...(command.endpoint !== undefined ? { endpoint: command.endpoint } : {}),
    };
    try {
      return await holderReplyOf(await this.options.resume(request, binding, command.asTask));
    } catch (error) {
      if (!(error instanceof RpcError)) throw error;
      note.outcome = "refused";
      return { ok: false, error: error.toJSON(), ...(error.httpStatus !== 200 ? { httpStatus: error.httpStatus } : {}) };
    } finally {
      if (this.serving.get(requestState) === served) this.serving.delete(requestState);
      this.options.log.info(
        { event: "mrtr.resumed.remote", method: command.method, name: command.name, outcome: note.outcome, answered: note.resumed },
        "resumed a held call for a retry that reached another instance",
      );
    }
  }
}

/** The holder's reply (or what its silence means) as this request's final message. */
function finalOf(reply: HolderReply | RpcError, note: RequestNote, decorate?: (result: JsonObject) => JsonObject): FinalReply {
  if (reply instanceof RpcError) {
    noteErrorReason(note, reply);
    note.outcome = note.reason === "holder_gone" ? "holder_gone" : "error";
    return errorReply(reply);
  }
  if (!reply.ok) {
    note.outcome = "error";
    const error = RpcError.from(reply.error, reply.httpStatus);
    noteErrorReason(note, error);
    return errorReply(error);
  }
  if (reply.result === undefined) return errorReply(internalError("the instance holding the call replied without a result"));
  const { resultType } = reply.result;
  note.outcome =
    resultType === "input_required" || resultType === "task" ? resultType : reply.result.isError === true ? "tool_error" : "result";
  return resultReply(decorate && resultType !== "input_required" && resultType !== "task" ? decorate(reply.result) : reply.result);
}

/** The resumed call's final message as a HolderReply (a stream, when the retrying client left, has none). */
async function holderReplyOf(reply: Reply): Promise<HolderReply> {
  if (reply.kind === "result") return { ok: true, result: reply.result };
  if (reply.kind === "error")
    return { ok: false, error: reply.error.toJSON(), ...(reply.error.httpStatus !== 200 ? { httpStatus: reply.error.httpStatus } : {}) };
  let last: JsonObject | undefined;
  for await (const message of reply.messages) last = message;
  if (last && "result" in last) return { ok: true, result: last.result as JsonObject };
  if (last && "error" in last) return { ok: false, error: last.error as JsonRpcErrorObject };
  return { ok: false, error: internalError("the retrying client went away; the call was cancelled").toJSON() };
}
