// Captures what a taskgate logs: a pino destination that keeps every line, parsed, so a test can
// ask at which level a failure was logged and whether it carried a stack.

import type { DestinationStream } from "pino";

export interface LogLine {
  level: number;
  msg?: string;
  event?: string;
  [key: string]: unknown;
}

export const LEVEL = { debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

export class LogCapture implements DestinationStream {
  readonly lines: LogLine[] = [];

  write(line: string): void {
    for (const text of line.split("\n")) {
      if (text.trim() !== "") this.lines.push(JSON.parse(text) as LogLine);
    }
  }

  /** Lines whose JSON text contains `needle`. */
  mentioning(needle: string): LogLine[] {
    return this.lines.filter((line) => JSON.stringify(line).includes(needle));
  }

  atOrAbove(level: number): LogLine[] {
    return this.lines.filter((line) => line.level >= level);
  }

  /** Lines at `minLevel` or above (default info: debug lines may carry diagnostics) with a stack trace anywhere (pino's err serializer puts it in err.stack). */
  withStack(minLevel: number = LEVEL.info): LogLine[] {
    return this.atOrAbove(minLevel).filter((line) => /\n\s+at /.test(JSON.stringify(line).replaceAll("\\n", "\n")));
  }
}
