import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../src/config/loadConfig.js";

const dir = mkdtempSync(join(tmpdir(), "taskgate-fleet-config-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** The problems loading this YAML gives (none: []). */
function problemsOf(yaml: string): string[] {
  const file = join(dir, `fleet-${files++}.yaml`);
  writeFileSync(file, `auth: { mode: demo }\n${yaml}`);
  try {
    loadConfig({ file });
    return [];
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return [...error.problems];
  }
}

const URL_A = "http://127.0.0.1:3001/mcp";

describe("fleet configuration", () => {
  it("the issue's shape loads: backends with url or command, per-backend task policies, a federation", () => {
    const file = join(dir, "shape.yaml");
    writeFileSync(
      file,
      [
        "auth: { mode: demo }",
        "backends:",
        "  everything:",
        `    url: ${URL_A}`,
        "    tasks: { tools: { long-operation: always } }",
        "  files:",
        '    command: [npx, -y, "@modelcontextprotocol/server-filesystem", /srv/shared]',
        "  build:",
        "    url: http://ci.internal:8080/mcp",
        "    required: false",
        "federation:",
        "  path: /mcp",
        '  separator: "__"',
      ].join("\n"),
    );
    const config = loadConfig({ file });
    assert.equal(config.upstream, undefined);
    assert.deepEqual(Object.keys(config.backends ?? {}), ["everything", "files", "build"]);
    assert.deepEqual(config.backends?.everything?.tasks.tools, { "long-operation": "always" });
    assert.equal(config.backends?.files?.maxProcesses, 100, "a backend gets every upstream default");
    assert.equal(config.backends?.build?.required, false);
    assert.equal(config.backends?.everything?.required, true);
    assert.deepEqual(config.federation, { path: "/mcp", separator: "__", listTimeoutMs: 5_000 });
  });

  it("refuses a backend named twice, naming it and both lines", () => {
    const problems = problemsOf(`backends:\n  files:\n    url: ${URL_A}\n  files:\n    command: [node, server.js]\n`);
    assert.equal(problems.length, 1);
    assert.match(problems[0] as string, /backends\.files: defined twice \(lines 3 and 5\)/);
  });

  it("refuses a backend named twice in a JSON file too (JSON.parse would keep the last silently)", () => {
    const file = join(dir, "twice.json");
    writeFileSync(file, `{"auth":{"mode":"demo"},"backends":{"a":{"url":"${URL_A}"},"a":{"url":"${URL_A}"}}}`);
    assert.throws(() => loadConfig({ file }), /backends\.a: defined twice/);
  });

  it("refuses an unknown key inside a backend, naming the backend and the key", () => {
    const [problem] = problemsOf(`backends:\n  files:\n    url: ${URL_A}\n    colour: blue\n`);
    assert.match(problem as string, /^backends\.files\.colour: unknown option/);
  });

  it("refuses url and command together in a backend, naming it (its options, not upstream's)", () => {
    const [problem] = problemsOf(`backends:\n  files:\n    url: ${URL_A}\n    command: [node, server.js]\n`);
    assert.match(problem as string, /^backends\.files\.command: backends\.files\.url and backends\.files\.command are mutually exclusive/);
    assert.doesNotMatch(problem as string, /upstream\./);
  });

  it("refuses a backend with neither url nor command, saying where to set them", () => {
    const [problem] = problemsOf("backends:\n  files:\n    requestTimeoutMs: 5000\n");
    assert.match(
      problem as string,
      /^backends\.files\.url: is required but not set — set backends\.files\.url .* or backends\.files\.command /,
    );
    assert.doesNotMatch(problem as string, /upstream\.|with a flag/);
  });

  it("names the backend's own options for the stdio and HTTP ones used on the wrong kind", () => {
    assert.match(
      problemsOf(`backends:\n  web:\n    url: ${URL_A}\n    env: { A: b }\n`)[0] as string,
      /^backends\.web\.env: is only used with backends\.web\.command /,
    );
    assert.match(
      problemsOf("backends:\n  files:\n    command: [node, server.js]\n    headers: { X-Key: v }\n")[0] as string,
      /^backends\.files\.headers: is only used with backends\.files\.url .* through backends\.files\.env /,
    );
  });

  it("never echoes a backend's header value (a credential) in a refusal", () => {
    const [problem] = problemsOf(`backends:\n  web:\n    url: ${URL_A}\n    headers: { X-Key: "s3cret\\u0000key" }\n`);
    assert.match(problem as string, /^backends\.web\.headers\.X-Key: must be printable ASCII/);
    assert.doesNotMatch(problem as string, /s3cret/);
  });

  it("refuses a separator that would make names invalid or ambiguous, naming the option", () => {
    assert.match(
      problemsOf(`backends: { a: { url: "${URL_A}" } }\nfederation: { separator: "." }\n`)[0] as string,
      /^federation\.separator: .*tool-name rules/,
    );
    assert.match(
      problemsOf(`backends: { a: { url: "${URL_A}" } }\nfederation: { separator: "-" }\n`)[0] as string,
      /^federation\.separator: .*ambiguous/,
    );
  });

  it("refuses a name that is not a path segment", () => {
    const [problem] = problemsOf(`backends:\n  My_Files:\n    url: ${URL_A}\n`);
    assert.match(problem as string, /^backends\.My_Files: 'My_Files' is not a backend name/);
  });

  it("refuses upstream and backends together, a federation member that is no backend, a federation path a backend has", () => {
    assert.match(
      problemsOf(`upstream: { url: "${URL_A}" }\nbackends: { a: { url: "${URL_A}" } }\n`)[0] as string,
      /^backends: upstream and backends are mutually exclusive/,
    );
    assert.match(
      problemsOf(`backends: { a: { url: "${URL_A}" } }\nfederation: { backends: [a, nope] }\n`)[0] as string,
      /^federation\.backends\[1\]: 'nope' is not a backend \(backends: a\)/,
    );
    assert.match(
      problemsOf(`backends: { a: { url: "${URL_A}" } }\nfederation: { path: /mcp/a }\n`)[0] as string,
      /^federation\.path: '\/mcp\/a' is backend 'a''s own path/,
    );
    assert.match(problemsOf(`upstream: { url: "${URL_A}" }\nfederation: {}\n`)[0] as string, /^federation: needs backends/);
  });

  it("keeps the single upstream unchanged: no backends, no federation, no reload block", () => {
    const file = join(dir, "single.yaml");
    writeFileSync(file, `auth: { mode: demo }\nupstream: { url: "${URL_A}" }\n`);
    const config = loadConfig({ file });
    assert.equal(config.upstream?.url, URL_A);
    assert.equal(config.backends, undefined);
    assert.equal(config.federation, undefined);
    assert.equal(config.reload, undefined);
  });
});
