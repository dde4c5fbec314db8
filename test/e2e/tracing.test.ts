// OpenTelemetry traces end to end: a real OTLP/HTTP receiver in this process (JSON encoding), a
// real taskgate with tracing on, and a real SDK 1.x server (over Streamable HTTP, and over stdio)
// that answers with the traceparent it received. The client's trace id must continue through
// taskgate's server span, its upstream client span and what the upstream saw; a task's phases are
// spans of one trace, linked to the requests that caused them; a failed upstream call says why.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ConfigInput } from "../../src/config/schema.js";
import type { Gateway } from "../../src/gateway.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { mainArgs } from "../support/fixtureModules.js";
import { startTraceEchoHttp, type TraceEchoHttp } from "../support/fixtures/traceEchoServer.js";
import { errorOf, type RpcOptions, resultOf, rpc } from "../support/mcpClient.js";
import { needsRedis } from "../support/redisServer.js";
import { CLIENT, type OtlpReceiver, type ReceivedSpan, SERVER } from "../support/servers/otlpReceiver.js";
import { startSharedRedisStack } from "../support/sharedRedisStack.js";
import { keysOf, waitForTask } from "../support/tasks.js";
import { newTrace, seenBy, spanOf, startTraceReceiver, tracedGateway, traceparent } from "../support/traces.js";

let receiver: OtlpReceiver;
const logLines: JsonObject[] = [];

const gateway = (upstream: ConfigInput["upstream"], extra: Partial<ConfigInput> = {}): Promise<Gateway> =>
  tracedGateway(upstream, extra, logLines);

/** tools/call `name` without arguments. */
const callTool = (url: string, name: string, options: RpcOptions) => rpc(url, "tools/call", { name, arguments: {} }, options);

/** The server span and the upstream client span of one tools/call in a trace. */
const callSpans = (traceId: string, tool: string) =>
  receiver.waitFor(`server and client span of ${tool}`, (all) => {
    const server = spanOf(all, traceId, `tools/call ${tool}`, SERVER);
    const client = spanOf(all, traceId, `tools/call ${tool}`, CLIENT);
    return server && client ? { server, client } : undefined;
  });

before(async () => {
  receiver = await startTraceReceiver();
});
after(() => receiver.close());

