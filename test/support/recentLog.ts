// What a test's taskgate logged last, kept in memory while its logs are otherwise silent
// (TEST_LOG_LEVEL unset): a request that gets no reply in time can then say what the gateway did
// (realServerCalls.call() appends these lines to its error), which is all a CI run that failed
// once under load leaves to read. With TEST_LOG_LEVEL set, logs go to stderr as before.

import type { Logger } from "pino";
import { createLogger } from "../../src/observability/logger.js";

/** Lines kept per gateway, and the length each is cut to. */
const KEPT_LINES = 40;
const LINE_CHARS = 300;

const byUrl = new Map<string, string[]>();

/** A logger for one test gateway, and `attach(url)` to call once it listens (its lines are then found by its URL). */
export function testGatewayLogger(): { log: Logger; attach(url: string): void } {
  const level = process.env.TEST_LOG_LEVEL;
  if (level) return { log: createLogger(level), attach: () => undefined };
  const lines: string[] = [];
  const log = createLogger("info", {
    write(line: string) {
      if (lines.push(line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS)}…` : line.trimEnd()) > KEPT_LINES) lines.shift();
    },
  });
  return { log, attach: (url) => byUrl.set(url, lines) };
}

/** The last lines the gateway at `url` logged ("" when it is not one of these). */
export function recentLogOf(url: string): string {
  const lines = byUrl.get(url);
  return lines && lines.length > 0 ? `\ntaskgate's last ${lines.length} log lines:\n${lines.join("\n")}` : "";
}
