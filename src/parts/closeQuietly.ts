// Shutdown steps of the gateway's parts: each part closes even when another could not (a Redis that
// is gone, an upstream that hangs).

import type { Logger } from "pino";

/** Runs one shutdown step; a failure is logged, and the next step still runs. */
export async function closeQuietly(log: Logger, what: string, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (error) {
    log.warn(
      { event: "gateway.close.failed", what, err: error instanceof Error ? error.message : String(error) },
      `closing the ${what} failed`,
    );
  }
}
