// The pool of upstream sessions: one multiplexed session per capability profile, opened on
// first use, re-created when the upstream answers 404 for an expired session (the request is
// then sent once more on the new session; it never started on the dead one). Every session's
// unrelated notifications go to `onNotification`; `onSessionOpened` says when state kept on the
// upstream per session (resource subscriptions) must be re-established.

import type { Logger } from "pino";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { JsonObject } from "../protocol/wire.js";
import { callContextStorage } from "./callContext.js";
import { profileKey, type LegacyClientCapabilities } from "./capabilityProfile.js";
import { UpstreamSession, type NotificationListener, type RequestOptions, type UpstreamInfo } from "./upstreamSession.js";

export interface UpstreamPoolOptions {
  url: string;
  log: Logger;
  clientInfo?: { name: string; version: string };
  onNotification?: NotificationListener;
  /** A session of this profile key (see profileKey) is open; also after a re-open. */
  onSessionOpened?: (profileKey: string) => void;
}

const isSessionGone = (error: unknown) => error instanceof StreamableHTTPError && error.code === 404;

export class UpstreamPool {
  private readonly sessions = new Map<string, Promise<UpstreamSession>>();
  /** The settled value of each entry of `sessions`, so a drop never removes a newer session. */
  private readonly opened = new Map<string, UpstreamSession>();
  private closed = false;

  constructor(private readonly options: UpstreamPoolOptions) {}

  /** The upstream's initialize result, from a session that declares no client capabilities. */
  async info(): Promise<UpstreamInfo> {
    return (await this.sessionFor({})).info;
  }

  async request(
    profile: LegacyClientCapabilities,
    method: string,
    params: JsonObject,
    options: RequestOptions = {},
  ): Promise<JsonObject> {
    const session = await this.sessionFor(profile);
    try {
      return await session.request(method, params, options);
    } catch (error) {
      if (!isSessionGone(error)) throw error;
      this.drop(profile, session, "expired");
      return (await this.sessionFor(profile)).request(method, params, options);
    }
  }

  sessionCount(): number {
    return this.sessions.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.sessions.values()];
    this.sessions.clear();
    this.opened.clear();
    await Promise.allSettled(all.map(async (pending) => (await pending).close()));
  }

  private sessionFor(profile: LegacyClientCapabilities): Promise<UpstreamSession> {
    if (this.closed) return Promise.reject(new Error("upstream pool is closed"));
    const key = profileKey(profile);
    const existing = this.sessions.get(key);
    if (existing) return existing;
    const log = this.options.log;
    // Opened outside any call's context: the session (and its GET stream) belongs to no one call.
    const opening = callContextStorage.exit(() => UpstreamSession.open({
      url: this.options.url,
      profile,
      clientInfo: this.options.clientInfo ?? { name: "taskgate", version: "0.1.0" },
      log,
      ...(this.options.onNotification ? { onNotification: this.options.onNotification } : {}),
      onClose: () => {
        if (this.sessions.get(key) === opening) {
          this.sessions.delete(key);
          this.opened.delete(key);
        }
      },
    })).then(
      (session) => {
        this.opened.set(key, session);
        log.info(
          { event: "upstream.session.opened", profile: key, upstreamVersion: session.info.protocolVersion, notificationStream: session.info.notificationStream },
          "upstream session opened",
        );
        this.options.onSessionOpened?.(key);
        return session;
      },
      (error: unknown) => {
        this.sessions.delete(key);
        log.warn({ event: "upstream.session.failed", profile: key, err: String(error) }, "upstream session could not be opened");
        throw error;
      },
    );
    this.sessions.set(key, opening);
    return opening;
  }

  private drop(profile: LegacyClientCapabilities, session: UpstreamSession, why: string): void {
    const key = profileKey(profile);
    if (this.opened.get(key) === session) {
      this.sessions.delete(key);
      this.opened.delete(key);
    }
    this.options.log.info({ event: "upstream.session.dropped", profile: key, why }, "upstream session dropped; next call re-initialises");
    void session.close().catch(() => undefined);
  }
}
