// Health endpoints: /livez (the process serves: always 200), /readyz (the upstream answers and the
// task store works: 200, else 503 with a JSON body naming what is not ready) and /healthz (the
// readiness answer plus what the instance holds right now). Concurrent probes share one check.
// A check may be reported without deciding readiness (a fleet's backend an operator marked not
// required): it shows in `checks` with `required: false`, and its failure leaves the instance ready.

import type { Express } from "express";

export interface CheckResult {
  ok: boolean;
  /** What a passing check found (the backend's protocol, for the upstream check). */
  detail?: Record<string, unknown>;
  error?: string;
  /** Present (false) for a check that does not decide readiness. */
  required?: false;
}

export interface HealthOptions {
  /** The checks, or a function giving them at each probe (a fleet's backends change at reload). */
  checks: Record<string, Check> | (() => Record<string, Check>);
  /** Checks reported but not needed for readiness, read at each probe. */
  notRequired?: () => ReadonlySet<string>;
  /** Counters for /healthz (held tasks, parked calls, listen streams, upstream sessions…). */
  stats(): Record<string, number>;
  /** Each check gives up after this long. */
  timeoutMs: number;
}

/** A readiness check: resolves (with what it found, if anything) when ready. */
export type Check = () => Promise<void | Record<string, unknown>>;

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
  const checks = typeof options.checks === "function" ? options.checks() : options.checks;
  const optional = options.notRequired?.() ?? new Set<string>();
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]): Promise<[string, CheckResult]> => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const detail = await Promise.race([
          check(),
          new Promise((_resolve, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
          }),
        ]);
        const found = detail ? { detail: detail as Record<string, unknown> } : {};
        return [name, { ok: true, ...found, ...(optional.has(name) ? { required: false as const } : {}) }];
      } catch (error) {
        const required = optional.has(name) ? { required: false as const } : {};
        return [name, { ok: false, error: error instanceof Error ? error.message : String(error), ...required }];
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ready: entries.every(([, result]) => result.ok || result.required === false), checks: Object.fromEntries(entries) };
}
