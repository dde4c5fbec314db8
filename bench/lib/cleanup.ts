// What a scenario leaves to undo (temp dirs, Redis key prefixes) is registered here as it is
// created, and undone at the scenario's end or by the watchdog, whichever comes first.

const pending: Array<{ what: string; undo: () => Promise<void> }> = [];

export function onCleanup(what: string, undo: () => Promise<void>): void {
  pending.push({ what, undo });
}

/** Runs every registered undo (last first); a failing one is reported and the rest still run. */
export async function runCleanups(): Promise<void> {
  while (pending.length > 0) {
    const { what, undo } = pending.pop()!;
    try {
      await undo();
    } catch (error) {
      process.stderr.write(`bench: cleanup of ${what} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  }
}
