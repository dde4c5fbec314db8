// One watchdog per scenario: a bounded budget, the phase the scenario is in, and on expiry a
// message naming both, then the cleanup hook (kill children, drop Redis keys) and exit 1.
// The timer is unref'd, so it never keeps a finished run alive.

let phase = "starting";
let timer: NodeJS.Timeout | undefined;

/** Says what the running scenario is doing, for the watchdog's message. */
export function setPhase(text: string): void {
  phase = text;
}

export const currentPhase = () => phase;

export function armWatchdog(scenario: string, budgetMs: number, onExpiry: () => Promise<void> | void): void {
  disarmWatchdog();
  phase = "starting";
  timer = setTimeout(() => {
    process.stderr.write(
      `\nbench: scenario '${scenario}' gave up after ${Math.round(budgetMs / 1000)} s while ${phase}` +
        ` (raise BENCH_TIMEOUT_S or run smaller sizes)\n`,
    );
    const hardExit = setTimeout(() => process.exit(1), 10_000);
    hardExit.unref();
    void Promise.resolve()
      .then(onExpiry)
      .catch((error: unknown) => process.stderr.write(`bench: cleanup after the watchdog failed: ${String(error)}\n`))
      .finally(() => process.exit(1));
  }, budgetMs);
  timer.unref();
}

export function disarmWatchdog(): void {
  if (timer) clearTimeout(timer);
  timer = undefined;
}
