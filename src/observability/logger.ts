// The one pino logger. JSON lines by default; a readable "pretty" form for people at a terminal
// (pino-pretty, in-process and synchronous so the last lines before an exit are never lost;
// loaded only when asked for, so JSON start-up does not pay for it). Tokens and Authorization
// headers are never logged, in either form: redaction happens before formatting. With tracing on,
// a line written inside a span carries its trace_id and span_id.

import { createRequire } from "node:module";
import pino, { type Logger } from "pino";
import type PinoPretty from "pino-pretty";
import { mergeTraceFields, traceLogFields } from "./tracing.js";

const require = createRequire(import.meta.url);

export type LogFormat = "json" | "pretty";

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "taskgate" },
      // Lines written while a span is active carry its trace_id and span_id (nothing when tracing is off).
      mixin: traceLogFields,
      mixinMergeStrategy: mergeTraceFields,
      redact: { paths: ["req.headers.authorization", "headers.authorization", "token"], censor: "[redacted]" },
    },
    destination,
  );
}

/**
 * The format to use: the one asked for, else ("auto") pretty exactly when stdout is a terminal,
 * so a person running taskgate reads lines while anything that collects logs (a pipe, a file,
 * Docker, Kubernetes) gets JSON.
 */
export function resolveLogFormat(asked: "auto" | LogFormat, stdoutIsTerminal: boolean): LogFormat {
  if (asked !== "auto") return asked;
  return stdoutIsTerminal ? "pretty" : "json";
}

/** Readable single-line output on `output` (stdout by default); colours only where supported. */
export function prettyDestination(output?: NodeJS.WritableStream): pino.DestinationStream {
  const pretty = require("pino-pretty") as typeof PinoPretty;
  return pretty({
    sync: true,
    singleLine: true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname,service",
    ...(output ? { destination: output, colorize: false } : {}),
  });
}

/**
 * A logger in the given format writing to stdout (or `output`). Writes are synchronous, so lines
 * keep their order and the last ones ("shutting down", "stopped") are out before the process exits.
 */
export function createFormattedLogger(level: string, format: LogFormat, output?: NodeJS.WritableStream): Logger {
  if (format === "pretty") return createLogger(level, prettyDestination(output));
  return createLogger(level, output ? (output as pino.DestinationStream) : pino.destination({ dest: 1, sync: true }));
}
