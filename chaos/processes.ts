// What runs on this machine, read from /proc (Linux): a process's children, its resident memory and
// environment, and every process whose command line names a given file (the stdio upstreams), for the fault
// schedule (which server process to freeze) and the final "nothing left running" check.

import { readdirSync, readFileSync } from "node:fs";

interface Proc {
  pid: number;
  ppid: number;
  state: string;
  cmdline: string;
}

function read(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const tail = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
    return { pid, state: tail[0] ?? "?", ppid: Number(tail[1]), cmdline };
  } catch {
    return undefined; // gone meanwhile
  }
}

export function allProcesses(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const proc = read(Number(name));
    if (proc) out.push(proc);
  }
  return out;
}

/** Live processes whose command line contains `needle`, with their parent pids (zombies left out). */
export function processesNaming(needle: string): Proc[] {
  return allProcesses().filter((p) => p.cmdline.includes(needle) && p.state !== "Z");
}

/** The environment `pid` was started with ({} if it is gone or not ours to read). */
export function environmentOf(pid: number): Record<string, string> {
  try {
    const pairs = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    return Object.fromEntries(
      pairs.filter((pair) => pair.includes("=")).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
    );
  } catch {
    return {};
  }
}

/** Resident memory of `pid` in bytes (0 if it is gone). */
export function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kb === undefined ? 0 : Number(kb) * 1024;
  } catch {
    return 0;
  }
}
