import assert from "node:assert/strict";
import { test } from "node:test";
import { type AllowedOriginsAndHosts, checkOriginAndHost } from "../../src/http/originGuard.js";
import { ErrorCode } from "../../src/protocol/errors.js";

const none: AllowedOriginsAndHosts = { origins: [], hosts: [] };

function accepted(headers: Record<string, string | string[] | undefined>, allowed = none) {
  assert.equal(checkOriginAndHost(headers, allowed), undefined, `expected ${JSON.stringify(headers)} to be accepted`);
}

function forbidden(headers: Record<string, string | string[] | undefined>, ...messageParts: string[]) {
  const refusal = checkOriginAndHost(headers, none);
  assert.ok(refusal, `expected ${JSON.stringify(headers)} to be rejected`);
  const { error } = refusal;
  assert.equal(error.code, ErrorCode.InvalidRequest);
  assert.equal(error.httpStatus, 403);
  for (const part of messageParts) assert.ok(error.message.includes(part), `message ${error.message} lacks ${part}`);
  return error;
}

test("no Host and no Origin is accepted", () => {
  accepted({});
});

test("loopback Hosts with any port are accepted (conformance: localhost-host-valid-accepted)", () => {
  for (const host of ["localhost", "localhost:3000", "LOCALHOST:1", "127.0.0.1", "127.0.0.1:8080", "127.5.6.7:80", "[::1]", "[::1]:8080"]) {
    accepted({ host });
  }
});

test("foreign Host is rejected with 403 naming it and allowedHosts", () => {
  forbidden({ host: "evil.example:8080" }, "Host 'evil.example:8080'", "allowedHosts");
});

test("look-alike Hosts are rejected", () => {
  for (const host of ["128.0.0.1", "127.0.0.1.evil.example", "localhost.evil.example", "127.0.0.256", "[::2]", ""]) {
    forbidden({ host }, "Host");
  }
});

test("malformed Host (bad port) is rejected", () => {
  forbidden({ host: "localhost:abc" }, "Host");
});

test("repeated Host header is rejected", () => {
  forbidden({ host: ["localhost", "evil.example"] }, "Host");
});

test("Host listed in allowed.hosts is accepted by hostname or host:port, case-insensitively", () => {
  accepted({ host: "gateway.internal:8080" }, { origins: [], hosts: ["gateway.internal"] });
  accepted({ host: "Gateway.Internal:8080" }, { origins: [], hosts: ["gateway.internal:8080"] });
  assert.ok(checkOriginAndHost({ host: "gateway.internal:9090" }, { origins: [], hosts: ["gateway.internal:8080"] }));
});

test("loopback Origins are accepted", () => {
  for (const origin of ["http://localhost", "http://localhost:5173", "https://127.0.0.1:8443", "http://[::1]:3000"]) {
    accepted({ host: "localhost:3000", origin });
  }
});

test("foreign Origin is rejected with 403 naming it and allowedOrigins", () => {
  forbidden({ host: "localhost:3000", origin: "https://evil.example" }, "Origin 'https://evil.example'", "allowedOrigins");
});

test("foreign Host and Origin together get 4xx (conformance: localhost-host-rebinding-rejected)", () => {
  const error = forbidden({ host: "evil.example", origin: "http://evil.example" });
  assert.ok(error.httpStatus >= 400 && error.httpStatus < 500);
});

test("Origin listed in allowed.origins is accepted (exact match only)", () => {
  const allowed = { origins: ["https://app.example.com"], hosts: [] };
  accepted({ host: "localhost", origin: "https://app.example.com" }, allowed);
  assert.ok(checkOriginAndHost({ origin: "http://app.example.com" }, allowed), "other scheme");
  assert.ok(checkOriginAndHost({ origin: "https://app.example.com:444" }, allowed), "other port");
  assert.ok(checkOriginAndHost({ origin: "https://evil.app.example.com" }, allowed), "subdomain");
});

test("non-http(s) and opaque Origins are rejected", () => {
  for (const origin of ["null", "file://", "chrome-extension://abcdef", "ws://localhost:3000", "localhost", ""]) {
    forbidden({ origin }, "Origin");
  }
});

test("Origin that is not a bare origin (path, credentials) is rejected", () => {
  forbidden({ origin: "http://localhost:3000/app" }, "Origin");
  forbidden({ origin: "http://user@localhost:3000" }, "Origin");
});

test("Origin value in the message is truncated", () => {
  const error = forbidden({ origin: `https://${"a".repeat(500)}.example` }, "Origin", "…");
  assert.ok(error.message.length < 250, error.message);
});

test("a refusal names the refused header and its value, for the log line", () => {
  assert.deepEqual((({ header, value }) => ({ header, value }))(checkOriginAndHost({ host: "taskgate.internal:3000" }, none)!), {
    header: "Host",
    value: "taskgate.internal:3000",
  });
  assert.equal(checkOriginAndHost({ host: "localhost", origin: "https://evil.example" }, none)?.header, "Origin");
});
