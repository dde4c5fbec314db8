// The file store's own behaviour beyond the shared contract: one process per file (lock file, stale
// locks), what it does with files it did not write (an old keyv-file store is imported, anything else
// refused untouched; so is a damaged push subscription file), a torn or damaged journal, compaction
// (at start and as the journal grows), a disk that refuses a write (a real EFBIG: the child runs
// under `ulimit -f`), and the write time limit.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { appendFile, readFile, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createTaskStore } from "../../src/tasks/stores/createTaskStore.js";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import { storeChildArgs, tempDir } from "../support/taskStores.js";
import { eventually } from "../support/waiting.js";
import { makeRecord } from "./taskStore.contract.js";

const HEADER = '{"taskgateJournal":1}\n';

const openFile = (file: string, extra: { minRewriteBytes?: number; writeTimeoutMs?: number } = {}) =>
  createTaskStore({ kind: "file", path: file, ...extra });

async function newFile(label: string): Promise<string> {
  return path.join(await tempDir(label), "tasks.json");
}

/** Starts the child in `mode` on `file`; resolves with it once it reports ready. */
async function childWithStore(mode: string, file: string, shell?: string) {
  const args = storeChildArgs([mode, file]);
  const child = shell
    ? spawn("sh", ["-c", `${shell}; exec "$0" "$@"`, process.execPath, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    : spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  void exited.then(() => clearTimeout(killer));
  await eventually(
    () => {
      if (child.exitCode !== null) throw new Error(`child exited early: ${err}`);
      return out.includes("ready ");
    },
    "the store child printed ready",
    20_000,
  );
  return { child, exited, output: () => out };
}

describe("file store: one process per file", () => {
  it("a second store on the same file in this process is refused, naming the lock file; after close it opens", async () => {
    const file = await newFile("lock-same");
    const first = await openFile(file);
    const record = makeRecord();
    await first.create(record);
    await assert.rejects(openFile(file), (error: Error) => {
      assert.match(error.message, /is in use by this process/);
      assert.ok(error.message.includes(`${file}.lock`), error.message);
      return true;
    });
    assert.deepEqual(await first.get(record.taskId), record, "the refused open must not disturb the open store");
    await first.close();
    const again = await openFile(file);
    assert.deepEqual(await again.get(record.taskId), record);
    await again.close();
  });

  it("a store held by another live process is refused naming its pid; once that process is killed, its stale lock is taken", async () => {
    const file = await newFile("lock-other");
    const { child, exited } = await childWithStore("hold", file);
    try {
      await assert.rejects(openFile(file), new RegExp(`in use by process ${child.pid} on ${hostname()}`));
    } finally {
      child.kill("SIGKILL");
      await exited;
    }
    const lock = JSON.parse(await readFile(`${file}.lock`, "utf8")) as { pid: number };
    assert.equal(lock.pid, child.pid, "the killed process left its lock behind");
    const store = await openFile(file);
    assert.equal(JSON.parse(await readFile(`${file}.lock`, "utf8")).pid, process.pid);
    await store.close();
    await assert.rejects(stat(`${file}.lock`), /ENOENT/, "close removes the lock");
  });

  it("a lock written on another host is refused (it cannot be checked from here)", async () => {
    const file = await newFile("lock-host");
    await writeFile(`${file}.lock`, JSON.stringify({ pid: 1, host: "some-other-host", process: "x", since: "2026-01-01T00:00:00Z" }));
    await assert.rejects(openFile(file), /in use by process 1 on some-other-host .*on another host/);
  });

  it("a lock file that is not taskgate's is refused, saying to delete it if unused", async () => {
    const file = await newFile("lock-garbage");
    await writeFile(`${file}.lock`, "hello");
    await assert.rejects(openFile(file), /lock file .*tasks\.json\.lock is not a taskgate lock .*delete it/);
  });
});

describe("file store: files it did not write", () => {
  /** The layout taskgate 0.1's keyv-file store wrote: keyv's JSON envelope inside keyv-file's document. */
  function keyvFileDocument(records: TaskRecord[]): string {
    const cache: Array<[string, { value: string; expire?: number }]> = [
      ["taskgate:index:unfinished", { value: JSON.stringify({ value: JSON.stringify(records.map((r) => r.taskId)) }) }],
    ];
    for (const r of records) cache.push([`taskgate:task:${r.taskId}`, { value: JSON.stringify({ value: JSON.stringify(r) }) }]);
    return JSON.stringify({ cache, lastExpire: Date.now() });
  }

  it("imports an old keyv-file store once, keeping a copy of it beside", async () => {
    const file = await newFile("old-format");
    const running = makeRecord();
    const done = makeRecord({ status: "completed", result: { content: [{ type: "text", text: 'a "quote"\n' }] }, ttlMs: 3_600_000 });
    const expired = makeRecord({ createdAt: "2020-01-01T00:00:00.000Z", ttlMs: 1_000 });
    const original = keyvFileDocument([running, done, expired]);
    await writeFile(file, original);

    const store = await openFile(file);
    assert.deepEqual(await store.get(running.taskId), running);
    assert.deepEqual(await store.get(done.taskId), done);
    assert.equal(await store.get(expired.taskId), undefined);
    assert.deepEqual(
      (await store.listUnfinished()).map((r) => r.taskId),
      [running.taskId],
    );
    await store.close();
    assert.equal(await readFile(`${file}.keyv-file-backup`, "utf8"), original);
    assert.ok((await readFile(file, "utf8")).startsWith(HEADER), "now a journal");

    const again = await openFile(file);
    assert.deepEqual(await again.get(done.taskId), done);
    await again.close();
  });

  it("refuses an old keyv-file store with a damaged entry, leaving it untouched", async () => {
    const file = await newFile("old-damaged");
    const text = JSON.stringify({ cache: [["taskgate:task:t1", { value: "{not json" }]], lastExpire: 0 });
    await writeFile(file, text);
    await assert.rejects(openFile(file), /old \(keyv-file\) store, but its entry taskgate:task:t1 is damaged/);
    assert.equal(await readFile(file, "utf8"), text);
    await assert.rejects(stat(`${file}.lock`), /ENOENT/, "the lock is released after a refused open");
  });

  it("refuses a file that is neither, naming it and leaving it untouched", async () => {
    const file = await newFile("foreign");
    await writeFile(file, "name,age\nada,36\n");
    await assert.rejects(openFile(file), (error: Error) => {
      assert.ok(error.message.includes(`task store file ${file} is not a taskgate task journal`), error.message);
      assert.match(error.message, /move this one away/);
      return true;
    });
    assert.equal(await readFile(file, "utf8"), "name,age\nada,36\n");
  });

  it("refuses a push subscription file that is not a list of them, naming it, leaving it untouched; a kept one is read at open", async () => {
    const file = await newFile("push");
    const books = `${file}.push.json`;
    const first = await openFile(file);
    await first.push.add("owner", { subject: "alice" }, { endpoint: "https://push.example.com/1", keys: { p256dh: "p", auth: "a" } }, 10);
    await first.close();
    const again = await openFile(file);
    assert.deepEqual((await again.push.of("owner"))?.subscriptions.length, 1);
    await again.close();
    for (const text of ["{not json", '{"owner": "x"}', '[{"owner": "x"}]']) {
      await writeFile(books, text);
      await assert.rejects(openFile(file), (error: Error) => {
        assert.ok(error.message.includes(`push subscription file ${books} is not a list of push subscriptions`), error.message);
        assert.match(error.message, /move it away/);
        return true;
      });
      assert.equal(await readFile(books, "utf8"), text);
      await assert.rejects(stat(`${file}.lock`), /ENOENT/, "the lock is released after a refused open");
    }
  });

  it("refuses a journal with a damaged line before its end, naming the line, leaving the file untouched", async () => {
    const file = await newFile("damaged");
    const a = makeRecord();
    const b = makeRecord();
    const text = `${HEADER}${JSON.stringify(a)}\n{"taskId": "half\n${JSON.stringify(b)}\n`;
    await writeFile(file, text);
    await assert.rejects(openFile(file), /line 3 is damaged/);
    assert.equal(await readFile(file, "utf8"), text);
  });

  it("starts empty on an empty file and creates a missing one", async () => {
    const file = await newFile("empty");
    await writeFile(file, "");
    const store = await openFile(file);
    assert.deepEqual(await store.listUnfinished(), []);
    await store.close();
    assert.equal(await readFile(file, "utf8"), HEADER);
  });
});

describe("file store: journal upkeep", () => {
  it("a torn last line (a write cut short by a crash) is dropped; a whole last line without its break is kept", async () => {
    const file = await newFile("torn");
    const store = await openFile(file);
    const kept = makeRecord();
    await store.create(kept);
    await store.close();
    await appendFile(file, JSON.stringify(makeRecord()).slice(0, 40));
    const again = await openFile(file);
    assert.deepEqual(await again.get(kept.taskId), kept);
    assert.deepEqual(
      (await again.listUnfinished()).map((r) => r.taskId),
      [kept.taskId],
    );
    await again.close();
    assert.equal(await readFile(file, "utf8"), `${HEADER}${JSON.stringify(kept)}\n`, "rewritten without the torn line");

    const whole = makeRecord();
    await appendFile(file, JSON.stringify(whole));
    const third = await openFile(file);
    assert.deepEqual(await third.get(whole.taskId), whole);
    await third.close();
  });

  it("at start, the journal is rewritten to the live records only (superseded versions and expired records go)", async () => {
    const file = await newFile("start-compaction");
    const store = await openFile(file);
    const kept = makeRecord();
    const expiring = makeRecord({ ttlMs: 100 });
    await store.create(kept);
    await store.create(expiring);
    for (let i = 0; i < 20; i++) await store.update(kept.taskId, (c) => ({ ...c, statusMessage: `step ${i}` }));
    await store.close();
    assert.equal((await readFile(file, "utf8")).split("\n").length, 1 + 22 + 1);
    await sleep(150); // time passing is what is tested: the ttl runs out

    const again = await openFile(file);
    const current = await again.get(kept.taskId);
    assert.equal(current?.statusMessage, "step 19");
    await again.close();
    assert.equal(await readFile(file, "utf8"), `${HEADER}${JSON.stringify(current)}\n`);
  });

  it("as it grows past twice the live data, the journal is compacted and keeps everything", async () => {
    const file = await newFile("compaction");
    const store = await openFile(file, { minRewriteBytes: 16 * 1024 });
    const records = Array.from({ length: 20 }, () => makeRecord({ result: { blob: "z".repeat(500) } }));
    await Promise.all(records.map((r) => store.create(r)));
    let largest = 0;
    for (let round = 0; round < 100; round++) {
      await Promise.all(records.map((r) => store.update(r.taskId, (c) => ({ ...c, statusMessage: `round ${round}` }))));
      largest = Math.max(largest, (await stat(file)).size);
    }
    const live = records.length * (JSON.stringify(records[0]).length + 30);
    // 2,000 writes of ~750 bytes (1.5 MB) went through a file that never held much more than 2x the live data.
    assert.ok(largest < 2 * live + 16 * 1024 + 20 * 800, `journal reached ${largest} bytes for ~${live} bytes of live data`);
    await store.close();
    const again = await openFile(file);
    for (const r of records) {
      const got = await again.get(r.taskId);
      assert.equal(got?.statusMessage, "round 99");
      assert.equal(got?.version, r.version + 100);
    }
    await again.close();
  });
});

describe("file store: failures", () => {
  it("a write the disk refuses (EFBIG under ulimit -f) rejects naming the file; later writes are refused; acknowledged ones are kept", async () => {
    const file = await newFile("efbig");
    // 512-byte blocks: the journal may grow to 1 MiB, then writes fail with EFBIG (the signal is ignored).
    const { exited, output } = await childWithStore("fill", file, "ulimit -f 2048");
    assert.equal(await exited, 0);
    const lines = output().trim().split("\n");
    const acked = lines.filter((l) => l.startsWith("ack ")).map((l) => l.split(" ")[1]!);
    const failed = lines.find((l) => l.startsWith("failed "));
    const then = lines.find((l) => l.startsWith("then "));
    assert.ok(acked.length > 5, `only ${acked.length} writes before the limit`);
    assert.ok(failed?.includes(`task store (file ${file}) cannot write (EFBIG`), failed);
    assert.ok(then?.includes(`task store (file ${file}) cannot write (EFBIG`), `the next write: ${then}`);

    const store = await openFile(file);
    for (const id of acked) assert.ok(await store.get(id), `acknowledged task ${id} lost`);
    await store.close();
  });

  it("a write not on disk within writeTimeoutMs rejects naming the file and the limit; it still lands", async () => {
    const file = await newFile("timeout");
    const store = await openFile(file, { writeTimeoutMs: 1 });
    const big = makeRecord({ status: "completed", result: { blob: "q".repeat(30_000_000) } });
    await assert.rejects(store.create(big), (error: Error) => {
      assert.equal(
        error.message,
        `task store (file ${file}) did not finish a write within 1 ms (store.commandTimeoutMs; the disk is slow or stuck, the write may still land)`,
      );
      return true;
    });
    await eventually(async () => (await store.get(big.taskId)) !== undefined, "the timed-out write landed", 10_000);
    await store.close();
  });
});
