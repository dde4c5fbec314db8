// When taskgate reloads (a fleet's backends, or a single upstream's access and approvals): on SIGHUP,
// and (reload.watchFile) when its configuration file changes
// (the file's folder is watched, so an editor's or a ConfigMap's replace-by-rename is seen; changes
// within DEBOUNCE_MS are one reload). Reloads run one at a time. A configuration that does not
// load (any problem at all) is refused as a whole and logged with its problems; the running
// configuration stays. What a valid one changes is for fleet.ts (or gateway.ts's single upstream) to apply.

import { type FSWatcher, watch } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import type { Logger } from "pino";
import type { Config } from "../config/schema.js";
import type { BackendsDiff } from "./configDiff.js";

export type ReloadResult = { applied: BackendsDiff } | { refused: string };

export interface ReloadOptions {
  /** The configuration file; without it (and `read`) there is nothing to reload. */
  file?: string | undefined;
  watchFile: boolean;
  /** Loads the configuration again from the same sources (throws with the problems). */
  read?: (() => Config) | undefined;
  apply(next: Config): Promise<ReloadResult>;
  log: Logger;
}

export interface Reloader {
  /** Reloads now (as SIGHUP does); resolves with what happened. */
  reloadNow(): Promise<ReloadResult>;
  stop(): void;
}

const DEBOUNCE_MS = 200;

export function watchForReload(options: ReloadOptions): Reloader {
  const { log, read } = options;
  let queue: Promise<unknown> = Promise.resolve();
  const reloadNow = (): Promise<ReloadResult> => {
    const run = queue.then(() => reloadOnce(options));
    queue = run.catch(() => undefined);
    return run;
  };
  if (!read) return { reloadNow: async () => ({ refused: "no configuration file to reload" }), stop: () => undefined };
  const onSignal = () => void reloadNow();
  process.on("SIGHUP", onSignal);
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  if (options.file && options.watchFile) {
    const file = resolve(options.file);
    try {
      watcher = watch(dirname(file), (_event, name) => {
        if (name !== basename(file)) return;
        clearTimeout(timer);
        timer = setTimeout(() => void reloadNow(), DEBOUNCE_MS);
      });
      watcher.on("error", (error) => log.warn({ event: "reload.watch_failed", err: error.message }, "cannot watch the configuration file"));
    } catch (error) {
      log.warn({ event: "reload.watch_failed", err: String(error) }, "cannot watch the configuration file; SIGHUP still reloads");
    }
  }
  return {
    reloadNow,
    stop() {
      process.off("SIGHUP", onSignal);
      clearTimeout(timer);
      watcher?.close();
    },
  };
}

async function reloadOnce(options: ReloadOptions): Promise<ReloadResult> {
  const { log } = options;
  let next: Config;
  try {
    next = (options.read as () => Config)();
  } catch (error) {
    const problems = error instanceof Error ? error.message.split("\n") : [String(error)];
    log.error({ event: "reload.refused", problems }, "configuration reload refused: it does not validate; the running configuration stays");
    return { refused: problems.join("\n") };
  }
  const result = await options.apply(next);
  if ("refused" in result) log.error({ event: "reload.refused", problems: [result.refused] }, "configuration reload refused");
  else {
    const { added, removed, changed, unchanged, policyChanged } = result.applied;
    log.info({ event: "reload.applied", added, removed, changed, unchanged: unchanged.length, policyChanged }, "configuration reloaded");
  }
  return result;
}
