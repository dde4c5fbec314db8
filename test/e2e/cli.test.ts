// The taskgate command as a user runs it: bad or missing options stop start-up with exit 2 and a
// message naming the option and what is allowed; failures to start exit 1 naming the fix;
// --version and serve --help say what they should; Kubernetes service-link variables and PORT
// are handled at a real start; SIGTERM logs "shutting down" and exits 0.

import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, describe, test } from "node:test";
import { ENV_ENTRIES, OPTIONS } from "../../src/config/catalog.js";
import { FLAGS } from "../../src/config/flags.js";
import { defaultHelp } from "../../src/config/help.js";
import { ENV_VARS } from "../../src/config/loadConfig.js";
import { cliArgs, killHard, spawnGateway, UNREACHABLE_UPSTREAM } from "../support/gatewayChild.js";
import { freePort } from "../support/ports.js";
import { REPO } from "../support/repoRoot.js";

const VERSION = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;

/** Our environment without TASKGATE_* and PORT (which would change what the command does), plus `env`. */
function cleanEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith("TASKGATE_") && key !== "PORT") base[key] = value;
  return { ...base, ...env };
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const run = (args: string[], env: Record<string, string> = {}, input?: string) =>
  spawnSync(process.execPath, cliArgs(args), {
    cwd: REPO,
    encoding: "utf8",
    env: cleanEnv(env),
    timeout: 30_000,
    ...(input === undefined ? {} : { input }),
  });

const children: ChildProcess[] = [];
after(async () => {
  for (const child of children) await killHard(child);
});

function listenOn(port: number): Promise<Server> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

/** script(1) (util-linux) runs a command at a real terminal; without it the prompt cannot be tested. */
function scriptMissing(): string | false {
  return spawnSync("script", ["--version"], { encoding: "utf8" }).error ? "script(1) is not installed: no terminal to prompt at" : false;
}

function ssMissing(): string | false {
  return spawnSync("ss", ["-V"], { encoding: "utf8" }).error
    ? "ss(8) is not installed: cannot see the address a socket is bound to"
    : false;
}

/** Resolves with the exit code and signal, or rejects after `ms` naming what it waited for. */
function exitOf(child: ChildProcess, ms = 15_000): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`taskgate did not exit within ${ms} ms after the signal`)), ms);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

describe("taskgate command: configuration errors exit 2", () => {
  test("serve without upstream or auth mode stops with exit 2, naming both options and how to set them", () => {
    const result = run(["serve"]);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /upstream\.url: is required but not set — set upstream\.url .* or upstream\.command/);
    assert.match(result.stderr, /TASKGATE_UPSTREAM_URL/);
    assert.match(result.stderr, /auth\.mode: is required but not set.*'demo'.*'tokens'/);
  });

  test("--upstream with --upstream-command is refused: one upstream, over HTTP or started by taskgate", () => {
    const result = run(["serve", "--upstream", UNREACHABLE_UPSTREAM, "--upstream-command", "node server.js", "--auth", "demo"]);
    assert.equal(result.status, 2);
    assert.match(
      result.stderr,
      /upstream\.command: upstream\.url and upstream\.command are mutually exclusive.*\(from flag --upstream-command\)/,
    );
  });

  test("an --upstream-command with an unclosed quote says so", () => {
    const result = run(["serve", "--upstream-command", "node 'my server.js", "--auth", "demo"]);
    assert.equal(result.status, 2);
    assert.match(
      result.stderr,
      /upstream\.command: cannot be read as a command line: the single quote opened in it is never closed \(from --upstream-command\)/,
    );
  });

  test("a bad value names the option, its source and what is allowed", () => {
    const result = run(["serve", "--upstream", UNREACHABLE_UPSTREAM, "--auth", "demo"], { TASKGATE_STORE_KIND: "cassandra" });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /store\.kind: .*memory.*file.*redis.*postgres.*keyv/);
    assert.match(result.stderr, /TASKGATE_STORE_KIND/);
  });

  test("a misspelt TASKGATE_ variable is refused with a suggestion", () => {
    const result = run(["serve", "--upstream", UNREACHABLE_UPSTREAM, "--auth", "demo"], { TASKGATE_PORTT: "1" });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /TASKGATE_PORTT: unknown environment variable \(did you mean TASKGATE_PORT\?\)/);
  });

  test("--log-level and --log-format are checked like every option", () => {
    const level = run(["serve", "--upstream", UNREACHABLE_UPSTREAM, "--auth", "demo", "--log-level", "loud"]);
    assert.equal(level.status, 2);
    assert.match(
      level.stderr,
      /log\.level: must be one of fatal, error, warn, info, debug, trace, silent, got "loud" \(from flag --log-level\)/,
    );
    const format = run(["serve", "--upstream", UNREACHABLE_UPSTREAM, "--auth", "demo"], { TASKGATE_LOG_FORMAT: "xml" });
    assert.equal(format.status, 2);
    assert.match(format.stderr, /log\.format: must be one of auto, json, pretty, got "xml" \(from TASKGATE_LOG_FORMAT\)/);
  });

  test("a bad PORT is named", () => {
    const result = run(["serve", "--upstream", UNREACHABLE_UPSTREAM, "--auth", "demo"], { PORT: "http" });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /PORT: must be an integer \(option port, used when TASKGATE_PORT is not set\), got "http"/);
  });
});