describe("tracing with an HTTP upstream", () => {
  let upstream: TraceEchoHttp;
  let gw: Gateway;
  before(async () => {
    upstream = await startTraceEchoHttp();
    gw = await gateway({ url: upstream.url }, { tasks: { tools: { confirm: "always" } } });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  test("the client's _meta trace continues through the server span, the upstream client span and the upstream's _meta and headers", async () => {
    const fromMeta = newTrace();
    const fromHeader = newTrace();
    const reply = await callTool(gw.url, "trace_context", {
      meta: { traceparent: traceparent(fromMeta) },
      headers: { traceparent: traceparent(fromHeader) },
    });
    const upstreamSaw = seenBy(resultOf(reply));
    const { server, client } = await callSpans(fromMeta.traceId, "trace_context");
    // _meta wins over the differing header; the server span is the client's span's child.
    assert.equal(server.parentSpanId, fromMeta.parent);
    assert.equal(server.attributes["taskgate.trace_context.source"], "_meta");
    assert.equal(server.attributes["taskgate.trace_context.headers_differ"], true);
    assert.equal(server.attributes["mcp.method.name"], "tools/call");
    assert.equal(server.attributes["gen_ai.tool.name"], "trace_context");
    assert.equal(server.attributes["taskgate.outcome"], "ok");
    assert.match(String(server.attributes["taskgate.identity.subject_hash"]), /^[0-9a-f]{64}$/);
    assert.equal(server.resource["service.name"], "taskgate-under-test", "OTEL_SERVICE_NAME names the service");
    assert.equal(server.resource["deployment.environment.name"], "under-test", "OTEL_RESOURCE_ATTRIBUTES are the resource's");
    // The upstream client span is the server span's child, and the upstream got its context both ways.
    assert.equal(client.parentSpanId, server.spanId);
    assert.equal(client.attributes["network.transport"], "tcp");
    assert.equal(upstreamSaw.meta, `00-${fromMeta.traceId}-${client.spanId}-01`);
    assert.equal(upstreamSaw.header, upstreamSaw.meta);
    assert.ok(!spans(fromHeader.traceId).length, "nothing was traced under the header's trace");
  });

  test("a traceparent header alone is the parent when _meta carries none", async () => {
    const fromHeader = newTrace();
    const reply = await callTool(gw.url, "trace_context", { headers: { traceparent: traceparent(fromHeader) } });
    assert.match(String(seenBy(resultOf(reply)).meta), new RegExp(`^00-${fromHeader.traceId}-`));
    const server = await receiver.waitFor("server span", (all) => spanOf(all, fromHeader.traceId, "tools/call trace_context", SERVER));
    assert.equal(server.parentSpanId, fromHeader.parent);
    assert.equal(server.attributes["taskgate.trace_context.source"], "headers");
  });

  test("a task's phases are spans of the creating request's trace, each linked to the request that caused it", async () => {
    const origin = newTrace();
    const answering = newTrace();
    const created = await callTool(gw.url, "confirm", {
      meta: { traceparent: traceparent(origin) },
      capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} }, elicitation: {} },
    });
    const taskId = ((resultOf(created).task ?? resultOf(created)) as JsonObject).taskId as string;
    assert.ok(taskId, JSON.stringify(created.message));
    const waiting = await waitForTask(gw.url, taskId, (task) => task.status === "input_required");
    const key = keysOf(waiting)[0]!;
    await rpc(
      gw.url,
      "tasks/update",
      { taskId, inputResponses: { [key]: { action: "accept", content: { confirm: true } } } },
      {
        meta: { traceparent: traceparent(answering) },
        capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } },
      },
    );
    await waitForTask(gw.url, taskId, (task) => task.status === "completed");
    const phases = await receiver.waitFor("the four phases", (all) => {
      const found = ["created", "input_required", "answered", "completed"].map((p) => spanOf(all, origin.traceId, `task ${p}`));
      return found.every(Boolean) ? (found as ReceivedSpan[]) : undefined;
    });
    const creating = spanOf(receiver.spans, origin.traceId, "tools/call confirm", SERVER)!;
    for (const phase of phases) {
      assert.equal(phase.parentSpanId, creating.spanId, `${phase.name} is under the creating request`);
      assert.equal(phase.attributes["taskgate.task.id"], taskId);
    }
    const update = await receiver.waitFor("the tasks/update span", (all) => spanOf(all, answering.traceId, "tasks/update", SERVER));
    const answered = phases[2]!;
    assert.deepEqual(
      answered.links.map((l) => [l.traceId, l.spanId]),
      [[answering.traceId, update.spanId]],
      "answered links to the tasks/update request",
    );
    assert.ok(
      update.links.some((l) => l.traceId === origin.traceId && l.spanId === creating.spanId),
      "the follow-up request links to the task",
    );
    const poll = await receiver.waitFor("a tasks/get span", (all) =>
      all.find((s) => s.name === "tasks/get" && s.kind === SERVER && s.attributes["taskgate.task.id"] === taskId),
    );
    assert.notEqual(poll.traceId, origin.traceId, "a poll is a trace of its own");
    assert.ok(
      poll.links.some((l) => l.traceId === origin.traceId && l.spanId === creating.spanId),
      "a tasks/get links to the task too",
    );
    const taskLine = logLines.find((line) => line.event === "task.created" && line.taskId === taskId);
    assert.equal(taskLine?.trace_id, origin.traceId, "the task's log line carries the trace id");
    const requestLine = logLines.find((line) => line.event === "request" && line.trace_id === answering.traceId);
    assert.equal(requestLine?.span_id, update.spanId);
  });
});

describe("tracing with OTEL_TRACES_SAMPLER=always_off", () => {
  let upstream: TraceEchoHttp;
  let gw: Gateway;
  before(async () => {
    process.env.OTEL_TRACES_SAMPLER = "always_off";
    upstream = await startTraceEchoHttp();
    gw = await gateway({ url: upstream.url });
  });
  after(async () => {
    delete process.env.OTEL_TRACES_SAMPLER;
    await gw.close();
    await upstream.close();
  });

  test("the sampler is the environment's: the trace goes on upstream, marked not sampled", async () => {
    const client = newTrace();
    const reply = await callTool(gw.url, "trace_context", { meta: { traceparent: traceparent(client) } });
    const upstreamSaw = seenBy(resultOf(reply));
    assert.match(String(upstreamSaw.meta), new RegExp(`^00-${client.traceId}-[0-9a-f]{16}-00$`));
    assert.equal(upstreamSaw.header, upstreamSaw.meta);
  });
});

