// MCP logging levels (RFC 5424 severities), least to most severe, and the rule for relaying an
// upstream log message to a 2026-07-28 request: only when the request set a level, and only
// messages at or above it.

export const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const isLogLevel = (value: unknown): value is LogLevel =>
  typeof value === "string" && (LOG_LEVELS as readonly string[]).includes(value);

/** Whether a message of `level` goes to a request that asked for `threshold` (none asked: never). */
export function shouldRelayLog(level: string, threshold: string | undefined): boolean {
  if (threshold === undefined || !isLogLevel(threshold)) return false;
  const rank = LOG_LEVELS.indexOf(level as LogLevel);
  return rank >= LOG_LEVELS.indexOf(threshold);
}