describe("taskgate command: usage errors exit 2 too", () => {
  const cases: Array<[string, string[], RegExp]> = [
    ["an unknown command", ["srve"], /unknown command 'srve'[\s\S]*Did you mean serve\?/],
    ["an unknown option", ["serve", "--upstrem", "x"], /unknown option '--upstrem'[\s\S]*Did you mean --upstream\?/],
    [
      "a port that is not a number",
      ["serve", "--port", "abc"],
      /option '--port <port>' argument 'abc' is invalid\. must be an integer from 0 to 65535/,
    ],
    ["an extra argument", ["serve", "now"], /too many arguments for 'serve'/],
    ["a missing argument", ["hash-token"], /missing required argument 'token'/],
    ["no command at all", [], /Usage: taskgate \[options\] \[command\]/],
  ];
  for (const [what, args, message] of cases) {
    test(`${what}: exit 2 with commander's message`, () => {
      const result = run(args);
      assert.equal(result.status, 2, result.stderr);
      assert.match(result.stderr, message);
    });
  }
});

describe("taskgate command: version and help", () => {
  test("--version and -V print the package's version and exit 0", () => {
    for (const flag of ["--version", "-V"]) {
      const result = run([flag]);
      assert.equal(result.status, 0);
      assert.equal(result.stdout.trim(), VERSION);
    }
  });

  test("serve --help marks --auth required, --upstream or --upstream-command, and lists every environment variable", () => {
    const result = run(["serve", "--help"]);
    assert.equal(result.status, 0);
    assert.match(result.stdout, /--upstream <url>\s+MCP endpoint of the server[\s\S]*?\(this or\s+--upstream-command\)/);
    assert.match(result.stdout, /--upstream-command <command line>\s+start a stdio MCP server per upstream\s+session/);
    assert.match(result.stdout, /--auth <mode>\s+\(required\)/);
    assert.match(result.stdout, /--log-level <level>/);
    assert.match(result.stdout, /--log-format <format>/);
    for (const name of [...ENV_VARS, "TASKGATE_CONFIG"]) assert.match(result.stdout, new RegExp(`^  ${name} +\\S`, "m"), `${name} listed`);
    assert.match(result.stdout, /^ {2}TASKGATE_PORT +port \(default: 3000\)$/m);
    assert.match(result.stdout, /^ {2}TASKGATE_UPSTREAM_URL +upstream\.url \(required unless upstream\.command is set\)$/m);
    assert.match(
      result.stdout,
      /^ {2}TASKGATE_UPSTREAM_COMMAND +upstream\.command \(a command line, split like a shell does \(quotes, no variables\); required unless upstream\.url is set\)$/m,
    );
    assert.match(result.stdout, /^ {2}PORT +port, when TASKGATE_PORT is not set$/m);
    assert.match(result.stdout, /Exit status: 0 .* 2 for a usage or configuration error/);
  });

  test("serve --help shows every option with its real default, from the declarations; --auth lists every mode", () => {
    const result = run(["serve", "--help"]);
    assert.equal(result.status, 0);
    const text = result.stdout.replace(/\s+/g, " ");
    assert.doesNotMatch(result.stdout, /undefined/);
    for (const spec of FLAGS) assert.ok(text.includes(`${spec.flags} ${spec.description}`), `${spec.name}: ${spec.description}`);
    assert.match(text, /--auth <mode> \(required\) identity mode: demo \| tokens \| jwt/);
    for (const entry of ENV_ENTRIES) {
      assert.match(
        result.stdout,
        new RegExp(`^ {2}${entry.variable} +${entry.option.replace(/\./g, "\\.")} \\(.*${escapeRegExp(defaultHelp(entry))}\\)$`, "m"),
      );
    }
    for (const entry of OPTIONS.filter((option) => option.variable === undefined)) {
      assert.ok(result.stdout.includes(`  ${entry.option} (${defaultHelp(entry)})`), `${entry.option} listed as file-only`);
    }
    assert.match(result.stdout, /^ {2}TASKGATE_AUTH_JWT_JWKS_TIMEOUT_MS +auth\.jwt\.jwksTimeoutMs \(default: 5000\)$/m);
    assert.match(result.stdout, /^ {2}TASKGATE_QUOTAS_MAX_HELD_CALLS +quotas\.maxHeldCalls \(default: no limit\)$/m);
  });

  test("hash-token prints the sha256 that auth.tokens stores", () => {
    const result = run(["hash-token", "s3cret"]);
    assert.equal(result.status, 0);
    assert.equal(result.stdout.trim(), createHash("sha256").update("s3cret").digest("hex"));
  });
});