describe("tracing with a stdio upstream", () => {
  let gw: Gateway;
  before(async () => {
    gw = await gateway({ command: [process.execPath, ...mainArgs("traceEchoServer")] });
  });
  after(() => gw.close());

  test("the client's trace continues to the stdio server in _meta", async () => {
    const trace = newTrace();
    const reply = await callTool(gw.url, "trace_context", { meta: { traceparent: traceparent(trace) } });
    const upstreamSaw = seenBy(resultOf(reply));
    const { server, client } = await callSpans(trace.traceId, "trace_context");
    assert.equal(client.parentSpanId, server.spanId);
    assert.equal(client.attributes["network.transport"], "pipe");
    assert.equal(upstreamSaw.meta, `00-${trace.traceId}-${client.spanId}-01`);
    assert.equal(upstreamSaw.header, null);
  });

  test("an upstream failure's client span and server span carry its reason", async () => {
    const trace = newTrace();
    const reply = await callTool(gw.url, "crash", { meta: { traceparent: traceparent(trace) } });
    assert.equal((errorOf(reply).data as JsonObject).reason, "upstream_exited");
    const { server, client } = await callSpans(trace.traceId, "crash");
    assert.equal(client.statusCode, 2);
    assert.equal(client.attributes["error.type"], "upstream_exited");
    assert.equal(server.statusCode, 2);
    assert.equal(server.attributes["taskgate.error.reason"], "upstream_exited");
  });
});

describe("tracing across instances (Redis)", needsRedis, () => {
  test("a tasks/update on the instance not holding the task travels the holder link in its trace", async () => {
    const stack = await startSharedRedisStack({
      speed: 20,
      leaseMs: 5000,
      config: { tasks: { tools: { two_rounds: "always" } }, tracing: { enabled: true } },
    });
    try {
      const origin = newTrace();
      const answering = newTrace();
      const tasks = { extensions: { "io.modelcontextprotocol/tasks": {} }, elicitation: {} };
      const created = await callTool(stack.a.url, "two_rounds", { meta: { traceparent: traceparent(origin) }, capabilities: tasks });
      const taskId = ((resultOf(created).task ?? resultOf(created)) as JsonObject).taskId as string;
      await waitForTask(stack.a.url, taskId, (task) => task.status === "input_required");
      const answered = await rpc(
        stack.b.url,
        "tasks/update",
        { taskId, inputResponses: { first: { action: "accept", content: { first: "Ada" } } } },
        {
          meta: { traceparent: traceparent(answering) },
          capabilities: tasks,
        },
      );
      assert.equal(answered.status, 200, JSON.stringify(answered.message));
      const [send, serve] = await receiver.waitFor("both ends of the holder-link hop", (all) => {
        const sent = spanOf(all, answering.traceId, "holder_link send update", CLIENT);
        const served = spanOf(all, answering.traceId, "holder_link serve update", SERVER);
        return sent && served ? [sent, served] : undefined;
      });
      const update = spanOf(receiver.spans, answering.traceId, "tasks/update", SERVER)!;
      assert.equal(send.parentSpanId, update.spanId, "the hop is sent from the tasks/update span");
      assert.equal(serve.parentSpanId, send.spanId, "the holder serves it under the sending span");
      assert.equal(serve.attributes["taskgate.task.id"], taskId);
      const phase = await receiver.waitFor("the answered phase", (all) => spanOf(all, origin.traceId, "task answered"));
      assert.deepEqual(
        phase.links.map((l) => l.spanId),
        [serve.spanId],
        "the answer's phase links to the holder's serving span",
      );
    } finally {
      await stack.close();
    }
  });
});

function spans(traceId: string): ReceivedSpan[] {
  return receiver.spans.filter((s) => s.traceId === traceId);
}
