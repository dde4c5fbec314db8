// The tracing module on its own: off, it changes nothing and starts nothing; on (the real SDK,
// exporting nowhere), trace context comes from `_meta` before headers, goes out in `_meta` and in
// headers, and a bad OTEL_* setting is refused naming the variable.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { context, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import pino from "pino";
import { startRequestSpan } from "../../src/observability/requestSpan.js";
import {
  incomingContext,
  inSpan,
  installTracing,
  mergeTraceFields,
  traceHeadersOf,
  traceLogFields,
  tracingOn,
  withTraceMeta,
} from "../../src/observability/tracing.js";
import { startSdk } from "../../src/observability/tracingSdk.js";
import { startTracing } from "../../src/observability/tracingSetup.js";

const META_PARENT = "00-11111111111111111111111111111111-2222222222222222-01";
const HEADER_PARENT = "00-33333333333333333333333333333333-4444444444444444-01";
const silent = pino({ level: "silent" });

describe("tracing off", () => {
  test("nothing is started, nothing is added, spans are no-ops", async () => {
    const running = await startTracing({ enabled: false, serviceName: "taskgate" }, silent, "test");
    assert.equal(tracingOn(), false);
    const params = { name: "greet", _meta: { traceparent: META_PARENT } };
    assert.equal(withTraceMeta(params), params, "the same object, untouched");
    assert.equal(traceHeadersOf(params._meta), undefined);
    assert.equal(incomingContext({ traceparent: HEADER_PARENT }, params._meta).source, "none");
    assert.equal(startRequestSpan({ method: "tools/call", id: 1, params, meta: params._meta, headers: {}, ownerHash: "x" }), undefined);
    assert.equal(await inSpan("x", {}, async (span) => span.isRecording()), false);
    assert.deepEqual(traceLogFields(), {});
    assert.equal(traceLogFields(), traceLogFields(), "a log line outside a span makes no object for its fields");
    const line = { event: "request" };
    assert.equal(mergeTraceFields(line, traceLogFields()), line, "and the line is written as it is");
    await running.shutdown();
  });

  test("OTEL_SDK_DISABLED=true keeps it off even when tracing.enabled is true", async () => {
    await startTracing({ enabled: true, serviceName: "taskgate" }, silent, "test", { OTEL_SDK_DISABLED: "true" });
    assert.equal(tracingOn(), false);
  });
});

describe("tracing on", () => {
  let sdk: ReturnType<typeof startSdk>;
  before(() => {
    sdk = startSdk({ serviceName: "taskgate", version: "test", env: { OTEL_TRACES_EXPORTER: "none" } });
    installTracing(sdk.engine);
  });
  after(async () => {
    installTracing(undefined);
    await sdk.shutdown();
  });

  const traceIdOf = (ctx: typeof ROOT_CONTEXT) => trace.getSpanContext(ctx)?.traceId;

  test("_meta wins over a differing traceparent header, and says they differed", () => {
    const found = incomingContext({ traceparent: HEADER_PARENT }, { traceparent: META_PARENT, tracestate: "k=v" });
    assert.equal(found.source, "_meta");
    assert.equal(found.differs, true);
    assert.equal(traceIdOf(found.context), "11111111111111111111111111111111");
    assert.equal(trace.getSpanContext(found.context)?.traceState?.get("k"), "v");
  });

  test("the same traceparent in both is not a difference; a header alone is used; none is the root", () => {
    assert.equal(incomingContext({ traceparent: META_PARENT }, { traceparent: META_PARENT }).differs, false);
    const header = incomingContext({ traceparent: HEADER_PARENT }, {});
    assert.equal(header.source, "headers");
    assert.equal(traceIdOf(header.context), "33333333333333333333333333333333");
    assert.equal(incomingContext({}, {}).context, ROOT_CONTEXT);
  });

  test("a malformed _meta traceparent is passed over for the header's", () => {
    const found = incomingContext({ traceparent: HEADER_PARENT }, { traceparent: "00-zz-yy-01" });
    assert.equal(found.source, "headers");
    assert.equal(traceIdOf(found.context), "33333333333333333333333333333333");
  });

  test("the active span goes out in _meta (other _meta keys kept) and from there into headers", async () => {
    await inSpan("outer", {}, async (span) => {
      const sent = withTraceMeta({ name: "greet", _meta: { progressToken: 7 } });
      const meta = sent._meta as Record<string, unknown>;
      assert.equal(meta.progressToken, 7);
      assert.equal(meta.traceparent, `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
      assert.deepEqual(traceHeadersOf(meta), { traceparent: meta.traceparent });
      const fields = { trace_id: span.spanContext().traceId, span_id: span.spanContext().spanId };
      assert.deepEqual(traceLogFields(), fields);
      assert.deepEqual(mergeTraceFields({ event: "x", span_id: "mine" }, traceLogFields()), { ...fields, event: "x", span_id: "mine" });
    });
    assert.equal(trace.getSpan(context.active()), undefined, "the span is no longer active after");
  });

  test("a failing span records the failure's reason and rethrows it", async () => {
    const failure = Object.assign(new Error("gone"), { reason: "upstream_exited" });
    let recorded: unknown;
    await assert.rejects(
      inSpan("failing", {}, async (span) => {
        recorded = span;
        throw failure;
      }),
      failure,
    );
    assert.equal((recorded as { attributes: Record<string, unknown> }).attributes["error.type"], "upstream_exited");
  });
});

test("an OTLP protocol taskgate cannot speak is refused, naming the variable", () => {
  assert.throws(
    () => startSdk({ serviceName: "taskgate", version: "test", env: { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" } }),
    /OTLP protocol 'grpc' is not supported: use http\/protobuf or http\/json \(OTEL_EXPORTER_OTLP_PROTOCOL\)/,
  );
  assert.throws(
    () => startSdk({ serviceName: "taskgate", version: "test", env: { OTEL_TRACES_EXPORTER: "zipkin" } }),
    /OTEL_TRACES_EXPORTER 'zipkin'/,
  );
});
