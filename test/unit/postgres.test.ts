// The postgres store and cluster parts beyond the shared contracts, on a real PostgreSQL (a fresh
// database per case; everything skipped, saying why, when PostgreSQL is unreachable): the schema is
// created once and a newer one is refused; the compare-and-set keeps another instance's write (made
// by psql, synchronously, between the store's read and its write); every statement has the limit
// (a table locked by another connection), naming the store; an unreachable database fails the start
// at once; the bus carries records bigger than one NOTIFY; the holder link answers "gone" at once for
// an instance whose process was SIGKILLed; leases end within leaseMs of a kill.

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { describe, it } from "node:test";
import pg from "pg";
import { createCluster } from "../../src/cluster/createCluster.js";
import { openPostgresPool } from "../../src/cluster/postgresConnection.js";
import { SCHEMA_VERSION } from "../../src/cluster/postgresSchema.js";
import { createTaskStore } from "../../src/tasks/stores/createTaskStore.js";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import { freshDatabase, POSTGRES_SKIP } from "../support/postgres.js";
import { BUILD_ROOT } from "../support/repoRoot.js";
import { eventually } from "../support/waiting.js";
import { follow, taskBusContract } from "./taskBus.contract.js";
import { makeRecord } from "./taskStore.contract.js";

const skip = POSTGRES_SKIP === undefined ? {} : { skip: POSTGRES_SKIP };

const openStore = (url: string, extra: { commandTimeoutMs?: number; maxUpdateAttempts?: number } = {}) =>
  createTaskStore({
    kind: "postgres",
    connect: () => openPostgresPool({ url, commandTimeoutMs: extra.commandTimeoutMs ?? 5_000 }),
    instanceId: "instance-a",
    ...(extra.maxUpdateAttempts === undefined ? {} : { maxUpdateAttempts: extra.maxUpdateAttempts }),
  });

const cluster = (url: string, instanceId: string, leaseMs = 1_000) =>
  createCluster<TaskRecord>({ kind: "postgres", url, instanceId, leaseMs, commandTimeoutMs: 5_000 });

async function sql<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Runs SQL through psql, blocking this process until it is done (so it lands inside a mutate). */
function psqlSync(url: string, statement: string): void {
  execFileSync("psql", [url, "-v", "ON_ERROR_STOP=1", "-c", statement], { stdio: "ignore", timeout: 5_000 });
}

