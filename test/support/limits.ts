// The small time limits the fault tests configure (SPEC-upstream.md option names), and how long a
// test waits for an answer before it calls the wait unbounded: several times the limit, so a
// loaded machine does not fail a test, yet far below the minutes a missing limit means.

export const UPSTREAM_LIMITS = {
  connectTimeoutMs: 1500,
  initializeTimeoutMs: 1500,
  requestTimeoutMs: 1500,
  pingIntervalMs: 500,
  pingTimeoutMs: 500,
} as const;

export const STORE_COMMAND_TIMEOUT_MS = 1000;

export const HTTP_LIMITS = { headersTimeoutMs: 1000, requestTimeoutMs: 2000 } as const;

/** "Answered in bounded time": every limit above is ≤ 2 s. */
export const ANSWER_WITHIN_MS = 10_000;

/** A RegExp matching `text` literally. */
export const literally = (text: string) => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
