// The log of one request: lines written through it carry the request's bindings (requestId,
// rpcMethod) as a pino child would, but the child is made only when the first line is actually
// written. Most requests write no line of their own besides the one the front door writes, and
// a child per request showed up in profiles (issue 14), so a request that logs nothing costs one
// small object. EventLog is the part of a pino logger that event-writing code needs; a pino
// Logger is one.

import type { Logger } from "pino";

/** Writes one structured event line (`fields` carries `event`). */
export interface EventLog {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export function requestLog(parent: Logger, bindings: Record<string, unknown>): EventLog {
  return new LazyChildLog(parent, bindings);
}

class LazyChildLog implements EventLog {
  private child?: Logger;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
  ) {}

  debug(fields: object, message: string): void {
    if (this.parent.isLevelEnabled("debug")) this.bound().debug(fields, message);
  }

  info(fields: object, message: string): void {
    if (this.parent.isLevelEnabled("info")) this.bound().info(fields, message);
  }

  warn(fields: object, message: string): void {
    if (this.parent.isLevelEnabled("warn")) this.bound().warn(fields, message);
  }

  error(fields: object, message: string): void {
    if (this.parent.isLevelEnabled("error")) this.bound().error(fields, message);
  }

  private bound(): Logger {
    this.child ??= this.parent.child(this.bindings);
    return this.child;
  }
}
