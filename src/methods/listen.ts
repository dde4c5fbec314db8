// subscriptions/listen: opens a listen stream and replies with its messages as a stream; a client
// that goes away releases everything the stream holds.

import { ownerHashOf } from "../auth/identity.js";
import type { Reply } from "../protocol/reply.js";
import { declaresTasks } from "../protocol/wire.js";
import type { Subscriptions } from "../subscriptions/subscriptions.js";
import type { MethodRequest } from "./handler.js";

export function listenHandler(subscriptions: Subscriptions) {
  return async (request: MethodRequest): Promise<Reply> => {
    const stream = await subscriptions.listen(
      { id: request.id, ownerHash: ownerHashOf(request.identity), signal: request.gone.signal, note: request.note },
      request.params,
      declaresTasks(request.capabilities),
    );
    request.note.outcome = "listen";
    return { kind: "stream", messages: stream.messages, onClientGone: () => stream.dispose("client closed the stream") };
  };
}
