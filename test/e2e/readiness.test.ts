// Issue 10, case 7: liveness and readiness tell an operator the truth. /livez is 200 while the
// process serves, whatever the upstream does. /readyz is 503 with a JSON body naming what is not
// ready while the upstream is down, 200 once it answers, 503 again when it goes; /healthz carries
// the same status and code plus its counters. At start, an unreachable upstream is a warn line
// naming the URL.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { type FaultGateway, type Probe, startFaultGateway } from "../support/inProcessGateway.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "../support/limits.js";
import { LEVEL } from "../support/logCapture.js";
import { freePort } from "../support/ports.js";
import { timed, until } from "../support/waiting.js";

failIfStillRunning();

const COUNTERS = ["heldTasks", "heldCalls", "listenStreams", "upstreamSessions"];

function assertJson(probe: Probe, path: string): void {
  assert.match(
    probe.contentType,
    /application\/json/,
    `${path} answers JSON; got HTTP ${probe.status} ${probe.contentType}: ${probe.text.slice(0, 200)}`,
  );
}

describe("/livez, /readyz and /healthz while the upstream comes and goes", () => {
  let port: number;
  let upstreamUrl: string;
  let gw: FaultGateway;
  let legacy: LegacyServer | undefined;
  before(async () => {
    port = await freePort();
    upstreamUrl = `http://127.0.0.1:${port}/mcp`;
    gw = await startFaultGateway(upstreamUrl, { upstream: { ...UPSTREAM_LIMITS } });
  });
  after(() =>
    closeAll(
      () => gw?.close(),
      () => legacy?.close(),
    ),
  );

  const live = async () => {
    const probe = await gw.get("/livez");
    assertJson(probe, "/livez");
    assert.equal(probe.status, 200, "/livez");
    assert.deepEqual(probe.body, { status: "ok" });
  };

  test("/livez 200 always; /readyz and /healthz 503 naming the upstream while it is down, 200 once it answers, 503 when it goes again", async (t) => {
    await live();
    const startWarning = await until(ANSWER_WITHIN_MS, "a warn line at start naming the unreachable upstream URL", () =>
      gw.logs.lines.find((line) => line.level === LEVEL.warn && JSON.stringify(line).includes(upstreamUrl)),
    );
    assert.ok(startWarning);

    const down = await gw.get("/readyz");
    assertJson(down, "/readyz");
    assert.equal(down.status, 503, "/readyz while the upstream is down");
    assert.equal(down.body.status, "not_ready");
    const checks = down.body.checks as Record<string, { ok: boolean; error?: string }>;
    assert.equal(checks.upstream?.ok, false);
    assert.match(String(checks.upstream?.error), new RegExp(`127\\.0\\.0\\.1:${port}`), "the upstream check names the upstream");
    assert.deepEqual(checks.store, { ok: true }, "the memory store is fine");

    const healthDown = await gw.get("/healthz");
    assertJson(healthDown, "/healthz");
    assert.equal(healthDown.status, 503, "/healthz while the upstream is down");
    assert.equal(healthDown.body.status, "not_ready");
    for (const counter of COUNTERS) assert.equal(typeof healthDown.body[counter], "number", `/healthz keeps ${counter}`);

    legacy = await startLegacyServer({ port });
    const { value: up, ms } = await timed(() =>
      until(ANSWER_WITHIN_MS, "/readyz 200 once the upstream answers", async () => {
        const probe = await gw.get("/readyz");
        return probe.status === 200 ? probe : undefined;
      }),
    );
    t.diagnostic(`/readyz 200 ${ms} ms after the upstream started`);
    assert.deepEqual(up.body, { status: "ready", checks: { upstream: { ok: true, detail: { era: "legacy" } }, store: { ok: true } } });
    const healthUp = await gw.get("/healthz");
    assert.equal(healthUp.status, 200, "/healthz once the upstream answers");
    assert.equal(healthUp.body.status, "ready");
    await live();

    await legacy.close();
    legacy = undefined;
    await until(ANSWER_WITHIN_MS, "/readyz 503 again once the upstream is gone", async () =>
      (await gw.get("/readyz")).status === 503 ? true : undefined,
    );
    await live();
  });
});
