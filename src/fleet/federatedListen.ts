// subscriptions/listen on the federated endpoint: one stream over every member. Tasks are followed
// by the federated endpoint's own listen streams (a task's record says where it runs); list-changed
// notifications and resource subscriptions come from a listen stream opened on each member asked
// for them, within listTimeoutMs (a member that does not answer in time is not listened to).
// Contract, as for any listen stream: the whole filter is checked first (-32602, -32021 as on a
// backend's own path); the acknowledgement is the first message and says what is honoured (a list
// kind is honoured when at least one member honours it; a subscribed URI when the member that owns
// it — the one the federated catalog routes it to, as for resources/read — subscribed to it; a URI
// no member lists is not honoured; the field is acknowledged, maybe [], whenever some member offers
// subscribe); then task frames and every member's notifications, each once,
// tagged with this stream's subscriptionId; a member is asked only for the URIs it owns, so
// resources/updated arrives only for subscribed URIs, from their own backend. The members' own
// closing results are dropped, the federated stream's own one ends it. A client that leaves closes
// them all.

import type { MethodRequest } from "../methods/handler.js";
import type { Reply } from "../protocol/reply.js";
import { declaresTasks, type JsonObject } from "../protocol/wire.js";
import { parseListenFilter } from "../subscriptions/listenFilter.js";
import { AsyncQueue } from "../util/asyncQueue.js";
import { isObject } from "../util/json.js";

const LIST_FIELDS = ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] as const;
const ACKNOWLEDGED = "notifications/subscriptions/acknowledged";

type StreamReply = Extract<Reply, { kind: "stream" }>;

export interface ListenMember {
  name: string;
  dispatch(request: MethodRequest): Promise<Reply>;
}

/** The member owning each URI (by member name); URIs no member lists are absent. */
export type OwnersOf = (request: MethodRequest, uris: readonly string[]) => Promise<Map<string, string[]>>;

/** Whether the federated endpoint offers resources.subscribe (some member does, as server/discover says). */
export type OffersSubscriptions = (request: MethodRequest) => Promise<boolean>;

export async function federatedListen(
  request: MethodRequest,
  openTasks: (request: MethodRequest) => Promise<Reply>,
  members: readonly ListenMember[],
  limitMs: number,
  ownersOf: OwnersOf,
  offersSubscriptions: OffersSubscriptions,
): Promise<Reply> {
  const filter = parseListenFilter(request.params, declaresTasks(request.capabilities));
  const asked = request.params.notifications as JsonObject;
  const lists: JsonObject = Object.fromEntries(LIST_FIELDS.filter((field) => filter[field]).map((field) => [field, true]));
  const tasksPart = filter.asked.taskIds ? { taskIds: asked.taskIds } : {};
  const main = await openTasks({ ...request, params: { ...request.params, notifications: tasksPart } });
  const subscribing = filter.asked.resourceSubscriptions;
  if (main.kind !== "stream" || (Object.keys(lists).length === 0 && !subscribing)) return main;
  const owned = filter.resourceSubscriptions.length > 0 ? await ownersOf(request, filter.resourceSubscriptions) : new Map();
  // As on a backend's path, an endpoint that offers subscriptions acknowledges the field even when
  // no member honours a URI (`[]`, or only URIs no member lists): the honoured subset, maybe [].
  const offered = subscribing && (await offersSubscriptions(request));
  const parts = members.flatMap((member) => {
    const uris = owned.get(member.name);
    const part: JsonObject = { ...lists, ...(uris ? { resourceSubscriptions: uris } : {}) };
    return Object.keys(part).length > 0 ? [{ member, part }] : [];
  });
  const opened = await Promise.all(parts.map(({ member, part }) => listOn(member, request, part, limitMs)));
  return merge(
    main,
    opened.filter((stream): stream is StreamReply => stream !== undefined),
    subscribing ? { uris: filter.resourceSubscriptions, offered } : undefined,
  );
}

/** A member's listen stream for `part`, or undefined when it cannot give one in time. */
async function listOn(member: ListenMember, request: MethodRequest, part: JsonObject, limitMs: number): Promise<StreamReply | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), limitMs)));
  const opening = member
    .dispatch({ ...request, note: {}, params: { notifications: part } })
    .then((reply) => (reply.kind === "stream" ? reply : undefined))
    .catch(() => undefined);
  const reply = await Promise.race([opening, late]);
  clearTimeout(timer);
  // Opened after we stopped waiting: nobody reads it, so it is closed at once.
  if (reply === undefined) void opening.then((stream) => stream?.onClientGone());
  return reply;
}

/** What a listen asked to subscribe to, and whether the endpoint offers subscriptions regardless of the members' acks. */
interface Subscribed {
  uris: readonly string[];
  offered: boolean;
}

function merge(main: StreamReply, members: StreamReply[], subscribed: Subscribed | undefined): StreamReply {
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
        subscribed,
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

/**
 * The federated acknowledgement: what the task stream honours, each list kind some member honours,
 * and (when asked) the subscribed URIs their owners honour, in the request's order. The
 * resourceSubscriptions field is left out, like any kind no one honours, when no member said it
 * honours subscriptions and the endpoint does not offer them.
 */
function withHonoured(ack: JsonObject, memberAcks: JsonObject[], subscribed: Subscribed | undefined): JsonObject {
  if (ack.method !== ACKNOWLEDGED || !isObject(ack.params)) return ack;
  const honoured: JsonObject = { ...(isObject(ack.params.notifications) ? ack.params.notifications : {}) };
  const held = new Set<string>();
  let subscriptionsHonoured = false;
  for (const memberAck of memberAcks) {
    const theirs = isObject(memberAck.params) && isObject(memberAck.params.notifications) ? memberAck.params.notifications : {};
    for (const field of LIST_FIELDS) if (theirs[field] === true) honoured[field] = true;
    if (Array.isArray(theirs.resourceSubscriptions)) {
      subscriptionsHonoured = true;
      for (const uri of theirs.resourceSubscriptions) if (typeof uri === "string") held.add(uri);
    }
  }
  if (subscribed && (subscriptionsHonoured || subscribed.offered)) {
    honoured.resourceSubscriptions = subscribed.uris.filter((uri) => held.has(uri));
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
