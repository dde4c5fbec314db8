// The names a deployment reaches taskgate by (compose service names, a browser app's origin) at
// the HTTP level, with supertest (it sets Host freely, which fetch cannot): listed names pass the
// DNS-rebinding guard with or without a port and in any case, others get 403 naming the option,
// on the modern and the legacy door alike; the health endpoints and /metrics answer whatever the
// Host, since probes (kubelet, Docker) and Prometheus call them by address.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import request from "supertest";
import type { JsonObject } from "../../src/protocol/wire.js";
import { modernBody, modernHeaders } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";

describe("Host and Origin names of a deployment", () => {
  let stack: Stack;
  before(async () => {
    // As a compose replica is configured (compose.yaml: TASKGATE_ALLOWED_HOSTS=taskgate-a,taskgate-b).
    stack = await startStack({ config: { allowedHosts: ["taskgate-a", "taskgate-b"], allowedOrigins: ["https://app.example.com"] } });
  });
  after(() => stack.close());

  const path = () => new URL(stack.url).pathname;
  const toolsList = (headers: Record<string, string>) =>
    request(stack.gateway.server)
      .post(path())
      .set({ ...modernHeaders("tools/list", {}), ...headers })
      .send(JSON.stringify(modernBody("tools/list", {})));

  for (const host of ["taskgate-a:3000", "taskgate-b", "TASKGATE-A:3000", "localhost:3000", "127.0.0.1"]) {
    test(`Host ${host} is accepted`, async () => {
      const response = await toolsList({ Host: host }).expect(200);
      assert.ok(Array.isArray((response.body as { result: { tools: unknown[] } }).result.tools));
    });
  }

  test("a Host that is not listed gets 403 naming allowedHosts", async () => {
    const response = await toolsList({ Host: "taskgate-c:3000" })
      .expect(403)
      .expect("Content-Type", /application\/json/);
    const error = (response.body as { error: { code: number; message: string } }).error;
    assert.equal(error.code, -32600);
    assert.match(error.message, /Host 'taskgate-c:3000' is not allowed .*add it to allowedHosts/);
  });

  test("the listed Origin is accepted, a look-alike is not", async () => {
    await toolsList({ Host: "taskgate-a:3000", Origin: "https://app.example.com" }).expect(200);
    const response = await toolsList({ Host: "taskgate-a:3000", Origin: "https://app.example.com.evil.example" }).expect(403);
    assert.match((response.body as { error: { message: string } }).error.message, /Origin .* is not allowed .*allowedOrigins/);
  });

  test("the legacy door is guarded the same way", async () => {
    const initialize: JsonObject = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "old-client", version: "1" } },
    };
    const send = (host: string) =>
      request(stack.gateway.server)
        .post(path())
        .set({ Host: host, "Content-Type": "application/json", Accept: "application/json, text/event-stream" })
        .send(JSON.stringify(initialize));
    const refused = await send("evil.example").expect(403);
    assert.match((refused.body as { error: { message: string } }).error.message, /Host 'evil\.example' is not allowed/);
    const accepted = await send("taskgate-b:3000").expect(200);
    assert.ok(accepted.headers["mcp-session-id"], "the upstream opened a legacy session");
  });

  test("GET /livez, /readyz, /healthz and /metrics answer whatever the Host (probes and Prometheus call by address); other paths are 404", async () => {
    const live = await request(stack.gateway.server).get("/livez").set("Host", "10.1.2.3:3000").expect(200);
    assert.equal((live.body as { status: string }).status, "ok");
    const ready = await request(stack.gateway.server).get("/readyz").set("Host", "10.1.2.3:3000").expect(200);
    assert.equal((ready.body as { status: string }).status, "ready");
    const health = await request(stack.gateway.server).get("/healthz").set("Host", "10.1.2.3:3000").expect(200);
    assert.equal((health.body as { status: string }).status, "ready");
    const metrics = await request(stack.gateway.server)
      .get("/metrics")
      .set("Host", "10.1.2.3:3000")
      .expect(200)
      .expect("Content-Type", /^text\/plain; version=0\.0\.4/);
    assert.match(metrics.text, /^taskgate_requests_total\{method="tools\/list",outcome="ok"\} \d+$/m);
    await request(stack.gateway.server).get("/metricz").set("Host", "taskgate-a").expect(404);
  });
});
