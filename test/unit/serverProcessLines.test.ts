// How a stdio server's stdout becomes messages: one JSON-RPC message per line, whatever the pipe's
// chunks (a line split across writes, CRLF endings, several lines at once), and a line that is not
// JSON-RPC logged and skipped. The server is a real child process writing exactly these bytes.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import pino from "pino";
import { ServerProcess } from "../../src/upstream/serverProcess.js";
import type { JsonRpcMessage } from "../../src/upstream/transport.js";

/** A child that writes `pieces` to stdout one by one, each after the previous one was flushed and a turn passed. */
function writer(pieces: string[]) {
  const script = `const pieces = ${JSON.stringify(pieces)};
    const next = () => { const piece = pieces.shift(); if (piece === undefined) return process.stdin.resume();
      process.stdout.write(piece, () => setTimeout(next, 20)); };
    next();`;
  return spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "pipe"] });
}

test("stdout lines become messages across chunk boundaries and CRLF; a stray line is logged and skipped", async () => {
  const logged: Array<Record<string, unknown>> = [];
  const log = pino({ level: "warn" }, { write: (line: string) => void logged.push(JSON.parse(line)) });
  const child = writer([
    '{"jsonrpc":"2.0","id":1,"res',
    'ult":{"text":"héllo"}}\r\nwelcome to my server\n{"jsonrpc":"2.0","method":"notifications/message","params":{}}\n',
    '{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}\n{"id":3}\n',
  ]);
  const server = new ServerProcess(child, "test", 200, log);
  const messages: JsonRpcMessage[] = [];
  const three = new Promise<void>((resolve) => {
    server.events = {
      message: (message) => {
        messages.push(message);
        if (messages.length === 3) resolve();
      },
      exited: () => undefined,
    };
  });
  await three;
  assert.deepEqual(messages, [
    { jsonrpc: "2.0", id: 1, result: { text: "héllo" } },
    { jsonrpc: "2.0", method: "notifications/message", params: {} },
    { jsonrpc: "2.0", id: 2, error: { code: -1, message: "no" } },
  ]);
  await server.stop(); // resolves once the process ended
  const invalid = logged.filter((line) => line.event === "upstream.stdout.invalid");
  assert.equal(invalid.length, 2, "the banner and the line without jsonrpc are both reported");
  assert.match(String(invalid[0]?.err), /not JSON/);
  assert.match(String(invalid[1]?.err), /not a JSON-RPC 2\.0 message/);
});
