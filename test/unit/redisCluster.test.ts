// RedisLeases, RedisHolderLink and createCluster against a real Redis: this file's own redis-server
// on a free port (each suite skipped, saying why, without redis-server). Every key and channel lives
// under a fresh random prefix, and every connection is closed so node exits. A crash is simulated for real:
// a child process takes a lease and is SIGKILLed, so nothing renews or frees its key.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createClient } from "@redis/client";
import { createCluster } from "../../src/cluster/createCluster.js";
import type { HolderCommand, HolderReply, ResumeCommand, TaskCommand } from "../../src/cluster/holderLink.js";
import { RedisHolderLink } from "../../src/cluster/redisHolderLink.js";
import { RedisLeases } from "../../src/cluster/redisLeases.js";
import { needsRedis, testRedisUrl } from "../support/redisServer.js";
import { BUILD_ROOT } from "../support/repoRoot.js";
import { makeRecord } from "./taskStore.contract.js";

const url = await testRedisUrl();
const prefix = `taskgate-test-${randomUUID()}`;
const repoRoot = BUILD_ROOT;

const redis = createClient({ url });
before(async () => {
  if (needsRedis.skip === undefined) await redis.connect();
});
after(async () => {
  if (redis.isOpen) await redis.close();
});

const leases = (instanceId: string, leaseMs = 1_000) => RedisLeases.connect({ url, prefix, instanceId, leaseMs });

/** Polls until check() is true; returns the ms it took, or fails after timeoutMs. */
async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) assert.fail(`condition not met within ${timeoutMs}ms`);
    await sleep(25);
  }
  return Date.now() - started;
}

