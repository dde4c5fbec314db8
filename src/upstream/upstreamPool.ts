// UpstreamPool: the upstream sessions, never shared between identities, opened lazily, kept warm,
// and closed (DELETE) after sessionIdleMs without use, or at shutdown. How an identity's requests
// share sessions is `sessionsPer` (upstream.sessionsPer):
// - "identity" (default): one session per identity, declaring every question kind taskgate relays
//   (ALL_KINDS). Every call, list and subscription of that identity runs on it, whatever its
//   request declared, so the upstream sees one client with one state. Each call is still held to
//   its own request's capabilities (UpstreamCall), and a question on the standalone channel goes
//   to the one call in flight, never to a guess (UpstreamSession).
// - "capabilities": one session per identity and capability profile, and a call that can be asked
//   something (its profile declares elicitation, sampling or roots) holds a session of its
//   owner+profile exclusively while it runs, so a question on the standalone channel belongs to
//   exactly that call; a second such call of the same owner gets a second session. The upstream
//   never hears of a capability the caller lacks, but one user's state is split between sessions.
// - A call goes to a session of its owner+profile carrying fewer than maxCallsPerSession requests;
//   when all are that full, the owner gets one more session (so one session that ends fails a
//   bounded number of calls), closed 5 s after it fell idle. Short requests use the first session.
// - At most maxSessions sessions (open or opening). Past that, the least recently used idle one
//   is closed; with none idle the request fails with upstream_sessions_exhausted (HTTP 503).
// - A request the upstream refused because it forgot the session (session_gone: it never ran) is
//   sent once more on a fresh session. A session that ends by itself leaves the pool.
// - Every failure of a request or of opening a session is told to onFailure with its reason.

import type { Logger } from "pino";
import type { JsonObject } from "../protocol/wire.js";
import type { CallContext } from "./callContext.js";
import { ALL_KINDS, hasQuestions, type LegacyClientCapabilities, profileKey, type SessionsPer } from "./capabilityProfile.js";
import type { CancelOutcome, Progress } from "./jsonRpcPeer.js";
import type { JsonRpcMessage, UpstreamTransport } from "./transport.js";
import { type FailureReason, isSessionGone, UpstreamFailure } from "./upstreamFailure.js";
import { type PingOutcome, type SessionTimeouts, type UpstreamInfo, UpstreamSession } from "./upstreamSession.js";

export interface UpstreamPoolOptions {
  /** A fresh transport for one new session of `owner` (its credentials towards the upstream) and capability profile `profileKey`. */
  connect(owner: string, profileKey: string): UpstreamTransport;
  /** How an identity's requests share sessions (default "identity": one session each). */
  sessionsPer?: SessionsPer;
  log: Logger;
  clientInfo: { name: string; version: string };
  maxSessions: number;
  /** The option that sets maxSessions and what it counts, for the error at the bound
   *  (default upstream.maxSessions, "upstream sessions"). */
  maxSessionsOption?: string;
  sessionsAre?: string;
  sessionIdleMs: number;
  /** Short requests (lists, completion, subscribe, readiness pings) give up after this long. */
  requestTimeoutMs: number;
  timeouts: SessionTimeouts;
  /** Notifications of a session that belong to no call (list changes, resource updates…). */
  onNotification?(owner: string, profileKey: string, message: JsonRpcMessage & { method: string }): void;
  /** A session of this owner+profile opened (first time or again): its upstream state is new. */
  onSessionOpened?(owner: string, profileKey: string, sessionId: string | undefined): void;
  /** A session ended (closed by us or gone upstream). */
  onSessionClosed?(owner: string, profileKey: string, sessionId: string | undefined): void;
  /** A request (or the session it needed) failed; a request sent again after session_gone reports each failure. */
  onFailure?(reason: FailureReason): void;
  /** How each notifications/cancelled fared. */
  onCancel?(outcome: CancelOutcome): void;
  /** How each liveness ping fared. */
  onPing?(outcome: PingOutcome): void;
  /** Calls one session carries at once (upstream.maxCallsPerSession); beyond, the owner gets another session. Default unbounded. */
  maxCallsPerSession?: number;
}

export interface CallOptions {
  context: CallContext;
  signal?: AbortSignal;
  onprogress?: (progress: Progress) => void;
}

