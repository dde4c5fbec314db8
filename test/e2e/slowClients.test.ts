// Issue 10, case 2 (client half): slow clients cannot hold taskgate's connections. 200 slowloris
// connections that never finish their request line or headers are closed once
// http.headersTimeoutMs has passed, while a normal request is still served; a client that sends
// its headers but not the body it announced is closed after http.requestTimeoutMs.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { rpcWithin } from "../support/boundedRpc.js";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { type FaultGateway, startFaultGateway } from "../support/inProcessGateway.js";
import { ANSWER_WITHIN_MS, HTTP_LIMITS } from "../support/limits.js";
import { resultOf } from "../support/mcpClient.js";
import { openSlowloris, type Slowloris } from "../support/slowloris.js";
import { timed, until } from "../support/waiting.js";

failIfStillRunning();

describe("slow clients", () => {
  let legacy: LegacyServer;
  let gw: FaultGateway;
  const attacks: Slowloris[] = [];
  before(async () => {
    legacy = await startLegacyServer({ port: 0 });
    gw = await startFaultGateway(legacy.url, { http: { ...HTTP_LIMITS } });
  });
  after(async () => {
    for (const attack of attacks) attack.destroy();
    await closeAll(
      () => gw?.close(),
      () => legacy?.close(),
    );
  });

  const greet = async (name: string) => {
    const reply = await rpcWithin(ANSWER_WITHIN_MS, gw.url, "tools/call", { name: "greet", arguments: { name } });
    assert.deepEqual(resultOf(reply)?.content, [{ type: "text", text: `Hello, ${name}!` }], JSON.stringify(reply.message));
  };

  test("200 slowloris connections that never finish their request line or headers are closed after http.headersTimeoutMs; a normal request is served meanwhile", async (t) => {
    const requestLine = await openSlowloris(gw.url, 100, "request-line");
    const headers = await openSlowloris(gw.url, 100, "headers");
    attacks.push(requestLine, headers);
    await greet("meanwhile");
    const { ms } = await timed(() =>
      until(ANSWER_WITHIN_MS, "taskgate closes all 200 slowloris connections", () =>
        requestLine.closedByServer() + headers.closedByServer() === 200 ? true : undefined,
      ).catch((error: Error) => {
        throw new Error(
          `${error.message}: ${requestLine.closedByServer()} of 100 (request line) and ${headers.closedByServer()} of 100 (headers) were closed`,
        );
      }),
    );
    t.diagnostic(
      `all 200 closed within ${ms} ms of the greet; first answer: ${JSON.stringify(headers.firstAnswer().split("\r\n")[0] ?? "")}`,
    );
    await greet("afterwards");
  });

  test("a client that sends its headers but never the body it announced is closed after http.requestTimeoutMs", async () => {
    const body = await openSlowloris(gw.url, 20, "body");
    attacks.push(body);
    await greet("meanwhile");
    await until(ANSWER_WITHIN_MS, "taskgate closes all 20 connections stuck in their body", () =>
      body.closedByServer() === 20 ? true : undefined,
    ).catch((error: Error) => {
      throw new Error(`${error.message}: ${body.closedByServer()} of 20 were closed`);
    });
  });
});
