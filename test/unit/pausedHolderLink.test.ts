// The holder link and a holder that was paused (a real child process, SIGSTOP) while commands came
// for it, on each cluster backend (Redis pub/sub, PostgreSQL LISTEN/NOTIFY): a `resume` its sender
// gave up on meanwhile is dropped when the holder wakes (the holder asks first, and no go comes),
// while a cancel, which needs no one waiting, is carried out. A resume sent to the awake holder
// is carried out, and its sender is told when the holder took it.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { type ClusterOptions, createCluster } from "../../src/cluster/createCluster.js";
import type { HolderCommand } from "../../src/cluster/holderLink.js";
import { freshDatabase, POSTGRES_SKIP } from "../support/postgres.js";
import { ManagedProcess } from "../support/processes.js";
import { REDIS_SKIP, testRedisUrl } from "../support/redisServer.js";
import { BUILD_ROOT } from "../support/repoRoot.js";
import { eventually } from "../support/waiting.js";

const resume: HolderCommand = {
  kind: "resume",
  ownerHash: "o".repeat(64),
  requestState: "box.seal",
  method: "tools/call",
  name: "deploy",
  args: "digest",
  inputResponses: { confirm: { action: "accept", content: { deploy: true } } },
  capabilities: {},
  asTask: false,
};
const cancel: HolderCommand = { kind: "cancel", taskId: "t", ownerHash: "o".repeat(64) };

/** A holder in a process of its own (the tests' launcher: frozen, thawed, killed): it prints `handled <kind>` for each
 *  command it carries out, and the link's errors. */
function holderProcess(options: ClusterOptions): Promise<ManagedProcess> {
  const script = `import { createCluster } from "./src/cluster/createCluster.js";
    const c = await createCluster({ ...${JSON.stringify(options)}, onError: (error) => console.log("error " + error.message) });
    await c.leases.start();
    await c.link.serve(async (command) => (console.log("handled " + command.kind), { ok: true }));
    setInterval(() => {}, 60_000);
    console.log("serving");`;
  return ManagedProcess.start({
    name: "a holder link",
    command: process.execPath,
    args: ["--import", "tsx", "--input-type=module", "-e", script],
    cwd: BUILD_ROOT,
    ready: /^serving$/,
  });
}

function pausedHolderSuite(name: string, skip: string | undefined, optionsFor: () => Promise<(instanceId: string) => ClusterOptions>) {
  describe(`the holder link on ${name}, with a holder paused`, skip === undefined ? {} : { skip }, () => {
    it("a resume its sender gave up on while the holder was paused is dropped when it wakes; a cancel is carried out", async () => {
      const options = await optionsFor();
      const sender = await createCluster(options("sender"));
      const holder = await holderProcess(options("paused"));
      const out = () => holder.printed;
      try {
        let taken = 0;
        assert.deepEqual(await sender.link.send("paused", resume, { onTaken: () => taken++ }), { ok: true });
        assert.equal(taken, 1, "the sender was told the holder took the resume");
        await eventually(async () => out().includes("handled resume"), "the awake holder carried it out");

        holder.pause();
        try {
          const silent = sender.link.send("paused", resume, { timeoutMs: 500, onTaken: () => taken++ });
          const cancelled = sender.link.send("paused", cancel, { timeoutMs: 500 });
          assert.equal(await silent, undefined, "a paused holder says nothing");
          assert.equal(await cancelled, undefined);
        } finally {
          holder.resume();
        }
        await eventually(
          async () => out().includes("dropped resume: its sender did not say it still waits within 500 ms"),
          "the woken holder dropped the resume nobody waits for",
          10_000,
        );
        assert.equal(out().match(/handled resume/g)?.length, 1, `the stale resume was not carried out:\n${out()}`);
        assert.equal(taken, 1, "the sender was not told it was taken");
        await eventually(async () => out().includes("handled cancel"), "the woken holder carried out the cancel");
      } finally {
        await holder.kill();
        await sender.close();
      }
    });
  });
}

pausedHolderSuite("Redis", REDIS_SKIP, async () => {
  const url = await testRedisUrl();
  const prefix = `taskgate-test:${randomUUID()}`;
  return (instanceId) => ({ kind: "redis", url, prefix, instanceId, leaseMs: 10_000, commandTimeoutMs: 5_000 });
});

pausedHolderSuite("PostgreSQL", POSTGRES_SKIP, async () => {
  const url = await freshDatabase();
  return (instanceId) => ({ kind: "postgres", url, instanceId, leaseMs: 10_000, commandTimeoutMs: 5_000 });
});
