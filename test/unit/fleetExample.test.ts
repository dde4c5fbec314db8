// examples/fleet (no container engine runs here, so it is checked by reading it, and
// test/e2e/fleetExampleServes.test.ts runs its taskgate.yaml on loopback): every taskgate service's
// mounted config file loads with taskgate's own loader from the environment the container gets (the
// image's variables, then the service's, interpolated as Compose does), with nothing ignored or
// overridden; every file, folder, build context, volume and program the file names exists (in the
// repository, or in the image the example's Dockerfile builds); the backends point at the services
// on the ports those listen on; the published port is the one taskgate listens on; the URLs the
// README, docs/fleet.md and compose.yaml give are the paths the configuration serves; the image pins
// the versions taskgate's tests run.

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, posix, resolve } from "node:path";
import { describe, it } from "node:test";
import { loadConfig, loadConfigWithReport } from "../../src/config/loadConfig.js";
import type { Config } from "../../src/config/schema.js";
import { type ComposeService, readCompose, serviceEnv } from "../support/composeFiles.js";
import { dockerTaskgateEnv } from "../support/dockerfiles.js";
import { REPO } from "../support/repoRoot.js";

const dir = join(REPO, "examples", "fleet");
const compose = readCompose(join(dir, "compose.yaml"));
const services = compose.services;
const composeText = readFileSync(join(dir, "compose.yaml"), "utf8");
const dockerfile = readFileSync(join(dir, "Dockerfile"), "utf8");
/** The example's image is FROM taskgate's: it carries taskgate's variables, then its own. */
const imageEnv = { ...dockerTaskgateEnv(), ...dockerTaskgateEnv("examples/fleet/Dockerfile") };
const taskgates = Object.entries(services).filter(([, service]) => service.command?.[0] === "serve");

/** The host side of the bind mount that holds `containerPath`, and that path on the host. */
function onHost(service: ComposeService, containerPath: string): string | undefined {
  for (const volume of service.volumes ?? []) {
    const [source = "", target = ""] = volume.split(":");
    if (!source.startsWith(".") && !isAbsolute(source)) continue; // a named volume
    const inside = posix.relative(target, containerPath);
    if (!inside.startsWith("..") && !posix.isAbsolute(inside)) return join(resolve(dir, source), inside);
  }
  return undefined;
}

/** A taskgate service's config file (by --config), on the host. */
function configFileOf(name: string, service: ComposeService): string {
  const args = service.command ?? [];
  const containerPath = args[args.indexOf("--config") + 1];
  assert.ok(args.includes("--config") && containerPath, `${name} names its config file`);
  const file = onHost(service, containerPath);
  assert.ok(file, `${name}: ${containerPath} is inside a folder compose mounts`);
  return file;
}

function load(name: string, service: ComposeService): { config: Config; file: string } {
  const file = configFileOf(name, service);
  const { config, report } = loadConfigWithReport({ file, env: serviceEnv(service, imageEnv, {}) });
  assert.deepEqual(report.ignored, [], `${name}: no variable ignored`);
  assert.deepEqual(report.overridden, [], `${name}: no option of the file overridden by the environment`);
  return { config, file };
}

/** The bins a package installs, from its package.json (the versions the image pins are the installed ones). */
function binsOf(pkg: string): string[] {
  const manifest = JSON.parse(readFileSync(join(REPO, "node_modules", pkg, "package.json"), "utf8")) as { bin?: Record<string, string> };
  return Object.keys(manifest.bin ?? {});
}
const PINNED = ["@modelcontextprotocol/server-filesystem", "@modelcontextprotocol/server-everything"];
const imageBins = PINNED.filter((pkg) => dockerfile.includes(`${pkg}@`)).flatMap(binsOf);