/** A session lent for one call (lend()); given back with giveBack() when the call ends. */
export interface SessionLease {
  readonly session?: UpstreamSession | undefined;
}

/** One session of the pool and its bookkeeping. */
interface Slot extends SessionLease {
  readonly owner: string;
  readonly key: string;
  readonly profile: LegacyClientCapabilities;
  session?: UpstreamSession | undefined;
  opening?: Promise<UpstreamSession> | undefined;
  /** The asking call holding this session alone (sessionsPer "capabilities" only); the session reads it from here. */
  asker?: CallContext | undefined;
  /** Requests in flight plus holds. */
  users: number;
  lastUsed: number;
  idleTimer?: NodeJS.Timeout | undefined;
  closing: boolean;
  /** Opened because the owner's other sessions were full (maxCallsPerSession): closed soon once idle. */
  overflow?: boolean;
}

/** The key of ALL_KINDS, which every session declares with sessionsPer "identity": made once, not per request. */
const ALL_KINDS_KEY = profileKey(ALL_KINDS);

/** An overflow session (the owner's others were full) is closed this soon once idle: the burst that needed it is over. */
const OVERFLOW_IDLE_MS = 5_000;

export class UpstreamPool {
  private readonly slots = new Map<string, Slot[]>();
  private lastInfo?: UpstreamInfo;
  private infoLoading?: Promise<UpstreamInfo> | undefined;
  private closed = false;
  private readonly sessionsPer: SessionsPer;

  constructor(private readonly options: UpstreamPoolOptions) {
    this.sessionsPer = options.sessionsPer ?? "identity";
  }

  /** The capabilities a session used by a request of `profile` declares upstream. */
  sessionProfile(profile: LegacyClientCapabilities): LegacyClientCapabilities {
    return this.sessionsPer === "identity" ? ALL_KINDS : profile;
  }

  /** The profile key of the sessions a request of `profile` uses (what onNotification and the hooks name). */
  sessionKey(profile: LegacyClientCapabilities): string {
    return this.sessionsPer === "identity" ? ALL_KINDS_KEY : profileKey(profile);
  }

  /** The upstream's initialize result when a session told it already (undefined: none opened yet). */
  infoNow(): UpstreamInfo | undefined {
    return this.lastInfo;
  }

  /** The upstream's initialize result (from the latest session opened; opens one for `owner` if none). */
  info(owner: string): Promise<UpstreamInfo> {
    if (this.lastInfo) return Promise.resolve(this.lastInfo);
    // Callers arriving together before the first session is open wait for one session, not one each.
    this.infoLoading ??= this.openForInfo(owner).finally(() => {
      this.infoLoading = undefined;
    });
    return this.infoLoading;
  }

  private async openForInfo(owner: string): Promise<UpstreamInfo> {
    // A session already opening (e.g. the readiness check's) tells the same initialize result.
    // (An open one would have set lastInfo.)
    const opening = [...this.slots.values()].flat().find((slot) => !slot.closing && slot.opening)?.opening;
    const session = await opening?.catch(() => undefined);
    if (session) return session.info;
    const slot = this.primary(owner, {});
    this.use(slot);
    try {
      return (await this.sessionOf(slot)).info;
    } catch (error) {
      throw this.reported(error);
    } finally {
      this.release(slot);
    }
  }

  /** A short request (list, completion, subscribe…) on the owner's shared session for `profile`. */
  request(owner: string, profile: LegacyClientCapabilities, method: string, params: JsonObject): Promise<JsonObject> {
    const timeout = { ms: this.options.requestTimeoutMs, option: "upstream.requestTimeoutMs" };
    return this.onSession(
      () => this.primary(owner, profile),
      (session) => session.request(method, params, { timeout }),
    );
  }

  /** The limit of a short request, for those made on a session run() lends. */
  get requestTimeout(): { ms: number; option: string } {
    return { ms: this.options.requestTimeoutMs, option: "upstream.requestTimeoutMs" };
  }

  /** A call (tools/call, prompts/get, resources/read): no time limit (the session pings while it
   *  runs); with sessionsPer "capabilities", an asking call holds its session alone. */
  call(owner: string, profile: LegacyClientCapabilities, method: string, params: JsonObject, options: CallOptions): Promise<JsonObject> {
    // `options` is what the session's request takes (its context, signal, progress listener): passed on as it is.
    return this.run(owner, profile, options.context, (session) => session.request(method, params, options));
  }

