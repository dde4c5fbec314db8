// The npm package and the Docker image's runtime layout, built for real: `npm pack` (its prepack
// compiles dist/), then
//  - `npm install --prefix <tmp> <tarball>` as a user installs it: `taskgate --version` and
//    `taskgate serve --help` run from the installed bin;
//  - the Dockerfile's runtime stage without an engine: the unpacked package + `npm ci --omit=dev`
//    with the lockfile + `rm -rf node_modules/@types`: no dev tooling is there, and the compiled CLI
//    serves a real request through the example legacy server shipped in dist/examples, runs the
//    demo, and says clearly when dist/examples is absent.
// Slow (a TypeScript build and two installs), so every step has its own limit naming the step.

import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";
import { parse } from "yaml";
import { ENV_VARS } from "../../src/config/loadConfig.js";
import { killHard } from "../support/gatewayChild.js";
import { modernHeaders } from "../support/mcpClient.js";
import { onFreePort } from "../support/ports.js";
import { REPO } from "../support/repoRoot.js";

const STEP_LIMIT_MS = Number(process.env.PACKAGE_TEST_STEP_MS ?? 300_000);
const VERSION = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

const work = mkdtempSync(join(tmpdir(), "taskgate-package-"));
const children: ChildProcess[] = [];
after(async () => {
  for (const child of children) await killHard(child);
  rmSync(work, { recursive: true, force: true });
});

/** Our environment without TASKGATE_* and PORT, which would change what the CLI does. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith("TASKGATE_") && key !== "PORT") env[key] = value;
  return env;
}

/** Runs a step to completion; throws naming the step, its exit and its stderr when it fails or overruns. */
function step(what: string, command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", env: cleanEnv(), timeout: STEP_LIMIT_MS, maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw new Error(`${what}: ${result.error.message} (limit ${STEP_LIMIT_MS} ms, PACKAGE_TEST_STEP_MS)`);
  if (result.status !== 0) throw new Error(`${what} exited ${result.status}: ${result.stderr}`);
  return result.stdout;
}

/** Spawns a long-running process (with `env` added) and resolves with the first stdout line matching `ready`. */
function startUntil(
  what: string,
  args: string[],
  cwd: string,
  ready: (line: string) => boolean,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, args, { cwd, env: { ...cleanEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} was not ready within 30 s; stderr: ${stderr}`)), 30_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before it was ready; stderr: ${stderr}`));
    });
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (!ready(line)) return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      resolve({ child, line });
    });
  });
}

let tarball: string;
let packedFiles: string[];

before(() => {
  const out = step("npm pack", npm, ["pack", "--json", "--pack-destination", work], REPO);
  const [info] = JSON.parse(out.slice(out.indexOf("["))) as Array<{ filename: string; files: Array<{ path: string }> }>;
  assert.ok(info, "npm pack reported its tarball");
  tarball = join(work, info.filename);
  packedFiles = info.files.map((file) => file.path).sort();
});

describe("the npm package", () => {
  test("ships dist/, bin/, config/, the console's files, README.md, LICENSE and package.json, nothing else", () => {
    const allowed =
      /^(dist\/(src|examples)\/.+\.js|bin\/taskgate\.js|config\/[\w.-]+\.yaml|console\/[\w-]+\.(html|js|css|svg)|README\.md|LICENSE|package\.json)$/;
    assert.deepEqual(
      packedFiles.filter((file) => !allowed.test(file)),
      [],
      "files outside the whitelist",
    );
    for (const file of [
      "dist/src/cli.js",
      "bin/taskgate.js",
      "dist/examples/demo.js",
      "dist/examples/legacy-server/main.js",
      "config/demo.yaml",
      "config/taskgate.example.yaml",
      "console/index.html",
      "console/app.js",
      "LICENSE",
    ]) {
      assert.ok(packedFiles.includes(file), `${file} is in the tarball`);
    }
    const compose = parse(readFileSync(join(REPO, "compose.yaml"), "utf8"), { merge: true }) as {
      services: { legacy: { entrypoint: string[] } };
    };
    assert.ok(
      packedFiles.includes(compose.services.legacy.entrypoint[1] as string),
      "compose.yaml's legacy server is in the package (and so in the image)",
    );
  });

  test("installed with npm install --prefix: taskgate --version and taskgate serve --help", () => {
    const prefix = join(work, "prefix");
    step(
      "npm install --prefix <tmp> <tarball>",
      npm,
      ["install", "--prefix", prefix, tarball, "--omit=dev", "--no-audit", "--no-fund", "--prefer-offline"],
      work,
    );
    const bin = join(prefix, "node_modules", ".bin", "taskgate");
    assert.equal(step("taskgate --version", bin, ["--version"], work).trim(), VERSION);
    const help = step("taskgate serve --help", bin, ["serve", "--help"], work);
    assert.match(help, /--upstream <url>\s+MCP endpoint of the server/);
    assert.match(help, /--upstream-command <command line>/);
    for (const name of ENV_VARS) assert.ok(help.includes(name), `${name} in serve --help`);
    for (const tool of ["tsx", "typescript", "esbuild"])
      assert.ok(!existsSync(join(prefix, "node_modules", tool)), `${tool} is not installed with the package`);
  });
});

