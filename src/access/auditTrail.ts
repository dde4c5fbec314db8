// The audit trail: one structured line per access decision that refused something, per approval
// asked and decided, and per call that ended (who, backend, tool, the arguments' digest, the
// approval and who gave it, the outcome). Written to the log (event "audit") and, with
// audit.file, appended to that file too (one JSON object per line, written synchronously, so a
// line is on disk before the call goes on). Argument values appear only with audit.arguments.

import pino, { type Logger } from "pino";

export type AuditEvent =
  | "access.hidden_call"
  | "approval.requested"
  | "approval.approved"
  | "approval.denied"
  | "approval.declined"
  | "approval.expired"
  | "call.ended";

export interface AuditLine {
  /** What happened (the log line's event is "audit"). */
  action: AuditEvent;
  /** The caller (its subject; in demo mode a hash). */
  caller: string;
  backend?: string | undefined;
  tool: string;
  argumentsDigest: string;
  arguments?: unknown;
  approvalId?: string;
  rule?: string;
  /** Who decided (the caller, for approver: caller). */
  by?: string;
  reason?: string;
  /** How a call ended: result, tool_error, error (its reason or code), aborted. */
  outcome?: string;
  taskId?: string;
}

export interface AuditOptions {
  file?: string | undefined;
  arguments: boolean;
}

export class AuditTrail {
  private readonly file: Logger | undefined;

  constructor(
    private readonly options: AuditOptions,
    private readonly log: Logger,
  ) {
    this.file = options.file
      ? pino(
          { base: null, timestamp: pino.stdTimeFunctions.isoTime },
          pino.destination({ dest: options.file, append: true, mkdir: true, sync: true }),
        )
      : undefined;
  }

  /** Whether lines (and approvers) may see argument values. */
  get showsArguments(): boolean {
    return this.options.arguments;
  }

  write(line: AuditLine): void {
    const { arguments: values, ...rest } = line;
    const entry = this.options.arguments && values !== undefined ? { ...rest, arguments: values } : rest;
    this.log.info({ ...entry, event: "audit" }, `audit: ${line.action}`);
    this.file?.info(entry);
  }
}
