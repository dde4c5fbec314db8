// Opens one node-redis connection for every Redis user (the redis task store, RedisTaskBus,
// RedisLeases, RedisHolderLink). Contract: resolves once the connection is ready; an unreachable Redis rejects
// within ~connectTimeoutMs with an error naming the url (credentials hidden), never retrying the
// first connect. Once connected, a dropped connection reconnects with capped backoff, and one that
// node-redis leaves not ready or unanswered for reviveAfterMs is started afresh (redisRevival.ts).

import { createClient } from "@redis/client";
import { withoutPassword } from "../util/safeUrl.js";
import { watchForRevival } from "./redisRevival.js";

/** node-redis's longest wait between reconnect attempts here. */
const MAX_BACKOFF_MS = 2_000;
/** store.redisReviveAfterMs's default. */
const DEFAULT_REVIVE_AFTER_MS = 8_000;

function newClient(url: string, connectTimeoutMs: number, mayReconnect: () => boolean, commandTimeoutMs?: number) {
  return createClient({
    url,
    socket: {
      connectTimeout: connectTimeoutMs,
      // The first connect fails at once (false → connect() rejects); later drops retry.
      reconnectStrategy: (retries: number) => (mayReconnect() ? Math.min(50 * 2 ** retries, MAX_BACKOFF_MS) : false),
    },
    ...(commandTimeoutMs ? { commandOptions: { timeout: commandTimeoutMs } } : {}),
  });
}

export type RedisConnection = ReturnType<typeof newClient>;

export interface RedisConnectOptions {
  url: string;
  /** Receives connection errors (reconnects, failed publishes). Default: ignored. */
  onError?: ((error: Error) => void) | undefined;
  connectTimeoutMs?: number;
  /** A command not sent within this long (e.g. queued while reconnecting) rejects instead of hanging. */
  commandTimeoutMs?: number;
  /**
   * Not ready, or (unless `subscriber`) no PING answer, for this long once connected: the connection is
   * destroyed and connected afresh (store.redisReviveAfterMs). Default 8 s.
   */
  reviveAfterMs?: number | undefined;
  /** A pub/sub subscriber: watched for readiness only, never sent PING. */
  subscriber?: boolean;
}

/** The url as safe to show: any password replaced by "***". */
export const describeRedisUrl = withoutPassword;

export async function connectRedis(options: RedisConnectOptions): Promise<RedisConnection> {
  const onError = options.onError ?? (() => undefined);
  const connectTimeoutMs = options.connectTimeoutMs ?? 3_000;
  let everReady = false;
  const client = newClient(options.url, connectTimeoutMs, () => everReady, options.commandTimeoutMs);
  // Without an 'error' listener node-redis would crash the process on a connection error.
  client.on("error", (error: unknown) => {
    if (everReady) onError(error instanceof Error ? error : new Error(String(error)));
  });
  try {
    await client.connect();
  } catch (cause) {
    if (client.isOpen) client.destroy(); // destroy() throws on a client that already gave up
    const code = (cause as { code?: unknown } | null)?.code;
    const reason = cause instanceof Error ? cause.message || (typeof code === "string" ? code : cause.name) : String(cause);
    throw new Error(`cannot reach Redis at ${describeRedisUrl(options.url)}: ${reason}`, { cause });
  }
  everReady = true;
  watchForRevival(client, {
    label: describeRedisUrl(options.url),
    reviveAfterMs: options.reviveAfterMs ?? DEFAULT_REVIVE_AFTER_MS,
    // node-redis's own loop may be waiting for a connect (up to connectTimeoutMs) or a backoff: it ends first.
    settleMs: connectTimeoutMs + MAX_BACKOFF_MS + 500,
    probe: options.subscriber !== true,
    onError,
  });
  return client;
}

/** Closes gracefully (pending commands finish); never throws, also for a connection already gone. */
export async function closeRedis(client: RedisConnection): Promise<void> {
  if (!client.isOpen) return client.destroy(); // ends the revival watch of one being started afresh (does not throw)
  try {
    await client.close();
  } catch {
    if (client.isOpen) client.destroy();
  }
}

/**
 * A publisher and a subscriber connection (pub/sub needs its own), with `subscribe` already run on
 * the subscriber when this resolves. On any failure both are closed again before it rejects.
 */
export async function connectPubSub(
  options: RedisConnectOptions,
  subscribe: (subscriber: RedisConnection) => Promise<unknown>,
): Promise<{ publisher: RedisConnection; subscriber: RedisConnection }> {
  const publisher = await connectRedis(options);
  let subscriber: RedisConnection | undefined;
  try {
    subscriber = await connectRedis({ ...options, subscriber: true });
    await subscribe(subscriber);
    return { publisher, subscriber };
  } catch (error) {
    await Promise.all([closeRedis(publisher), subscriber ? closeRedis(subscriber) : undefined]);
    throw error;
  }
}