describe("postgres store", skip, () => {
  it("creates its schema at the first start, once, and refuses a database migrated by a newer taskgate", async () => {
    const url = await freshDatabase();
    await (await openStore(url)).close();
    await (await openStore(url)).close();
    const versions = await sql<{ version: number }>(url, "SELECT version FROM taskgate_schema ORDER BY version");
    assert.deepEqual(
      versions.map((v) => v.version),
      Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
    );
    const tables = await sql<{ tablename: string }>(url, "SELECT tablename FROM pg_tables WHERE tablename LIKE 'taskgate%' ORDER BY 1");
    assert.deepEqual(
      tables.map((t) => t.tablename),
      ["taskgate_leases", "taskgate_messages", "taskgate_push_books", "taskgate_schema", "taskgate_tasks"],
    );

    await sql(url, "INSERT INTO taskgate_schema (version) VALUES ($1)", [SCHEMA_VERSION + 1]);
    await assert.rejects(
      openStore(url),
      new RegExp(
        `cannot use PostgreSQL at .*schema is at version ${SCHEMA_VERSION + 1}, newer than this taskgate knows \\(${SCHEMA_VERSION}\\)`,
      ),
    );
    await assert.rejects(cluster(url, "x"), /newer than this taskgate knows/, "the cluster parts check it too");
  });

  it("a write by another instance between an update's read and its write is not lost: mutate runs again", async () => {
    const url = await freshDatabase();
    const store = await openStore(url);
    try {
      const record = makeRecord();
      await store.create(record);
      let runs = 0;
      const updated = await store.update(record.taskId, (current) => {
        runs++;
        if (runs === 1) {
          const other = JSON.stringify({ ...current, statusMessage: "from another instance", version: current.version + 1 });
          psqlSync(url, `UPDATE taskgate_tasks SET record = '${other.replace(/'/g, "''")}' WHERE task_id = '${record.taskId}'`);
        }
        return { ...current, status: current.statusMessage === "from another instance" ? "failed" : "completed" };
      });
      assert.equal(runs, 2, "mutate ran again on the newer record");
      assert.equal(updated?.status, "failed");
      assert.equal(updated?.version, record.version + 2);
      assert.deepEqual(await store.get(record.taskId), updated);
    } finally {
      await store.close();
    }
  });

  it("a statement that does not answer within commandTimeoutMs rejects naming the store and the setting", async () => {
    const url = await freshDatabase();
    const store = await openStore(url, { commandTimeoutMs: 300 });
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    try {
      const record = makeRecord();
      await store.create(record);
      await blocker.query("BEGIN");
      await blocker.query("LOCK TABLE taskgate_tasks IN ACCESS EXCLUSIVE MODE");
      const started = Date.now();
      await assert.rejects(
        store.get(record.taskId),
        /^Error: task store \(postgres postgres:\/\/.*\) did not answer within 300 ms \(store\.commandTimeoutMs/,
      );
      assert.ok(Date.now() - started < 2_000, `took ${Date.now() - started} ms`);
      await assert.rejects(store.create(makeRecord()), /did not answer within 300 ms/);
      await blocker.query("ROLLBACK");
      assert.deepEqual(await store.get(record.taskId), record, "works again once the table is free");
    } finally {
      await blocker.end();
      await store.close();
    }
  });

  it("an unreachable database fails the start at once, naming it (password hidden)", async () => {
    const started = Date.now();
    await assert.rejects(openStore("postgres://taskgate:secret@127.0.0.1:1/x"), (error: Error) => {
      assert.match(error.message, /^cannot use PostgreSQL at postgres:\/\/taskgate:\*\*\*@127\.0\.0\.1:1\/x: .*ECONNREFUSED/);
      assert.doesNotMatch(error.message, /secret/);
      return true;
    });
    assert.ok(Date.now() - started < 5_000);
  });
});

describe("postgres cluster parts", skip, () => {
  if (POSTGRES_SKIP === undefined) {
    taskBusContract("postgres", async () => {
      const parts = await cluster(await freshDatabase(), "bus");
      // The bus, closing with the rest of its cluster (which closes the bus itself).
      return {
        publish: (record) => parts.bus.publish(record),
        subscribe: (taskId, listener) => parts.bus.subscribe(taskId, listener),
        subscribeAll: (listener) => parts.bus.subscribeAll(listener),
        listenerCount: (taskId) => parts.bus.listenerCount(taskId),
        close: () => parts.close(),
      };
    });
  }

  it("a record bigger than one NOTIFY reaches the other instance whole, in order with small ones", async () => {
    const url = await freshDatabase();
    const [a, b] = [await cluster(url, "a"), await cluster(url, "b")];
    try {
      const record = makeRecord();
      const seen = follow(b.bus, record.taskId);
      const big = { ...record, result: { blob: "z".repeat(50_000) } };
      a.bus.publish({ ...record, statusMessage: "first" });
      a.bus.publish(big);
      a.bus.publish({ ...record, statusMessage: "last" });
      const got = await seen.until(3, 5_000);
      assert.deepEqual(
        got.map((r) => r.statusMessage ?? (r.result?.blob as string).length),
        ["first", 50_000, "last"],
      );
      seen.unsubscribe();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("the holder link: a reply comes back; an instance killed with SIGKILL is 'gone' at once and its lease ends within leaseMs", async () => {
    const url = await freshDatabase();
    const sender = await cluster(url, "sender");
    const holder = await cluster(url, "holder");
    await holder.link.serve(async (command) => ({ ok: true, result: { echoed: command.kind, pad: "p".repeat(10_000) } }));
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `import { createCluster } from "./src/cluster/createCluster.js";
         const c = await createCluster(${JSON.stringify({ kind: "postgres", url, instanceId: "doomed", leaseMs: 1_000, commandTimeoutMs: 5_000 })});
         await c.leases.start();
         await c.link.serve(async () => ({ ok: true }));
         setInterval(() => {}, 60_000);
         console.log("serving");`,
      ],
      { cwd: BUILD_ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      const reply = await sender.link.send("holder", { kind: "cancel", taskId: "t", ownerHash: "o" });
      assert.equal(reply?.ok, true);
      assert.equal((reply as unknown as { result: { pad: string } }).result.pad.length, 10_000, "a reply bigger than one NOTIFY");

      child.stdout.setEncoding("utf8");
      let out = "";
      child.stdout.on("data", (chunk: string) => (out += chunk));
      while (!out.includes("serving")) await once(child.stdout, "data");
      assert.equal((await sender.link.send("doomed", { kind: "cancel", taskId: "t", ownerHash: "o" }))?.ok, true);
      assert.equal(await sender.leases.isAlive("doomed"), true);
      assert.ok(
        (await sender.leases.alive()).some((instance) => instance.id === "doomed"),
        "alive() lists the instances holding a lease",
      );

      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
      const started = Date.now();
      // PostgreSQL notices the dropped connection within moments on loopback, and frees its lock.
      const serving = async () =>
        (await sql<{ n: string }>(url, "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = 29799"))[0]?.n;
      await eventually(async () => (await serving()) === "1", "the killed instance's link lock is freed with its connection", 3_000);
      const asked = Date.now();
      assert.equal(await sender.link.send("doomed", { kind: "cancel", taskId: "t", ownerHash: "o" }, { timeoutMs: 10_000 }), undefined);
      assert.ok(Date.now() - asked < 1_000, `"gone" took ${Date.now() - asked} ms (the send's own timeout is 10 s)`);
      while (await sender.leases.isAlive("doomed")) {
        assert.ok(Date.now() - started < 2_500, "the lease outlived leaseMs");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(await sender.link.send("nobody", { kind: "cancel", taskId: "t", ownerHash: "o" }, { timeoutMs: 10_000 }), undefined);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await Promise.all([sender.close(), holder.close()]);
    }
  });
});