  /**
   * Runs `work` for the call `context` on one session for owner+profile, held while it runs (an
   * asking call's alone with sessionsPer "capabilities", as call() does). A 2025-11-25 task call makes all its requests in one
   * `work`: the upstream task lives on that session. `work` is run again on a fresh session if it
   * fails with session_gone, so it must turn that into another failure once it is not safe to repeat.
   */
  run<T>(
    owner: string,
    profile: LegacyClientCapabilities,
    context: CallContext,
    work: (session: UpstreamSession) => Promise<T>,
  ): Promise<T> {
    const alone = this.sessionsPer === "capabilities" && hasQuestions(profile);
    return this.onSession(
      () => (alone ? this.forAsker(owner, profile, context) : this.forCall(owner, profile)),
      work,
      alone ? context : undefined,
    );
  }

  /**
   * A session for one call of owner+profile, lent at once when one is open with room for it (with sessionsPer
   * "capabilities", an asking call's alone, reserved for `asker`): the short road of a call, nothing awaited. Undefined
   * when the call would have to wait for a session to open (or for room): it takes call() instead. The lease is held
   * until giveBack(), which the call makes when it ended, with its failure if it failed.
   */
  lend(owner: string, profile: LegacyClientCapabilities, asker: CallContext): SessionLease | undefined {
    const alone = this.sessionsPer === "capabilities" && hasQuestions(profile);
    const max = this.options.maxCallsPerSession ?? Number.POSITIVE_INFINITY;
    const list = this.slots.get(`${owner}|${this.sessionKey(profile)}`);
    if (!list) return undefined;
    for (const slot of list) {
      if (slot.closing || !slot.session || slot.session.isEnded || (alone ? slot.asker : slot.users >= max)) continue;
      this.use(slot);
      if (alone) slot.asker = asker;
      return slot;
    }
    return undefined;
  }

  /** A lent session back: `failure` is the call's (told to onFailure; a session the upstream forgot is dropped). */
  giveBack(lease: SessionLease, asker: CallContext, failure?: unknown): void {
    const slot = lease as Slot;
    if (failure !== undefined) {
      this.reported(failure);
      if (isSessionGone(failure)) this.drop(slot, "the upstream no longer knew the session");
    }
    this.release(slot, asker);
  }

