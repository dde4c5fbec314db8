// Kubernetes service links never break start-up: the variables a Service named `taskgate` (or
// `taskgate-…`) injects are recognised by shape and ignored (and reported), while a real
// TASKGATE_PORT and misspelt TASKGATE_* variables behave as before.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfigWithReport } from "../../src/config/loadConfig.js";
import { serviceLinkShape } from "../../src/config/serviceLinks.js";

const required = { TASKGATE_UPSTREAM_URL: "http://127.0.0.1:9000/mcp", TASKGATE_AUTH_MODE: "demo" };

/** What a Service `taskgate` with port 3000 (named "http") at 10.96.0.12 puts in every pod. */
const SERVICE_TASKGATE = {
  TASKGATE_SERVICE_HOST: "10.96.0.12",
  TASKGATE_SERVICE_PORT: "3000",
  TASKGATE_SERVICE_PORT_HTTP: "3000",
  TASKGATE_PORT: "tcp://10.96.0.12:3000",
  TASKGATE_PORT_3000_TCP: "tcp://10.96.0.12:3000",
  TASKGATE_PORT_3000_TCP_PROTO: "tcp",
  TASKGATE_PORT_3000_TCP_PORT: "3000",
  TASKGATE_PORT_3000_TCP_ADDR: "10.96.0.12",
};

/** The same for a Service `taskgate-redis` (Redis beside taskgate, 6379). */
const SERVICE_TASKGATE_REDIS = {
  TASKGATE_REDIS_SERVICE_HOST: "10.96.0.20",
  TASKGATE_REDIS_SERVICE_PORT: "6379",
  TASKGATE_REDIS_PORT: "tcp://10.96.0.20:6379",
  TASKGATE_REDIS_PORT_6379_TCP: "tcp://10.96.0.20:6379",
  TASKGATE_REDIS_PORT_6379_TCP_PROTO: "tcp",
  TASKGATE_REDIS_PORT_6379_TCP_PORT: "6379",
  TASKGATE_REDIS_PORT_6379_TCP_ADDR: "10.96.0.20",
};

describe("serviceLinkShape", () => {
  for (const [name, value] of Object.entries({ ...SERVICE_TASKGATE, ...SERVICE_TASKGATE_REDIS })) {
    it(`recognises ${name}=${value}`, () => {
      assert.ok(serviceLinkShape(name, value), `${name} should be a service link`);
    });
  }

  it("recognises UDP and SCTP ports and IPv6 cluster addresses", () => {
    assert.ok(serviceLinkShape("TASKGATE_PORT_53_UDP_ADDR", "10.96.0.10"));
    assert.ok(serviceLinkShape("TASKGATE_PORT_9_SCTP", "sctp://10.96.0.12:9"));
    assert.ok(serviceLinkShape("TASKGATE_PORT", "tcp://[fd00:10:96::c]:3000"));
    assert.ok(serviceLinkShape("TASKGATE_PORT_3000_TCP_ADDR", "fd00:10:96::c"));
  });

  it("does not take options or near-misses for service links", () => {
    assert.equal(serviceLinkShape("TASKGATE_PORT", "3000"), undefined);
    assert.equal(serviceLinkShape("TASKGATE_PORT", "tcp://10.96.0.12"), undefined, "no port: not what Kubernetes writes");
    assert.equal(serviceLinkShape("TASKGATE_PORT", "http://10.96.0.12:3000"), undefined);
    assert.equal(serviceLinkShape("TASKGATE_HOST", "10.96.0.12"), undefined);
    assert.equal(serviceLinkShape("TASKGATE_STORE_URL", "tcp://10.96.0.20:6379"), undefined);
    assert.equal(serviceLinkShape("TASKGATE_PORT_3000_HTTP", "x"), undefined);
    assert.equal(serviceLinkShape("OTHER_SERVICE_HOST", "10.96.0.1"), undefined);
  });
});

describe("loadConfig with service-link variables", () => {
  it("a Service named taskgate: every variable ignored and reported, the default port kept", () => {
    const { config, report } = loadConfigWithReport({ env: { ...required, ...SERVICE_TASKGATE } });
    assert.equal(config.port, 3000);
    assert.deepEqual(report.ignored.map((entry) => entry.variable).sort(), Object.keys(SERVICE_TASKGATE).sort());
    for (const entry of report.ignored) assert.match(entry.reason, /^Kubernetes service link \(<SERVICE>_/);
    assert.deepEqual(report.fromEnv, ["upstream.url (TASKGATE_UPSTREAM_URL)", "auth.mode (TASKGATE_AUTH_MODE)"]);
  });

  it("a Service named taskgate-redis: ignored the same way", () => {
    const { report } = loadConfigWithReport({ env: { ...required, ...SERVICE_TASKGATE_REDIS } });
    assert.equal(report.ignored.length, Object.keys(SERVICE_TASKGATE_REDIS).length);
  });

  it("beside the service links, PORT still sets the port (TASKGATE_PORT was a link)", () => {
    const { config } = loadConfigWithReport({ env: { ...required, ...SERVICE_TASKGATE, PORT: "8080" } });
    assert.equal(config.port, 8080);
  });

  it("a real TASKGATE_PORT=3100 still sets the port", () => {
    const { config, report } = loadConfigWithReport({ env: { ...required, TASKGATE_PORT: "3100", TASKGATE_SERVICE_HOST: "10.96.0.12" } });
    assert.equal(config.port, 3100);
    assert.deepEqual(
      report.ignored.map((entry) => entry.variable),
      ["TASKGATE_SERVICE_HOST"],
    );
  });

  it("a misspelt variable among them is still an error, and a malformed TASKGATE_PORT too", () => {
    assert.throws(
      () => loadConfigWithReport({ env: { ...required, ...SERVICE_TASKGATE, TASKGATE_UPSTREAM_ULR: "http://x/" } }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /TASKGATE_UPSTREAM_ULR: unknown environment variable \(did you mean TASKGATE_UPSTREAM_URL\?\)/.test(error.message),
    );
    assert.throws(
      () => loadConfigWithReport({ env: { ...required, TASKGATE_PORT: "tcp://10.96.0.12" } }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /^TASKGATE_PORT: must be an integer \(option port\), got "tcp:\/\/10\.96\.0\.12"$/.test(error.message),
    );
  });
});
