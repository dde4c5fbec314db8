// Health endpoints: /livez (the process serves: always 200), /readyz (the upstream answers and the
// task store works: 200, else 503 with a JSON body naming what is not ready) and /healthz (the
// readiness answer plus what the instance holds right now). Concurrent probes share one check.

import type { Express } from "express";

export interface CheckResult {
  ok: boolean;
  error?: string;
}

export interface HealthOptions {
  checks: Record<string, () => Promise<void>>;
  /** Counters for /healthz (held tasks, parked calls, listen streams, upstream sessions…). */
  stats(): Record<string, number>;
  /** Each check gives up after this long. */
  timeoutMs: number;
}

export function mountHealth(app: Express, options: HealthOptions): void {
  let running: Promise<{ ready: boolean; checks: Record<string, CheckResult> }> | undefined;
  const readiness = () => {
    running ??= runChecks(options).finally(() => {
      running = undefined;
    });
    return running;
  };

  app.get("/livez", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    const { ready, checks } = await readiness();
    res.status(ready ? 200 : 503).json({ status: ready ? "ready" : "not_ready", checks });
  });
  app.get("/healthz", async (_req, res) => {
    const { ready, checks } = await readiness();
    res.status(ready ? 200 : 503).json({ status: ready ? "ready" : "not_ready", checks, ...options.stats() });
  });
}

async function runChecks(options: HealthOptions): Promise<{ ready: boolean; checks: Record<string, CheckResult> }> {
  const entries = await Promise.all(
    Object.entries(options.checks).map(async ([name, check]): Promise<[string, CheckResult]> => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          check(),
          new Promise((_resolve, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
          }),
        ]);
        return [name, { ok: true }];
      } catch (error) {
        return [name, { ok: false, error: error instanceof Error ? error.message : String(error) }];
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const checks = Object.fromEntries(entries);
  return { ready: entries.every(([, result]) => result.ok), checks };
}