  /** Keeps the owner's shared session for `profile` open (e.g. for a listen stream's notifications) until the returned release runs. */
  async hold(owner: string, profile: LegacyClientCapabilities): Promise<() => void> {
    const slot = this.primary(owner, profile);
    this.use(slot);
    try {
      await this.sessionOf(slot);
    } catch (error) {
      this.release(slot);
      throw error;
    }
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.release(slot);
    };
  }

  /** Checks the upstream answers: a ping on `owner`'s shared session (opened if needed). */
  async check(owner: string): Promise<void> {
    await this.request(owner, {}, "ping", {});
  }

  sessionCount(): number {
    let count = 0;
    for (const list of this.slots.values()) count += list.length;
    return count;
  }

  /** Calls (tools/call, prompts/get, resources/read) in flight on all sessions. */
  callCount(): number {
    let count = 0;
    for (const list of this.slots.values()) for (const slot of list) count += slot.session?.callCount ?? 0;
    return count;
  }

  /** Ids of the upstream sessions open now. */
  sessionIds(): string[] {
    const ids: string[] = [];
    for (const list of this.slots.values()) for (const slot of list) if (slot.session?.sessionId) ids.push(slot.session.sessionId);
    return ids;
  }

  /** Closes every session (DELETE upstream); later requests fail. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.slots.values()].flat();
    this.slots.clear();
    await Promise.allSettled(all.map((slot) => this.closeSlot(slot, new UpstreamFailure("shutting_down", "taskgate is shutting down"))));
  }

  // --- internals ---------------------------------------------------------------------------

  /** Runs `work` on a session of the slot `pick` chooses (a slot picked for `asker` is reserved for it until released);
   *  once more on a fresh one if the upstream had forgotten the session. */
  private async onSession<T>(pick: () => Slot, work: (session: UpstreamSession) => Promise<T>, asker?: CallContext): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let slot: Slot;
      try {
        slot = pick();
      } catch (error) {
        throw this.reported(error);
      }
      this.use(slot);
      try {
        // An open session is used at once (no promise made and awaited for it on every call).
        const open = slot.session && !slot.session.isEnded ? slot.session : await this.sessionOf(slot);
        return await work(open);
      } catch (error) {
        this.reported(error);
        const gone = isSessionGone(error);
        if (gone) this.drop(slot, "the upstream no longer knew the session");
        if (!gone || attempt > 1) throw error;
      } finally {
        this.release(slot, asker);
      }
    }
  }

  /** Tells onFailure about an UpstreamFailure (anything else, e.g. the upstream's own error answer, is not a failure); returns `error`. */
  private reported(error: unknown): unknown {
    if (error instanceof UpstreamFailure) this.options.onFailure?.(error.reason);
    return error;
  }

  private primary(owner: string, profile: LegacyClientCapabilities): Slot {
    const declared = this.sessionProfile(profile);
    const key = this.sessionKey(profile);
    const list = this.slots.get(`${owner}|${key}`);
    const live = list?.find((slot) => !slot.closing);
    return live ?? this.newSlot(owner, key, declared);
  }

  /** The owner's first session for `profile` with room for another call (upstream.maxCallsPerSession), else a new one. */
  private forCall(owner: string, profile: LegacyClientCapabilities): Slot {
    const max = this.options.maxCallsPerSession ?? Number.POSITIVE_INFINITY;
    const declared = this.sessionProfile(profile);
    const key = this.sessionKey(profile);
    const list = this.slots.get(`${owner}|${key}`);
    const roomy = list?.find((slot) => !slot.closing && slot.users < max);
    if (roomy) return roomy;
    const slot = this.newSlot(owner, key, declared);
    if (list?.some((other) => other !== slot && !other.closing)) slot.overflow = true;
    return slot;
  }

  private forAsker(owner: string, profile: LegacyClientCapabilities, context: CallContext): Slot {
    const key = profileKey(profile);
    const free = this.slots.get(`${owner}|${key}`)?.find((slot) => !slot.closing && !slot.asker);
    const slot = free ?? this.newSlot(owner, key, profile);
    slot.asker = context;
    return slot;
  }

  private newSlot(owner: string, key: string, profile: LegacyClientCapabilities): Slot {
    if (this.closed) throw new UpstreamFailure("shutting_down", "taskgate is shutting down");
    if (this.sessionCount() >= this.options.maxSessions && !this.evictIdle()) {
      const option = this.options.maxSessionsOption ?? "upstream.maxSessions";
      throw new UpstreamFailure(
        "upstream_sessions_exhausted",
        `taskgate holds ${option} (${this.options.maxSessions}) ${this.options.sessionsAre ?? "upstream sessions"}, all in use; ` +
          `retry later or raise ${option}`,
      );
    }
    const slot: Slot = { owner, key, profile, users: 0, lastUsed: Date.now(), closing: false };
    const mapKey = `${owner}|${key}`;
    const list = this.slots.get(mapKey) ?? [];
    list.push(slot);
    this.slots.set(mapKey, list);
    return slot;
  }

  /** Closes the least recently used idle session; false when every session is in use. */
  evictIdle(): boolean {
    let oldest: Slot | undefined;
    for (const list of this.slots.values()) {
      for (const slot of list) {
        if (slot.users === 0 && !slot.asker && !slot.closing && (!oldest || slot.lastUsed < oldest.lastUsed)) oldest = slot;
      }
    }
    if (!oldest) return false;
    this.options.log.info({ event: "upstream.session.evicted", profile: oldest.key }, "idle upstream session closed to make room");
    this.remove(oldest);
    void this.closeSlot(oldest);
    return true;
  }

  private sessionOf(slot: Slot): Promise<UpstreamSession> {
    if (slot.session && !slot.session.isEnded) return Promise.resolve(slot.session);
    slot.opening ??= this.open(slot).finally(() => {
      slot.opening = undefined;
    });
    return slot.opening;
  }

  private async open(slot: Slot): Promise<UpstreamSession> {
    const { log } = this.options;
    let session: UpstreamSession | undefined;
    try {
      session = await UpstreamSession.open({
        transport: this.options.connect(slot.owner, slot.key),
        profile: slot.profile,
        clientInfo: this.options.clientInfo,
        timeouts: this.options.timeouts,
        log,
        askerOf: () => slot.asker,
        ...(this.options.onCancel ? { onCancel: this.options.onCancel } : {}),
        ...(this.options.onPing ? { onPing: this.options.onPing } : {}),
        onNotification: (message) => this.options.onNotification?.(slot.owner, slot.key, message),
        onClosed: (failure) => {
          // Not yet (it ended while opening: open() reports that) or no longer this slot's session.
          if (session === undefined || slot.session !== session) return;
          log.info(
            { event: "upstream.session.ended", profile: slot.key, reason: failure.reason, why: failure.message },
            "upstream session ended",
          );
          this.remove(slot);
          this.options.onSessionClosed?.(slot.owner, slot.key, session.sessionId);
        },
      });
    } catch (error) {
      this.remove(slot);
      const failure = error instanceof UpstreamFailure ? error : undefined;
      log.warn(
        {
          event: "upstream.session.failed",
          profile: slot.key,
          reason: failure?.reason,
          err: error instanceof Error ? error.message : String(error),
        },
        "upstream session could not be opened",
      );
      throw error;
    }
    if (slot.closing) {
      await session.close();
      throw new UpstreamFailure("shutting_down", "taskgate is shutting down");
    }
    slot.session = session;
    this.lastInfo = session.info;
    log.info(
      {
        event: "upstream.session.opened",
        profile: slot.key,
        upstreamVersion: session.info.protocolVersion,
        notificationStream: session.info.notificationStream,
      },
      "upstream session opened",
    );
    this.options.onSessionOpened?.(slot.owner, slot.key, session.sessionId);
    return session;
  }

  private use(slot: Slot): void {
    slot.users += 1;
  }

  /** A slot left without users is closed once idle for its idle time. One timer per idle spell, not one made and cleared
   *  per request: a timer that fires while the slot is in use, or used since, waits again for the time still left. */
  private release(slot: Slot, asker?: CallContext): void {
    slot.users -= 1;
    slot.lastUsed = Date.now();
    if (asker && slot.asker === asker) slot.asker = undefined;
    if (slot.users === 0 && !slot.closing && !slot.idleTimer) this.closeWhenIdle(slot, this.idleMsOf(slot));
  }

  private idleMsOf(slot: Slot): number {
    return slot.overflow ? Math.min(OVERFLOW_IDLE_MS, this.options.sessionIdleMs) : this.options.sessionIdleMs;
  }

  private closeWhenIdle(slot: Slot, ms: number): void {
    slot.idleTimer = setTimeout(() => {
      slot.idleTimer = undefined;
      if (slot.closing) return;
      if (slot.users > 0) return; // the next release arms it again
      const left = slot.lastUsed + this.idleMsOf(slot) - Date.now();
      if (left > 0) return this.closeWhenIdle(slot, left);
      this.options.log.debug({ event: "upstream.session.idle", profile: slot.key }, "idle upstream session closed");
      this.remove(slot);
      void this.closeSlot(slot);
    }, ms);
    slot.idleTimer.unref();
  }

  /** The upstream forgot this slot's session: forget it here too (the next request opens a new one). */
  private drop(slot: Slot, why: string): void {
    this.options.log.info(
      { event: "upstream.session.dropped", profile: slot.key, why },
      "upstream session dropped; the request is sent again on a new session",
    );
    this.remove(slot);
    const session = slot.session;
    slot.session = undefined;
    if (session) {
      void session.close();
      this.options.onSessionClosed?.(slot.owner, slot.key, session.sessionId);
    }
  }

  private remove(slot: Slot): void {
    slot.closing = true;
    clearTimeout(slot.idleTimer);
    const mapKey = `${slot.owner}|${slot.key}`;
    const list = this.slots.get(mapKey);
    if (!list) return;
    const index = list.indexOf(slot);
    if (index >= 0) list.splice(index, 1);
    if (list.length === 0) this.slots.delete(mapKey);
  }

  private async closeSlot(slot: Slot, failure?: UpstreamFailure): Promise<void> {
    slot.closing = true;
    clearTimeout(slot.idleTimer);
    const session = slot.session ?? (await slot.opening?.catch(() => undefined));
    if (!session) return;
    await session.close(failure);
    this.options.onSessionClosed?.(slot.owner, slot.key, session.sessionId);
  }
}
