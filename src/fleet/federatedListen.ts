// subscriptions/listen on the federated endpoint: one stream over every member. Tasks are followed
// by the federated endpoint's own listen streams (a task's record says where it runs); list-changed
// notifications come from a listen stream opened on each member asked for them, within
// listTimeoutMs (a member that does not answer in time is not listened to). Contract, as for any
// listen stream: the acknowledgement is the first message and says what is honoured (a list kind is
// honoured when at least one member honours it); then task frames and every member's list-changed
// notifications, each once, tagged with this stream's subscriptionId; the members' own closing
// results are dropped, the federated stream's own one ends it. A client that leaves closes them all.
// Resource subscriptions are not honoured here (listen on the backend's own path for those).

import type { MethodRequest } from "../methods/handler.js";
import type { Reply } from "../protocol/reply.js";
import type { JsonObject } from "../protocol/wire.js";
import { AsyncQueue } from "../util/asyncQueue.js";
import { isObject } from "../util/json.js";

const LIST_FIELDS = ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] as const;
const ACKNOWLEDGED = "notifications/subscriptions/acknowledged";

type StreamReply = Extract<Reply, { kind: "stream" }>;

export interface ListenMember {
  dispatch(request: MethodRequest): Promise<Reply>;
}

export async function federatedListen(
  request: MethodRequest,
  openTasks: (request: MethodRequest) => Promise<Reply>,
  members: readonly ListenMember[],
  limitMs: number,
): Promise<Reply> {
  const asked = isObject(request.params.notifications) ? request.params.notifications : undefined;
  const lists = Object.fromEntries(LIST_FIELDS.filter((field) => asked?.[field] === true).map((field) => [field, true]));
  const tasksPart = asked && "taskIds" in asked ? { taskIds: asked.taskIds } : {};
  const main = await openTasks({ ...request, params: asked ? { ...request.params, notifications: tasksPart } : request.params });
  if (main.kind !== "stream" || Object.keys(lists).length === 0) return main;
  const opened = await Promise.all(members.map((member) => listOn(member, request, lists, limitMs)));
  return merge(
    main,
    opened.filter((stream): stream is StreamReply => stream !== undefined),
  );
}

/** A member's listen stream for list changes, or undefined when it cannot give one in time. */
async function listOn(member: ListenMember, request: MethodRequest, lists: JsonObject, limitMs: number): Promise<StreamReply | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), limitMs)));
  const opening = member
    .dispatch({ ...request, note: {}, params: { notifications: lists } })
    .then((reply) => (reply.kind === "stream" ? reply : undefined))
    .catch(() => undefined);
  const reply = await Promise.race([opening, late]);
  clearTimeout(timer);
  // Opened after we stopped waiting: nobody reads it, so it is closed at once.
  if (reply === undefined) void opening.then((stream) => stream?.onClientGone());
  return reply;
}

function merge(main: StreamReply, members: StreamReply[]): StreamReply {
  const out = new AsyncQueue<JsonObject>();
  const memberIterators = members.map((member) => member.messages[Symbol.asyncIterator]());
  const closeMembers = () => {
    for (const member of members) member.onClientGone();
  };
  void (async () => {
    const mainIterator = main.messages[Symbol.asyncIterator]();
    const first = await mainIterator.next();
    const acks = await Promise.all(memberIterators.map((iterator) => iterator.next()));
    if (first.done) {
      closeMembers();
      return out.end();
    }
    out.push(
      withHonoured(
        first.value,
        acks.flatMap((ack) => (ack.done ? [] : [ack.value])),
      ),
    );
    for (const iterator of memberIterators) void forwardNotifications(iterator, out);
    for (let next = await mainIterator.next(); !next.done; next = await mainIterator.next()) out.push(next.value);
    closeMembers();
    out.end();
  })();
  return {
    kind: "stream",
    messages: out,
    onClientGone() {
      main.onClientGone();
      closeMembers();
      out.end();
    },
  };
}

/** The federated acknowledgement: what the task stream honours, plus each list kind some member honours. */
function withHonoured(ack: JsonObject, memberAcks: JsonObject[]): JsonObject {
  if (ack.method !== ACKNOWLEDGED || !isObject(ack.params)) return ack;
  const honoured: JsonObject = { ...(isObject(ack.params.notifications) ? ack.params.notifications : {}) };
  for (const memberAck of memberAcks) {
    const theirs = isObject(memberAck.params) && isObject(memberAck.params.notifications) ? memberAck.params.notifications : {};
    for (const field of LIST_FIELDS) if (theirs[field] === true) honoured[field] = true;
  }
  return { ...ack, params: { ...ack.params, notifications: honoured } };
}

/** A member's notifications after its acknowledgement (its closing result is dropped). */
async function forwardNotifications(iterator: AsyncIterator<JsonObject>, out: AsyncQueue<JsonObject>): Promise<void> {
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    const method = next.value.method;
    if (typeof method === "string" && method !== ACKNOWLEDGED) out.push(next.value);
  }
}
