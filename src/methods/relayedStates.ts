// RelayedStates: a modern backend's MRTR `requestState` as the client gets it — the backend's own
// state sealed (util/sealedClaims.ts) with what it was issued for: the caller's owner hash, the MCP
// path (a fleet's), the method, the tool/prompt/resource name and a digest of the arguments;
// prefixed `rs.`. A retry reaches the backend with the backend's own state only when all of these
// match, so another identity, another path, another call or an altered state gets -32602 in the
// words taskgate's own requestState uses, and the backend never sees a state it did not issue to
// this caller (a backend whose state binds nobody, as the spec only recommends, is covered too).

import { invalidParams } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/wire.js";
import { argumentsDigest } from "../util/json.js";
import { SealedClaims } from "../util/sealedClaims.js";

const PREFIX = "rs.";
const INFO = "taskgate relayed requestState";

/** What a relayed state is bound to: the request that carried it (or got it). */
export interface StateBinding {
  owner: string;
  endpoint: string | undefined;
  method: string;
  /** The request's params (name or uri, and arguments). */
  params: JsonObject;
}

export class RelayedStates {
  private readonly sealed: SealedClaims;

  constructor(secret: string | undefined) {
    this.sealed = new SealedClaims(secret, INFO);
  }

  /** The client's handle for the backend's `state`, issued to `to`. */
  seal(state: string, to: StateBinding): string {
    return PREFIX + this.sealed.seal({ s: state, ...claimsOf(to) });
  }

  /** The backend's state behind `token` when `by` may use it; throws -32602 saying why not. */
  open(token: unknown, by: StateBinding): string {
    const claims = typeof token === "string" && token.startsWith(PREFIX) ? this.sealed.open(token.slice(PREFIX.length)) : undefined;
    if (typeof claims?.s !== "string") {
      throw invalidParams(
        "requestState is malformed or altered, or was sealed under another mrtr.secret: echo it exactly as taskgate sent it, or call again",
      );
    }
    const expected = claimsOf(by);
    if (claims.o !== expected.o) throw invalidParams("requestState belongs to another identity");
    if (claims.e !== expected.e) throw invalidParams("requestState belongs to another endpoint: retry on the path that issued it");
    if (claims.m !== expected.m || claims.n !== expected.n) {
      throw invalidParams(`requestState was issued for ${String(claims.m)} '${String(claims.n)}', not ${by.method} '${expected.n}'`);
    }
    if (claims.a !== expected.a) throw invalidParams("requestState was issued for other arguments: retry with the original arguments");
    return claims.s;
  }
}

function claimsOf(binding: StateBinding) {
  const { params } = binding;
  const name = typeof params.name === "string" ? params.name : typeof params.uri === "string" ? params.uri : "";
  return { o: binding.owner, e: binding.endpoint ?? null, m: binding.method, n: name, a: argumentsDigest(params.arguments ?? {}) };
}
