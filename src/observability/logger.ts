// The one pino logger. JSON lines; tokens and Authorization headers are never logged.

import pino, { type Logger } from "pino";

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "taskgate" },
      redact: { paths: ["req.headers.authorization", "headers.authorization", "token"], censor: "[redacted]" },
    },
    destination,
  );
}
