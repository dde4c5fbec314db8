// storeLock: one process per store file. acquireStoreLock(file) creates "<file>.lock" holding
// {pid, host, process, since}, atomically (written under a private name, then hard-linked into
// place, so a lock file is never seen half-written). If the lock exists and its process still runs
// (same host: signal 0 reaches it; or it is this very process), it rejects with an error naming the
// file, the holder and what to do. A lock left by a process that is gone (a crash, a kill, or a
// container restart that reuses our pid) is stale: it is removed and taken.
// Limits: a lock written on another host cannot be checked and counts as held; two processes that
// find the same stale lock at the same instant may both take it (the check guards against starting
// a second instance by mistake, not against that race).

import { randomUUID } from "node:crypto";
import { link, open, readFile, unlink } from "node:fs/promises";
import { hostname } from "node:os";

/** Tells this process's locks apart from a previous process that had the same pid. */
const PROCESS_TOKEN = randomUUID();

interface LockContent {
  pid: number;
  host: string;
  process: string;
  since: string;
}

export interface StoreLock {
  readonly path: string;
  /** Removes the lock file if it is still ours. Never throws. */
  release(): Promise<void>;
}

export async function acquireStoreLock(file: string): Promise<StoreLock> {
  const lockPath = `${file}.lock`;
  const mine: LockContent = { pid: process.pid, host: hostname(), process: PROCESS_TOKEN, since: new Date().toISOString() };
  const release = async () => {
    try {
      if ((await readLock(lockPath))?.process === PROCESS_TOKEN) await unlink(lockPath);
    } catch {
      // gone already, or unreadable: nothing of ours to remove
    }
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await tryCreate(lockPath, mine)) return { path: lockPath, release };
    const holder = await readLock(lockPath);
    if (holder === undefined) continue; // removed between our try and the read: try again
    const busy = holderRuns(holder);
    if (busy !== undefined) {
      throw new Error(
        `task store file ${file} is in use by ${busy} (lock file ${lockPath}); only one taskgate process may use a store file. ` +
          `Stop that process, or give this one its own store.path; if no such process runs, delete the lock file.`,
      );
    }
    await unlink(lockPath).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
  }
  throw new Error(`task store file ${file}: could not take the lock file ${lockPath} (other processes keep taking it)`);
}

/** Creates the lock file with `content`; false if it already exists. */
async function tryCreate(lockPath: string, content: LockContent): Promise<boolean> {
  const draft = `${lockPath}.${PROCESS_TOKEN}`;
  const handle = await open(draft, "w");
  try {
    await handle.writeFile(JSON.stringify(content) + "\n");
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(draft, lockPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw new Error(`cannot create the task store lock file ${lockPath}: ${(error as Error).message}`, { cause: error });
  } finally {
    await unlink(draft).catch(() => undefined);
  }
}

/** The lock's content; undefined if there is no lock file. Throws on a lock file that is not ours to read. */
async function readLock(lockPath: string): Promise<LockContent | undefined> {
  let text: string;
  try {
    text = await readFile(lockPath, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const content = JSON.parse(text) as Partial<LockContent>;
    if (typeof content.pid === "number" && typeof content.host === "string" && typeof content.process === "string") {
      return content as LockContent;
    }
  } catch {
    // fall through
  }
  throw new Error(
    `task store lock file ${lockPath} is not a taskgate lock (${JSON.stringify(text.slice(0, 80))}); ` +
      "delete it if no taskgate uses the store",
  );
}

/** Who holds the lock, if that process still runs; undefined if the lock is stale. */
function holderRuns(holder: LockContent): string | undefined {
  const who = `process ${holder.pid} on ${holder.host} (since ${holder.since})`;
  if (holder.host !== hostname()) return `${who}, on another host, which cannot be checked from here`;
  if (holder.process === PROCESS_TOKEN) return `this process (the store is already open here)`;
  if (holder.pid === process.pid) return undefined; // an earlier process that had our pid (e.g. pid 1 in a container)
  try {
    process.kill(holder.pid, 0);
    return who;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM" ? who : undefined;
  }
}
