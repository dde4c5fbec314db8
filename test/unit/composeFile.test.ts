// compose.yaml (no container engine runs here, so its meaning is checked by reading it): the
// example legacy server, Redis and two taskgate replicas; every TASKGATE_* variable it sets is
// an option taskgate knows and the replicas' configuration loads with taskgate's own loader;
// the replicas point at the legacy service and the Redis service, and share what must be shared
// (store, prefix, MRTR secret, tokens); the secret is required from the operator, never committed;
// the command is the image's default command (Dockerfile CMD), and the image's own TASKGATE_HOST
// (its ENV) is part of each replica's environment.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ENV_VARS, loadConfigWithReport } from "../../src/config/loadConfig.js";
import type { Config } from "../../src/config/schema.js";
import { type ComposeService, readCompose, serviceEnv } from "../support/composeFiles.js";
import { dockerCmd, dockerTaskgateEnv } from "../support/dockerfiles.js";
import { REPO } from "../support/repoRoot.js";

/** Its services' depends_on is the long form (conditions). */
interface Service extends ComposeService {
  depends_on?: Record<string, { condition: string }>;
}

const compose = readCompose(join(REPO, "compose.yaml"));
const services = compose.services as Record<string, Service>;
const replicas = Object.entries(services).filter(([, service]) => service.command?.[0] === "serve");

/** The Dockerfile's default command and the variables its image sets. */
const imageCmd = dockerCmd();
const imageEnv = dockerTaskgateEnv();

/** A replica's configuration, loaded by taskgate's loader from its environment (the image's, then its own) and flags. */
function replicaConfig(service: Service, given: Record<string, string>, required = new Set<string>()): Config {
  const env = serviceEnv(service, imageEnv, given, required);
  const flags = service.command?.slice(1) ?? [];
  assert.deepEqual(flags, [], "no flags: the bind address is the image's TASKGATE_HOST");
  return loadConfigWithReport({ env }).config;
}

const operator = { TASKGATE_MRTR_SECRET: "ab".repeat(32) };

describe("compose.yaml", () => {
  it("has the example legacy server, Redis and two taskgate replicas", () => {
    assert.ok(services.legacy, "a legacy service");
    assert.ok(services.redis, "a redis service");
    assert.deepEqual(
      replicas.map(([name]) => name),
      ["taskgate-a", "taskgate-b"],
    );
  });

  it("sets only TASKGATE_* variables taskgate knows", () => {
    for (const [name, service] of replicas) {
      for (const variable of Object.keys(service.environment ?? {})) {
        assert.ok(variable.startsWith("TASKGATE_"), `${name}: ${variable} is not a taskgate variable`);
        assert.ok((ENV_VARS as readonly string[]).includes(variable), `${name}: ${variable} is not an option (see taskgate serve --help)`);
      }
    }
  });

  it("each replica's configuration loads, with the image's default command", () => {
    for (const [name, service] of replicas) {
      assert.deepEqual(service.command, imageCmd, `${name} runs the Dockerfile's CMD`);
      const config = replicaConfig(service, operator);
      assert.equal(config.host, "0.0.0.0");
      assert.equal(config.auth.mode, "tokens");
      assert.deepEqual(
        config.auth.tokens.map((token) => token.subject),
        ["alice", "bob"],
      );
    }
  });

  it("replicas reach the legacy service and Redis by service name, on the ports those listen on", () => {
    const legacyPort = services.legacy?.environment?.LEGACY_PORT;
    assert.equal(services.legacy?.environment?.LEGACY_HOST, "0.0.0.0", "the legacy server listens beyond its own container");
    const entrypoint = services.legacy?.entrypoint ?? [];
    assert.equal(entrypoint[0], "node");
    const source = (entrypoint[1] ?? "").replace(/^dist\//, "").replace(/\.js$/, ".ts");
    assert.ok(existsSync(join(REPO, source)), `the legacy entrypoint ${entrypoint[1]} is built from ${source}`);
    for (const [name, service] of replicas) {
      const config = replicaConfig(service, operator);
      const upstream = new URL(config.upstream?.url ?? "");
      assert.equal(upstream.hostname, "legacy", name);
      assert.equal(upstream.port, legacyPort, name);
      assert.equal(config.store.kind, "redis", name);
      const redis = new URL(config.store.url);
      assert.equal(redis.hostname, "redis", name);
      assert.equal(redis.port, "6379", name);
      assert.deepEqual(Object.keys(service.depends_on ?? {}).sort(), ["legacy", "redis"], name);
      assert.equal(service.depends_on?.redis?.condition, "service_healthy", `${name} waits for Redis to answer`);
    }
  });

  it("replicas share store, prefix, tokens and the MRTR secret, which the operator must supply", () => {
    const required = new Set<string>();
    const configs = replicas.map(([, service]) => replicaConfig(service, operator, required));
    assert.deepEqual([...required], ["TASKGATE_MRTR_SECRET"], "the secret comes from the operator (${…:?}), never from the file");
    const shared = (config: Config) => ({
      store: config.store,
      tokens: config.auth.tokens,
      secret: config.mrtr.secret,
      upstream: config.upstream,
    });
    for (const config of configs) assert.deepEqual(shared(config), shared(configs[0] as Config));
    assert.equal(configs[0]?.mrtr.secret, operator.TASKGATE_MRTR_SECRET);
    assert.throws(() => replicaConfig(replicas[0]?.[1] as Service, {}), /TASKGATE_MRTR_SECRET is required/);
  });

  it("publishes each replica on its own host port, to the port taskgate listens on, and accepts the service names as Host", () => {
    const published = replicas.map(([name, service]) => {
      const config = replicaConfig(service, operator);
      const [mapping] = service.ports ?? [];
      const [hostPort, containerPort] = String(mapping).split(":");
      assert.equal(Number(containerPort), config.port, `${name} publishes the port taskgate listens on`);
      for (const [other] of replicas) assert.ok(config.allowedHosts.includes(other), `${name} accepts Host ${other}`);
      return hostPort;
    });
    assert.equal(new Set(published).size, replicas.length, `distinct host ports: ${published.join(", ")}`);
  });
});
