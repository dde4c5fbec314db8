// Sends each request to the method router of the backend's era (upstream/backendEra.ts): the
// legacy one (translation onto sessions) or the modern one (relay). The era is probed on first use.
// When a request fails in a way that may mean the backend changed era (it is unreachable, not
// MCP-shaped any more, forgot the session, or refuses the session protocol's version) the era is
// probed again (throttled), and if it did change, the request is served once more in the new era:
// it never ran on the backend, which refused it. No taskgate restart is needed.

import { ownerHashOf } from "../auth/identity.js";
import { RpcError } from "../protocol/errors.js";
import type { Reply } from "../protocol/reply.js";
import type { JsonObject } from "../protocol/wire.js";
import { type BackendEra, type Era, mayMeanEraChange } from "../upstream/backendEra.js";
import { toClientError } from "../upstream/upstreamFailure.js";
import { isObject } from "../util/json.js";
import type { MethodRequest } from "./handler.js";
import { clientErrorOf, type MethodRouter } from "./router.js";

export type Dispatch = Pick<MethodRouter, "dispatch">;

/** What the EraRouter needs of each era's router: its replies unnamed (it names what was thrown itself). */
export type Routed = Pick<MethodRouter, "dispatch" | "routed">;

export class EraRouter implements Dispatch {
  constructor(
    private readonly era: BackendEra,
    private readonly routers: Record<Era, Routed>,
    /** A caller's credentials, for a probe when the backend checks callers' own tokens. */
    private readonly headersFor: (owner: string) => Record<string, string>,
  ) {}

  dispatch(request: MethodRequest): Promise<Reply> {
    // Known once probed: no caller's headers made, no probe awaited, on every request after the first.
    const era = this.era.current?.era;
    if (era !== undefined) return this.served(request, era);
    return this.era.resolve(this.headersFor(ownerHashOf(request.identity))).then(
      (found) => this.served(request, found.era),
      (error: unknown) => {
        throw toClientError(error);
      },
    );
  }

  /** The reply of `era`'s router, unless it failed in a way that may mean the backend changed era (then: again()). */
  private served(request: MethodRequest, era: Era): Promise<Reply> {
    let routed: Promise<Reply>;
    try {
      routed = this.routers[era].routed(request);
    } catch (error) {
      routed = Promise.reject(error);
    }
    return routed.then(
      (reply): Reply | Promise<Reply> => {
        if (reply.kind === "stream") return this.peekedStream(request, era, reply);
        return reply.kind === "error" && mayMeanEraChange(reply.error) ? this.again(request, era, reply.error) : reply;
      },
      (thrown: unknown) => {
        const error = clientErrorOf(thrown);
        if (!mayMeanEraChange(error)) throw error;
        return this.again(request, era, error);
      },
    );
  }

  /** A stream is peeked at: its first message may be the era-change failure (then the stream is not written). */
  private async peekedStream(request: MethodRequest, era: Era, stream: Reply): Promise<Reply> {
    const seen = await peeked(stream);
    if (seen.kind !== "peeked") return seen;
    return seen.error && mayMeanEraChange(seen.error) ? this.again(request, era, seen.error) : seen.reply;
  }

  /** The backend is probed again: in a new era the request is served once more (it never ran), else `failure` is thrown. */
  private async again(request: MethodRequest, era: Era, failure: unknown): Promise<Reply> {
    const now = await this.era.recheck(`a ${era} request failed: ${(failure as Error).message.slice(0, 160)}`);
    if (!now || now.era === era) throw failure;
    request.log.info({ event: "backend.era.retry", era: now.era, previous: era }, "the backend changed era: request served again");
    return this.routers[now.era].dispatch(request);
  }
}

/** How long a stream's first message is waited for, to see whether it is only the era-change failure. */
const PEEK_MS = 250;

type Peeked = Reply | { kind: "peeked"; reply: Reply; error?: RpcError };

/** A stream whose first message, within PEEK_MS, is its final error: that error (the stream can still be replayed). */
async function peeked(reply: Reply): Promise<Peeked> {
  if (reply.kind !== "stream") return reply;
  const iterator = reply.messages[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  const first = iterator.next();
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), PEEK_MS)));
  const seen = await Promise.race([first, late]);
  clearTimeout(timer);
  const replay: Reply = { ...reply, messages: replayed(first, iterator) };
  if (seen === "late" || seen.done || !isObject(seen.value.error)) return { kind: "peeked", reply: replay };
  const error = seen.value.error as { code: number; message: string; data?: unknown };
  return { kind: "peeked", reply: replay, error: RpcError.from(error) };
}

async function* replayed(first: Promise<IteratorResult<JsonObject>>, rest: AsyncIterator<JsonObject>): AsyncGenerator<JsonObject> {
  const head = await first;
  if (head.done) return;
  yield head.value;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}
