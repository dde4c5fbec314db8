// The run's history: every operation a simulated user sent and the answer it got (or the transport
// failure, or the client-side limit), every task notification a listen stream received, every
// fault injected, and the upstream's own events (what reached it). The checker reads only this;
// written to a JSON-lines file so a run can be inspected (and re-checked) afterwards.

import { createWriteStream, type WriteStream } from "node:fs";

export type Outcome = "ok" | "error" | "transport" | "timeout";

export interface Operation {
  kind: "op";
  seq: number;
  user: number;
  identity: string;
  /** What the user meant: "create-report", "answer-wrong", "answer-twice", "poll", "probe-foreign"… */
  op: string;
  method: string;
  backend: string;
  taskId?: string;
  /** The task's creation token (month, text or message), to check results against. */
  token?: string;
  /** The answer sent (tasks/update), the arguments sent (tools/call). */
  sent?: unknown;
  start: number;
  end: number;
  outcome: Outcome;
  httpStatus?: number;
  /** The JSON-RPC result (trimmed to what the checker needs). */
  result?: Record<string, unknown>;
  error?: { code: number; message: string; reason?: string };
  /** Transport failure or limit, described. */
  failure?: string;
}

export interface Notification {
  kind: "notification";
  identity: string;
  at: number;
  taskId: string;
  status: string;
  result?: unknown;
}

export interface FaultEntry {
  kind: "fault";
  fault: string;
  target: string;
  start: number;
  end: number;
  note?: string;
}

export interface UpstreamEvent {
  kind: "upstream";
  at: number;
  event: string;
  payload: Record<string, unknown>;
}

/** An instance's log line for a request it served (only `tasks/cancel` is kept): when it arrived there. */
export interface ServedRequest {
  kind: "served";
  instance: string;
  method: string;
  taskId: string;
  /** The log line's time less the request's duration. */
  arrived: number;
}

export type Entry = Operation | Notification | FaultEntry | UpstreamEvent | ServedRequest;

export class History {
  readonly entries: Entry[] = [];
  private seq = 0;
  private readonly file: WriteStream | undefined;

  constructor(path?: string) {
    this.file = path === undefined ? undefined : createWriteStream(path);
  }

  nextSeq(): number {
    return ++this.seq;
  }

  add(entry: Entry): void {
    this.entries.push(entry);
    this.file?.write(`${JSON.stringify(entry)}\n`);
  }

  ops(): Operation[] {
    return this.entries.filter((e): e is Operation => e.kind === "op");
  }

  close(): Promise<void> {
    const file = this.file;
    if (!file) return Promise.resolve();
    return new Promise((resolve) => file.end(resolve));
  }
}