describe("RedisLeases", needsRedis, () => {
  it("an instance is alive once started, to itself and to others; an unknown id is not", async () => {
    const [a, b] = await Promise.all([leases("a"), leases("b")]);
    try {
      assert.equal(await b.isAlive("a"), false);
      await a.start();
      assert.equal(await a.isAlive("a"), true);
      assert.equal(await b.isAlive("a"), true);
      assert.equal(await b.isAlive("b"), false, "b never started");
      assert.equal(await b.isAlive("nobody"), false);
      assert.deepEqual(
        (await b.alive()).map((instance) => instance.id),
        ["a"],
        "alive() lists the started instances only",
      );
      assert.ok(Date.parse((await b.alive())[0]?.renewedAt ?? "") <= Date.now());
      const ttl = await redis.pTTL(`${prefix}:lease:a`);
      assert.ok(ttl > 0 && ttl <= 1_000, `lease key carries the lease expiry, got ${ttl}`);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("renewal keeps the lease alive well past leaseMs", async () => {
    const [a, watcher] = await Promise.all([leases("renewing", 300), leases("watcher")]);
    try {
      await a.start();
      await sleep(1_000); // time passing is what is tested: over three lease lengths
      assert.equal(await watcher.isAlive("renewing"), true);
    } finally {
      await Promise.all([a.close(), watcher.close()]);
    }
  });

  it("a clean close frees the lease at once", async () => {
    const [a, watcher] = await Promise.all([leases("closing", 60_000), leases("watcher")]);
    try {
      await a.start();
      assert.equal(await watcher.isAlive("closing"), true);
      await a.close();
      assert.equal(await watcher.isAlive("closing"), false);
      assert.equal(await redis.exists(`${prefix}:lease:closing`), 0);
    } finally {
      await Promise.all([a.close(), watcher.close()]);
    }
  });

  it("a crashed instance (killed, nothing renews or deletes) is dead once leaseMs has passed", async () => {
    const watcher = await leases("watcher");
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `import { RedisLeases } from "./src/cluster/redisLeases.js";
         const l = await RedisLeases.connect(${JSON.stringify({ url, prefix, instanceId: "crashing", leaseMs: 1_000 })});
         await l.start();
         setInterval(() => {}, 60_000);
         console.log("started");`,
      ],
      { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      let out = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (chunk: string) => (out += chunk));
      await eventually(async () => out.includes("started"), 15_000);
      assert.equal(await watcher.isAlive("crashing"), true);
      await sleep(1_200); // the child renews meanwhile
      assert.equal(await watcher.isAlive("crashing"), true);

      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
      assert.equal(await watcher.isAlive("crashing"), true, "a crash does not free the lease");
      const tookMs = await eventually(async () => !(await watcher.isAlive("crashing")), 2_500);
      assert.ok(tookMs <= 1_200, `dead within leaseMs of the last renewal, took ${tookMs}ms`);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await watcher.close();
    }
  });

  it("rejects a nonsensical leaseMs", async () => {
    await assert.rejects(leases("x", 0), /leaseMs/);
  });
});

describe("RedisHolderLink", needsRedis, () => {
  const link = (instanceId: string) => RedisHolderLink.connect({ url, prefix, instanceId });

  it("a request reaches the addressed instance's handler only, and its reply comes back", async () => {
    const [a, b, c] = await Promise.all([link("holder-a"), link("holder-b"), link("sender-c")]);
    const seen = { a: [] as HolderCommand[], b: [] as HolderCommand[] };
    try {
      await a.serve(async (command) => (seen.a.push(command), { ok: true }));
      await b.serve(async (command) => (seen.b.push(command), { ok: true }));
      const update: HolderCommand = { kind: "update", taskId: "t1", ownerHash: "h".repeat(64), responses: { k: { answer: 42 } } };
      assert.deepEqual(await c.send("holder-a", update), { ok: true });
      assert.deepEqual(seen.a, [update]);
      assert.equal(seen.b.length, 0);
      // Concurrent requests each get their own reply.
      const replies = await Promise.all([c.send("holder-b", cancel("t2")), a.send("holder-b", cancel("t3"))]);
      assert.deepEqual(replies, [{ ok: true }, { ok: true }]);
      assert.deepEqual(seen.b.map((command) => (command as TaskCommand).taskId).sort(), ["t2", "t3"]);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it("an error reply is carried as is; a throwing handler becomes -32603", async () => {
    const [holder, sender] = await Promise.all([link("holder-err"), link("sender-err")]);
    try {
      await holder.serve(async (command): Promise<HolderReply> => {
        if ((command as TaskCommand).taskId === "refused")
          return { ok: false, error: { code: -32602, message: "no such input key", data: { key: "k" } } };
        throw new Error("store exploded");
      });
      assert.deepEqual(await sender.send("holder-err", cancel("refused")), {
        ok: false,
        error: { code: -32602, message: "no such input key", data: { key: "k" } },
      });
      assert.deepEqual(await sender.send("holder-err", cancel("boom")), {
        ok: false,
        error: { code: -32603, message: "store exploded" },
      });
    } finally {
      await Promise.all([holder.close(), sender.close()]);
    }
  });

  it("a send to an instance nobody serves resolves undefined at once, not after the timeout", async () => {
    const sender = await link("sender-lonely");
    try {
      const started = Date.now();
      assert.equal(await sender.send("gone-instance", cancel("t"), { timeoutMs: 3_000 }), undefined);
      assert.ok(Date.now() - started < 500, `took ${Date.now() - started}ms`);
    } finally {
      await sender.close();
    }
  });

  it("a holder that closed is gone: sends to it resolve undefined at once", async () => {
    const [holder, sender] = await Promise.all([link("holder-closing"), link("sender-closing")]);
    try {
      await holder.serve(async () => ({ ok: true }));
      assert.deepEqual(await sender.send("holder-closing", cancel("t")), { ok: true });
      await holder.close();
      const started = Date.now();
      assert.equal(await sender.send("holder-closing", cancel("t"), { timeoutMs: 3_000 }), undefined);
      assert.ok(Date.now() - started < 500, `took ${Date.now() - started}ms`);
    } finally {
      await Promise.all([holder.close(), sender.close()]);
    }
  });

  it("a handler slower than timeoutMs resolves undefined after timeoutMs; its late reply is ignored", async () => {
    const [holder, sender] = await Promise.all([link("holder-slow"), link("sender-slow")]);
    let finished!: () => void;
    const handlerDone = new Promise<void>((resolve) => (finished = resolve));
    try {
      await holder.serve(async () => {
        await sleep(400);
        finished();
        return { ok: true };
      });
      const started = Date.now();
      assert.equal(await sender.send("holder-slow", cancel("t"), { timeoutMs: 150 }), undefined);
      const took = Date.now() - started;
      assert.ok(took >= 140 && took < 380, `resolved after ${took}ms`);
      await handlerDone;
      await sleep(50); // the late reply arrives and must find nothing to resolve
    } finally {
      await Promise.all([holder.close(), sender.close()]);
    }
  });

  it("a holder still working past timeoutMs says so (heartbeats): the sender waits for its reply, result included", async () => {
    const holder = await RedisHolderLink.connect({ url, prefix, instanceId: "holder-working", heartbeatMs: 50 });
    const sender = await link("sender-working");
    try {
      // Heartbeats every 50 ms against a 500 ms limit (a loaded machine may hold one back a few hundred ms); the
      // handler runs three times that limit.
      await holder.serve(async () => {
        await sleep(1_500);
        return { ok: true, result: { resultType: "complete", content: [] } };
      });
      const started = Date.now();
      assert.deepEqual(await sender.send("holder-working", resume(), { timeoutMs: 500 }), {
        ok: true,
        result: { resultType: "complete", content: [] },
      });
      assert.ok(Date.now() - started >= 1_480, "the reply came after the handler finished, well past timeoutMs");
    } finally {
      await Promise.all([holder.close(), sender.close()]);
    }
  });

  it("a holder that falls silent mid-command (closed) is given up within timeoutMs of its last heartbeat", async () => {
    const holder = await RedisHolderLink.connect({ url, prefix, instanceId: "holder-silent", heartbeatMs: 50 });
    const sender = await link("sender-silent");
    try {
      await holder.serve(async () => {
        await sleep(3_000);
        return { ok: true };
      });
      const started = Date.now();
      const answer = sender.send("holder-silent", resume(), { timeoutMs: 200 });
      await sleep(400);
      await holder.close();
      assert.equal(await answer, undefined);
      const took = Date.now() - started;
      assert.ok(took >= 400 && took < 1_000, `resolved after ${took}ms`);
    } finally {
      await Promise.all([holder.close(), sender.close()]);
    }
  });

  it("round commands (resume, leave) are carried as they are; a malformed one is refused with -32602", async () => {
    const [holder, sender] = await Promise.all([link("holder-rounds"), link("sender-rounds")]);
    const seen: HolderCommand[] = [];
    try {
      await holder.serve(async (command) => (seen.push(command), { ok: true }));
      const leave: HolderCommand = { kind: "leave", ownerHash: "o".repeat(64), requestState: "box.seal" };
      const inAFleet: HolderCommand = { ...resume(), endpoint: "/mcp/legacy" };
      assert.deepEqual(await sender.send("holder-rounds", resume()), { ok: true });
      assert.deepEqual(await sender.send("holder-rounds", inAFleet), { ok: true });
      assert.deepEqual(await sender.send("holder-rounds", leave), { ok: true });
      assert.deepEqual(seen, [resume(), inAFleet, leave]);
      const malformed = { kind: "resume", ownerHash: "o".repeat(64), requestState: "box.seal" } as unknown as HolderCommand;
      const badEndpoint = { ...resume(), endpoint: 42 } as unknown as HolderCommand;
      for (const bad of [malformed, badEndpoint]) {
        assert.deepEqual(await sender.send("holder-rounds", bad), {
          ok: false,
          error: { code: -32602, message: "Malformed holder command" },
        });
      }
      assert.equal(seen.length, 3, "a malformed command never reaches the handler");
    } finally {
      await Promise.all([holder.close(), sender.close()]);
    }
  });

  it("serve twice is refused; send after close resolves undefined", async () => {
    const l = await link("twice");
    await l.serve(async () => ({ ok: true }));
    await assert.rejects(
      l.serve(async () => ({ ok: true })),
      /already serving/,
    );
    await l.close();
    assert.equal(await l.send("twice", cancel("t")), undefined);
  });
});

describe("createCluster", () => {
  it("local: in-process bus, only this instance alive, no other holder to reach", async () => {
    const cluster = await createCluster({ kind: "local", instanceId: "solo" });
    await cluster.leases.start();
    assert.equal(await cluster.leases.isAlive("solo"), true);
    assert.equal(await cluster.leases.isAlive("someone-else"), false);
    assert.equal(await cluster.link.send("someone-else", cancel("t")), undefined);
    await cluster.close();
  });

  it("redis: two instances share liveness and reach each other; close frees the lease", needsRedis, async () => {
    const options = { kind: "redis" as const, url, prefix, leaseMs: 1_000 };
    const [one, two] = await Promise.all([
      createCluster({ ...options, instanceId: "one" }),
      createCluster({ ...options, instanceId: "two" }),
    ]);
    try {
      await Promise.all([one.leases.start(), two.leases.start()]);
      await one.link.serve(async (command) =>
        (command as TaskCommand).taskId === "t" ? { ok: true } : { ok: false, error: { code: -1, message: "?" } },
      );
      assert.equal(await two.leases.isAlive("one"), true);
      assert.deepEqual(await two.link.send("one", cancel("t")), { ok: true });
      const got = new Promise((resolve) => two.bus.subscribe("task-x", resolve));
      const record = makeRecord({ taskId: "task-x", holder: "one" });
      one.bus.publish(record);
      assert.deepEqual(await got, record);
      await one.close();
      assert.equal(await two.leases.isAlive("one"), false);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it("redis: an unreachable Redis fails within a few seconds, naming the url (password hidden)", async () => {
    const started = Date.now();
    await assert.rejects(
      createCluster({ kind: "redis", url: "redis://user:s3cret@127.0.0.1:1", prefix, leaseMs: 1_000, instanceId: "x" }),
      (error: Error) => {
        assert.match(error.message, /cannot reach Redis at redis:\/\/user:\*\*\*@127\.0\.0\.1:1/);
        assert.doesNotMatch(error.message, /s3cret/);
        return true;
      },
    );
    assert.ok(Date.now() - started < 5_000);
  });
});

function resume(): ResumeCommand {
  return {
    kind: "resume",
    ownerHash: "o".repeat(64),
    requestState: "box.seal",
    method: "tools/call",
    name: "two_rounds",
    args: "digest",
    inputResponses: { first: { action: "accept", content: { first: "Ada" } } },
    capabilities: { elicitation: {} },
    asTask: false,
  };
}

function cancel(taskId: string): HolderCommand {
  return { kind: "cancel", taskId, ownerHash: "o".repeat(64) };
}
