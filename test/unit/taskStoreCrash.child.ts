// A process that uses a task store until it is killed, for taskStoreCrash.test.ts and
// taskStoreJournal.test.ts. It reports on stdout, one line per event (stdout is a pipe, written
// synchronously on Linux, so a line the parent reads was written before the process died):
//   ready <pid>                  the store is open
//   ack <taskId> <version>       a create (version 0) or update resolved: that write is acknowledged
//   failed <message>             a write rejected (mode "fill")
//   then <message>               the next write after that (mode "fill")
// Modes (argv[2]), store argv[3] (a file, or another store as storeSpec.ts names it):
//   hold                 open the store and wait
//   churn [minRewrite]   16 workers create tasks (~2 KB) and update each 6 times (the 6th finishes it),
//                        forever; minRewrite (bytes) makes compaction frequent
//   fill                 create 64 KB tasks until a write fails, then try one more and exit

import { randomUUID } from "node:crypto";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import { openStoreSpec } from "../support/storeSpec.js";

const [mode, file, extra] = process.argv.slice(2);
if (file === undefined) throw new Error("usage: taskStoreCrash.child.ts hold|churn|fill <file> [minRewriteBytes]");
const say = (line: string) => process.stdout.write(line + "\n");

/** A running task at version 0 whose statusMessage names its version ("v0"). */
function newTask(result: TaskRecord["result"]): TaskRecord {
  const now = new Date().toISOString();
  return {
    taskId: randomUUID(),
    status: "working",
    statusMessage: "v0",
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: null,
    ownerHash: "c".repeat(64),
    tool: "churn",
    holder: "child",
    version: 0,
    ...(result ? { result } : {}),
  };
}

const store = await openStoreSpec(file, extra === undefined ? undefined : Number(extra));
say(`ready ${process.pid}`);

if (mode === "hold") {
  setInterval(() => undefined, 60_000);
} else if (mode === "churn") {
  const blob = "x".repeat(2_000);
  const worker = async () => {
    for (;;) {
      const record = newTask({ blob });
      await store.create(record);
      say(`ack ${record.taskId} 0`);
      for (let step = 1; step <= 6; step++) {
        const next = await store.update(
          record.taskId,
          (current): TaskRecord => ({
            ...current,
            statusMessage: `v${current.version + 1}`,
            status: step === 6 ? "completed" : "working",
          }),
        );
        say(`ack ${record.taskId} ${next?.version}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
} else if (mode === "fill") {
  const blob = "y".repeat(64 * 1024);
  for (;;) {
    const record = newTask({ blob });
    try {
      await store.create(record);
      say(`ack ${record.taskId} 0`);
    } catch (error) {
      say(`failed ${(error as Error).message}`);
      try {
        await store.create(newTask(undefined));
        say("then nothing: the next write succeeded");
      } catch (next) {
        say(`then ${(next as Error).message}`);
      }
      process.exit(0);
    }
  }
} else {
  throw new Error(`unknown mode ${mode}`);
}