describe("taskgate command: hash-token keeps the token off the command line", () => {
  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

  test("reads the token from stdin, without the line break echo adds; stdout is only the hash", () => {
    for (const input of ["s3cret", "s3cret\n", "s3cret\r\n"]) {
      const result = run(["hash-token"], {}, input);
      assert.equal(result.status, 0, result.stderr);
      assert.equal(result.stdout, `${sha256("s3cret")}\n`);
      assert.equal(result.stderr, "");
    }
  });

  test("the argument form still works, with a warning on stderr naming the risk and the stdin form", () => {
    const result = run(["hash-token", "s3cret"]);
    assert.equal(result.status, 0);
    assert.equal(result.stdout, `${sha256("s3cret")}\n`);
    assert.match(result.stderr, /warning: a token given as an argument is kept in your shell history and visible to other users \(ps\)/);
    assert.match(result.stderr, /printf %s "\$TOKEN" \| taskgate hash-token/);
  });

  test("nothing on stdin: exit 2, saying how to give the token", () => {
    const result = run(["hash-token"], {}, "");
    assert.equal(result.status, 2);
    assert.equal(result.stdout, "");
    assert.match(result.stderr, /missing required argument 'token': pipe it on stdin .* or run taskgate hash-token at a terminal/);
  });

  test("at a terminal it prompts and does not echo what is typed", { skip: scriptMissing() }, async () => {
    // script(1) gives the command a real terminal; what it prints is what a person would see.
    const command = [process.execPath, ...cliArgs(["hash-token"])].map((word) => `'${word}'`).join(" ");
    const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: REPO, env: cleanEnv({}), stdio: ["pipe", "pipe", "pipe"] });
    children.push(child);
    let screen = "";
    let typed = false;
    const exited = exitOf(child, 30_000);
    child.stdout.on("data", (chunk: Buffer) => {
      screen += chunk.toString();
      if (!typed && screen.includes("Token (not shown):")) {
        typed = true;
        child.stdin.write("pty-secret\r");
      }
    });
    assert.deepEqual(await exited, { code: 0, signal: null });
    assert.ok(typed, `the prompt was shown: ${JSON.stringify(screen)}`);
    assert.ok(screen.includes(sha256("pty-secret")), screen);
    assert.ok(!screen.includes("pty-secret"), `the token is not echoed: ${JSON.stringify(screen)}`);
  });
});