describe("the fleet example", () => {
  it("has one taskgate service, and its mounted taskgate.yaml loads as a fleet of three with a federated endpoint", () => {
    assert.deepEqual(
      taskgates.map(([name]) => name),
      ["taskgate"],
    );
    for (const [name, service] of taskgates) {
      const { config, file } = load(name, service);
      assert.equal(file, join(dir, "taskgate.yaml"));
      assert.deepEqual(Object.keys(config.backends ?? {}), ["everything", "files", "legacy"]);
      assert.equal(config.federation?.path, "/mcp");
      assert.equal(config.host, "0.0.0.0", "the image's TASKGATE_HOST: reachable from the other containers and the host");
      assert.equal(config.auth.mode, "tokens");
      assert.deepEqual(
        config.auth.tokens.map((token) => token.subject),
        ["alice", "bob"],
      );
      assert.notEqual(config.reload?.watchFile, false, "an edited taskgate.yaml is applied (reload.watchFile: on by default)");
      assert.ok(statSync(join(file, "..")).isDirectory() && onHost(service, "/etc/taskgate") === dir, "the folder is mounted");
    }
  });

  it("every build context, Dockerfile, volume and program it names exists", () => {
    assert.match(dockerfile, /^FROM taskgate$/m, "built on taskgate's own image");
    assert.match(composeText, /docker build -t taskgate \./, "compose.yaml says to build taskgate's image first");
    for (const [name, service] of Object.entries(services)) {
      if (service.build !== undefined)
        assert.ok(existsSync(join(resolve(dir, String(service.build)), "Dockerfile")), `${name}: build context`);
      assert.ok(service.image === "taskgate" || service.build !== undefined, `${name}: an image this example builds or tells you to`);
      for (const volume of service.volumes ?? []) {
        const [source = ""] = volume.split(":");
        if (source.startsWith(".") || isAbsolute(source)) assert.ok(existsSync(resolve(dir, source)), `${name}: ${source} exists`);
        else assert.ok(compose.volumes && source in compose.volumes, `${name}: volume ${source} is declared`);
      }
      const needs = Array.isArray(service.depends_on) ? service.depends_on : Object.keys(service.depends_on ?? {});
      for (const other of needs) assert.ok(services[other], `${name} depends on ${other}, a service`);
    }
    const legacy = services.legacy?.entrypoint ?? [];
    assert.equal(legacy[0], "node");
    const source = (legacy[1] ?? "").replace(/^dist\//, "").replace(/\.js$/, ".ts");
    assert.ok(existsSync(join(REPO, source)), `the legacy entrypoint ${legacy[1]} is built from ${source}`);
    const build = JSON.parse(readFileSync(join(REPO, "tsconfig.build.json"), "utf8")) as { include: string[] };
    assert.ok(
      build.include.some((included) => source.startsWith(`${included}/`)),
      `${source} is compiled into taskgate's image`,
    );
    const everything = services.everything?.entrypoint ?? [];
    assert.ok(imageBins.includes(everything[0] ?? ""), `${everything[0]} is installed in the image (${imageBins.join(", ")})`);
  });

  it("the backends reach the services and programs, on the ports and folders those use", () => {
    const [[name, service] = ["", {}]] = taskgates;
    const { config } = load(name, service);
    const listens: Record<string, string | undefined> = {
      everything: services.everything?.environment?.PORT,
      legacy: services.legacy?.environment?.LEGACY_PORT,
    };
    assert.equal(services.legacy?.environment?.LEGACY_HOST, "0.0.0.0", "the legacy server listens beyond its own container");
    for (const [backend, options] of Object.entries(config.backends ?? {})) {
      if (options.url !== undefined) {
        const url = new URL(options.url);
        assert.ok(services[url.hostname], `${backend}: ${url.hostname} is a service`);
        assert.equal(url.port, listens[url.hostname], `${backend}: the port ${url.hostname} listens on`);
        assert.equal(url.pathname, "/mcp", `${backend}: the servers' MCP path`);
        assert.ok((service.depends_on as string[]).includes(url.hostname), `taskgate starts after ${url.hostname}`);
      } else {
        const [program, folder = ""] = options.command ?? [];
        assert.ok(imageBins.includes(program ?? ""), `${backend}: ${program} is installed in the image`);
        assert.ok(
          service.volumes?.some((volume) => volume.split(":")[1] === folder),
          `${backend}: ${folder} is a volume`,
        );
        assert.match(dockerfile, new RegExp(`mkdir -p ${folder} && chown node:node ${folder}`), `the image makes ${folder} taskgate's`);
      }
    }
    assert.ok(config.allowedHosts.includes(name), `taskgate accepts Host ${name} (its service name)`);
  });

  it("publishes the port taskgate listens on, and the README, docs and compose.yaml give the paths it serves", () => {
    const [[name, service] = ["", {}]] = taskgates;
    const { config } = load(name, service);
    const [hostPort, containerPort] = String(service.ports?.[0]).split(":");
    assert.equal(Number(containerPort), config.port, "the published port is taskgate's");
    const served = new Set([...Object.keys(config.backends ?? {}).map((backend) => `${config.path}/${backend}`), config.federation?.path]);
    const fleetDoc = readFileSync(join(REPO, "docs", "fleet.md"), "utf8");
    const readme = readFileSync(join(REPO, "README.md"), "utf8");
    for (const [where, text] of [
      ["docs/fleet.md", fleetDoc],
      ["compose.yaml", composeText],
      ["README.md", readme.slice(readme.indexOf("### In front of several servers"), readme.indexOf("### Who may call what"))],
    ] as const) {
      const urls = [...text.matchAll(/http:\/\/localhost:(\d+)(\/[a-z/<>]*)/g)];
      assert.ok(urls.length >= 2, `${where} gives URLs`);
      for (const [, port, path] of urls) {
        assert.equal(port, hostPort, `${where}: localhost:${port} is the published port`);
        assert.ok(path === "/readyz" || path === `${config.path}/<name>` || served.has(path), `${where}: ${path} is served`);
      }
      const named = where === "README.md" ? [config.federation?.path ?? ""] : served;
      for (const path of named) assert.ok(text.includes(`${path}`), `${where} names ${path}`);
    }
    const command = /docker compose -f (\S+) up --build/;
    for (const text of [readme, fleetDoc, composeText]) {
      const file = command.exec(text)?.[1];
      assert.ok(file && existsSync(join(REPO, file)), `${file} exists`);
    }
    assert.ok(readme.includes("### In front of several servers"), "the README's section");
  });

  it("the README's fleet configuration loads (with an auth mode, which it leaves to the section above)", () => {
    const readme = readFileSync(join(REPO, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("### In front of several servers"), readme.indexOf("### Who may call what"));
    const yaml = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
    assert.ok(yaml, "a YAML example");
    const file = join(mkdtempSync(join(tmpdir(), "taskgate-readme-fleet-")), "taskgate.yaml");
    writeFileSync(file, `auth: { mode: demo }\n${yaml}`);
    const config = loadConfig({ file, env: {} });
    assert.deepEqual(Object.keys(config.backends ?? {}), ["everything", "files"]);
    assert.equal(config.federation?.path, "/mcp");
    rmSync(join(file, ".."), { recursive: true });
  });

  it("the image pins the servers at the versions taskgate's tests run", () => {
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { devDependencies: Record<string, string> };
    for (const name of PINNED) {
      const version = pkg.devDependencies[name]?.replace(/^[\^~]/, "");
      assert.ok(dockerfile.includes(`${name}@${version}`), `${name}@${version} in examples/fleet/Dockerfile`);
    }
  });
});