/** server/discover through the gateway whose "taskgate listening" line is `listening`: the upstream's serverInfo name. */
async function upstreamName(listening: string): Promise<string> {
  const url = (JSON.parse(listening) as { url: string }).url;
  const params = { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } };
  const response = await fetch(url, {
    method: "POST",
    headers: modernHeaders("server/discover", params),
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params }),
  });
  assert.equal(response.status, 200);
  const body = (await response.json()) as { result: { _meta: Record<string, { name: string }> } };
  return body.result._meta["io.modelcontextprotocol/serverInfo"]?.name ?? "";
}

describe("the Docker runtime layout (unpacked package + npm ci --omit=dev)", () => {
  const app = join(work, "app");

  before(() => {
    mkdirSync(app);
    step("tar -xzf <tarball>", "tar", ["-xzf", tarball, "-C", app, "--strip-components=1"], work);
    copyFileSync(join(REPO, "package-lock.json"), join(app, "package-lock.json"));
    step("npm ci --omit=dev", npm, ["ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"], app);
    rmSync(join(app, "node_modules", "@types"), { recursive: true, force: true });
  });

  test("holds no dev tooling and no TypeScript sources", () => {
    for (const name of [
      "tsx",
      "esbuild",
      "@esbuild",
      "typescript",
      "@types",
      "@biomejs",
      "madge",
      "supertest",
      "@modelcontextprotocol/ext-tasks",
    ]) {
      assert.ok(!existsSync(join(app, "node_modules", name)), `${name} is not in the runtime layout`);
    }
    assert.ok(!existsSync(join(app, "src")), "no src/");
    assert.ok(existsSync(join(app, "node_modules", "pino-pretty")), "pino-pretty (a runtime dependency) is there");
  });

  test("node bin/taskgate.js --version and serve --help run compiled code", () => {
    assert.equal(step("--version", process.execPath, ["bin/taskgate.js", "--version"], app).trim(), VERSION);
    assert.match(step("serve --help", process.execPath, ["bin/taskgate.js", "serve", "--help"], app), /TASKGATE_UPSTREAM_URL/);
  });

  test("serve answers server/discover through the example legacy server shipped in dist/examples", async () => {
    // On a free port, not its default 3001 (a demo running on this machine holds that one).
    const legacy = await onFreePort((port) =>
      startUntil("the example legacy server", ["dist/examples/legacy-server/main.js"], app, (line) => line.includes("listening on"), {
        LEGACY_PORT: String(port),
      }),
    );
    const upstream = /listening on (\S+)/.exec(legacy.line)?.[1] as string;
    const gateway = await startUntil(
      "taskgate serve",
      ["bin/taskgate.js", "serve", "--upstream", upstream, "--auth", "demo", "--port", "0"],
      app,
      (line) => line.includes('"taskgate listening"'),
    );
    assert.equal(await upstreamName(gateway.line), "example-legacy-server");
    // The console is served from the package's files, its SSE parser from the production dependencies.
    const base = new URL((JSON.parse(gateway.line) as { url: string }).url).origin;
    for (const path of ["/console", "/console/app.js", "/console/vendor/eventsource-parser.js"])
      assert.equal((await fetch(`${base}${path}`)).status, 200, `${path} from the runtime layout`);
    await killHard(gateway.child);
    await killHard(legacy.child);
  });

  test("serve starts a stdio server (upstream.command) with the runtime dependencies only, and stops it", async () => {
    const everything = join(REPO, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(everything)} stdio`;
    const gateway = await startUntil(
      "taskgate serve --upstream-command",
      ["bin/taskgate.js", "serve", "--upstream-command", command, "--auth", "demo", "--port", "0"],
      app,
      (line) => line.includes('"taskgate listening"'),
    );
    assert.match(await upstreamName(gateway.line), /everything/i);
    await killHard(gateway.child);
  });

  test("demo runs from dist/examples; without it, the demo says what is missing and exits 1", async () => {
    const demo = await startUntil("taskgate demo", ["bin/taskgate.js", "demo", "--port", "0"], app, (line) =>
      line.includes("taskgate demo is running"),
    );
    await killHard(demo.child);
    renameSync(join(app, "dist", "examples"), join(app, "dist", "examples-moved"));
    try {
      const result = spawnSync(process.execPath, ["bin/taskgate.js", "demo", "--port", "0"], {
        cwd: app,
        encoding: "utf8",
        env: cleanEnv(),
        timeout: 30_000,
      });
      assert.equal(result.status, 1, result.stderr);
      assert.match(
        result.stderr,
        /cannot start the demo: it needs the bundled example server \(.*dist\/examples\/demo\.js\), which this installation does not include/,
      );
      assert.match(result.stderr, /taskgate serve --upstream <url>/);
    } finally {
      renameSync(join(app, "dist", "examples-moved"), join(app, "dist", "examples"));
    }
  });
});