describe("taskgate command: starting and stopping", () => {
  test("a port in use: exit 1, naming the port and how to pick another", async () => {
    const blocker = await listenOn(0);
    const { port } = blocker.address() as AddressInfo;
    try {
      const result = run(["serve", "--upstream", UNREACHABLE_UPSTREAM, "--auth", "demo", "--port", String(port)]);
      assert.equal(result.status, 1, result.stderr);
      assert.equal(
        result.stderr.trim(),
        `taskgate: cannot start: port ${port} is in use on 127.0.0.1: pass --port <n>, set TASKGATE_PORT, or set port in the config file (0 = any free port)`,
      );
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  test("an address that is not this machine's: exit 1 naming --host", () => {
    const result = run(["serve", "--upstream", UNREACHABLE_UPSTREAM, "--auth", "demo", "--port", "0", "--host", "192.0.2.1"]);
    assert.equal(result.status, 1, result.stderr);
    assert.match(
      result.stderr,
      /^taskgate: cannot start: 192\.0\.2\.1 is not an address of this machine: pass --host <address> or set TASKGATE_HOST/,
    );
  });

  test("PORT is used when neither TASKGATE_PORT nor --port is set", async () => {
    const port = await freePort();
    const child = await spawnGateway(["--upstream", UNREACHABLE_UPSTREAM, "--auth", "demo"], { PORT: String(port) }, children);
    assert.equal(new URL(child.url).port, String(port));
    const loaded = child.lines.find((line) => line.event === "config.loaded");
    assert.deepEqual(loaded?.fromEnv, ["port (PORT)"]);
    await killHard(child.process);
  });

  test("the variables of a Kubernetes Service named taskgate do not stop start-up and are logged at debug", async () => {
    const links = {
      TASKGATE_SERVICE_HOST: "10.96.0.12",
      TASKGATE_SERVICE_PORT: "3000",
      TASKGATE_PORT: "tcp://10.96.0.12:3000",
      TASKGATE_PORT_3000_TCP: "tcp://10.96.0.12:3000",
      TASKGATE_PORT_3000_TCP_PROTO: "tcp",
      TASKGATE_PORT_3000_TCP_PORT: "3000",
      TASKGATE_PORT_3000_TCP_ADDR: "10.96.0.12",
    };
    const child = await spawnGateway(
      ["--upstream", UNREACHABLE_UPSTREAM, "--auth", "demo", "--log-level", "debug"],
      { ...links, PORT: "0" },
      children,
    );
    const ignored = child.lines.filter((line) => line.event === "config.env.ignored");
    assert.deepEqual(ignored.map((line) => line.variable).sort(), Object.keys(links).sort());
    assert.ok(
      ignored.every((line) => line.level === 20),
      "debug level",
    );
    await killHard(child.process);
  });

  test("SIGTERM: 'shutting down', then 'taskgate stopped', exit 0; JSON lines when stdout is not a terminal", async () => {
    const child = await spawnGateway(["--upstream", UNREACHABLE_UPSTREAM, "--auth", "demo", "--port", "0"], {}, children);
    const exited = exitOf(child.process);
    child.process.kill("SIGTERM");
    assert.deepEqual(await exited, { code: 0, signal: null });
    const events = child.lines.map((line) => line.event);
    const stopping = child.lines.find((line) => line.event === "gateway.stopping");
    assert.equal(stopping?.msg, "shutting down");
    assert.equal(stopping?.signal, "SIGTERM");
    assert.ok(events.indexOf("gateway.stopping") < events.indexOf("gateway.stopped"), events.join(", "));
  });

  test("demo listens where --host or TASKGATE_HOST (the image's 0.0.0.0) says, the flag winning", { skip: ssMissing() }, async () => {
    const started = async (args: string[], env: Record<string, string>) => {
      const child = spawn(process.execPath, cliArgs(["demo", "--port", "0", "--log-format", "json", ...args]), {
        cwd: REPO,
        env: cleanEnv(env),
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.push(child);
      const lines: Array<Record<string, unknown>> = [];
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no gateway.started line within 30 s: ${JSON.stringify(lines)}`)), 30_000);
        createInterface({ input: child.stdout }).on("line", (line) => {
          if (!line.startsWith("{")) return; // the banner
          lines.push(JSON.parse(line) as Record<string, unknown>);
          if (lines.at(-1)?.event === "gateway.started") {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      const { port } = new URL(String(lines.find((line) => line.event === "gateway.started")?.url));
      const loaded = lines.find((line) => line.event === "config.loaded");
      const live = await fetch(`http://127.0.0.1:${port}/livez`);
      // The address the socket is bound to, as the system lists it (only loopback may be a target here).
      const listening =
        spawnSync("ss", ["-ltnH", `sport = :${port}`], { encoding: "utf8" })
          .stdout.trim()
          .split(/\s+/)[3] ?? "";
      await killHard(child);
      return { host: listening.slice(0, listening.lastIndexOf(":")), loaded, live: live.status };
    };
    const image = await started([], { TASKGATE_HOST: "0.0.0.0" });
    assert.deepEqual(image, { host: "0.0.0.0", loaded: image.loaded, live: 200 });
    assert.ok((image.loaded?.fromEnv as string[]).includes("host (TASKGATE_HOST)"));
    const flag = await started(["--host", "127.0.0.1"], { TASKGATE_HOST: "0.0.0.0" });
    assert.equal(flag.host, "127.0.0.1");
    assert.ok((flag.loaded?.fromFlags as string[]).includes("host (--host)"));
  });

  test("--log-format pretty writes readable lines, not JSON", async () => {
    const child = spawn(
      process.execPath,
      cliArgs(["serve", "--upstream", UNREACHABLE_UPSTREAM, "--auth", "demo", "--port", "0", "--log-format", "pretty"]),
      {
        cwd: REPO,
        env: cleanEnv({}),
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    children.push(child);
    const lines: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "taskgate listening" line within 15 s: ${lines.join("\n")}`)), 15_000);
      createInterface({ input: child.stdout }).on("line", (line) => {
        lines.push(line);
        if (line.includes("taskgate listening")) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const exited = exitOf(child);
    child.kill("SIGINT");
    assert.deepEqual(await exited, { code: 0, signal: null });
    const listening = lines.find((line) => line.includes("taskgate listening")) as string;
    assert.match(listening, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: taskgate listening \{"event":"gateway\.started"/);
    assert.ok(
      lines.some((line) => /INFO: shutting down .*"signal":"SIGINT"/.test(line)),
      lines.join("\n"),
    );
    assert.throws(() => JSON.parse(listening));
  });
});
