// The file, postgres and keyv stores lose nothing acknowledged when their process is killed at any
// moment (postgres: a fresh database; keyv: over @keyv/postgres and @keyv/redis): a child
// process (taskStoreCrash.child.ts) creates and updates tasks and reports every write that resolved;
// it is SIGKILLed at random moments, and also while it is compacting its journal; each time the
// reopened store must hold every acknowledged write, and must open despite a torn last line or a
// half-written compaction file.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { freshDatabase, POSTGRES_SKIP } from "../support/postgres.js";
import { needsRedis, testRedisUrl } from "../support/redisServer.js";
import { openStoreSpec } from "../support/storeSpec.js";
import { freshPrefix, storeChildArgs, tempDir } from "../support/taskStores.js";
import { eventually } from "../support/waiting.js";

interface Child {
  process: ChildProcess;
  /** Highest acknowledged version per task. */
  acked: Map<string, number>;
  ready: Promise<void>;
  exited: Promise<void>;
}

function startChild(args: string[]): Child {
  const child = spawn(process.execPath, storeChildArgs(args), { stdio: ["ignore", "pipe", "pipe"] });
  const acked = new Map<string, number>();
  let buffered = "";
  let stderr = "";
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split("\n");
    buffered = lines.pop()!; // a line cut off by the kill was not reported
    for (const line of lines) {
      const [kind, id, version] = line.split(" ");
      if (kind === "ready") onReady();
      if (kind === "ack") acked.set(id!, Math.max(Number(version), acked.get(id!) ?? -1));
    }
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const timeout = setTimeout(() => child.kill("SIGKILL"), 60_000);
  void exited.then(() => clearTimeout(timeout));
  return {
    process: child,
    acked,
    ready: Promise.race([
      ready,
      exited.then(() => {
        throw new Error(`child exited before it was ready: ${stderr}`);
      }),
    ]),
    exited,
  };
}

/** Opens the store as the next process would and checks every acknowledged write is there. */
async function assertHoldsEverything(file: string, acked: Map<string, number>, round: string): Promise<void> {
  const store = await openStoreSpec(file);
  try {
    const unfinished = new Set((await store.listUnfinished()).map((r) => r.taskId));
    for (const [id, version] of acked) {
      const record = await store.get(id);
      assert.ok(record, `${round}: acknowledged task ${id} (version ${version}) is missing`);
      assert.ok(record.version >= version, `${round}: task ${id} is at version ${record.version}, ${version} was acknowledged`);
      assert.equal(record.statusMessage, `v${record.version}`, `${round}: task ${id} is a mix of two writes`);
      assert.equal(
        unfinished.has(id),
        record.status === "working",
        `${round}: task ${id} (${record.status}) wrongly in or out of the unfinished index`,
      );
    }
  } finally {
    await store.close();
  }
  if (!existsSync(file)) return; // not a file store
  // The open rewrote the journal: it ends with a whole line, whatever the kill left.
  assert.ok((await readFile(file, "utf8")).endsWith("\n"), `${round}: journal not rewritten clean`);
}

/** Kills a churning child at 6 random moments; after each, every acknowledged write must be in the store. */
async function killAtRandomMoments(file: string): Promise<void> {
  const acked = new Map<string, number>();
  for (let round = 1; round <= 6; round++) {
    const child = startChild(["churn", file]);
    await child.ready;
    // Once writes are flowing (however slow the machine), at a random moment within the next 400 ms.
    await eventually(() => child.acked.size >= 20, `round ${round}: the child acknowledged 20 writes`, 20_000);
    await sleep(Math.random() * 400); // the random moment is the point of the test
    child.process.kill("SIGKILL");
    await child.exited;
    for (const [id, version] of child.acked) acked.set(id, Math.max(version, acked.get(id) ?? -1));
    await assertHoldsEverything(file, acked, `round ${round}`);
  }
}

describe("postgres and keyv stores: killed at any moment", () => {
  it("postgres: SIGKILL at 6 random moments of creates and updates: every acknowledged write survives", {
    skip: POSTGRES_SKIP ?? false,
  }, async () => {
    await killAtRandomMoments(await freshDatabase());
  });

  it("keyv over @keyv/postgres: the same", { skip: POSTGRES_SKIP ?? false }, async () => {
    await killAtRandomMoments(`keyv:${await freshDatabase()}`);
  });

  it("keyv over @keyv/redis: the same", needsRedis, async () => {
    await killAtRandomMoments(`keyv:${await testRedisUrl()}#${freshPrefix()}`);
  });
});

describe("file store: killed at any moment", () => {
  it("SIGKILL at 6 random moments of creates and updates: every acknowledged write survives", async () => {
    await killAtRandomMoments(path.join(await tempDir("crash"), "tasks.json"));
  });

  it("SIGKILL while the journal is being compacted (3 times): every acknowledged write survives and the store opens", async () => {
    const file = path.join(await tempDir("compaction-crash"), "tasks.json");
    const draft = `${file}.rewrite`;
    const acked = new Map<string, number>();
    for (let round = 1; round <= 3; round++) {
      // 64 KiB threshold: with ~2 KB records the journal is compacted every few dozen writes.
      const child = startChild(["churn", file, String(64 * 1024)]);
      await child.ready;
      const started = Date.now();
      while (!existsSync(draft)) {
        assert.ok(Date.now() - started < 20_000, `round ${round}: no compaction started within 20 s`);
        await new Promise((resolve) => setImmediate(resolve));
      }
      child.process.kill("SIGKILL");
      await child.exited;
      for (const [id, version] of child.acked) acked.set(id, Math.max(version, acked.get(id) ?? -1));
      await assertHoldsEverything(file, acked, `compaction round ${round}`);
    }
  });
});
