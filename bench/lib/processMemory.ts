// Resident set size and CPU time of another process, read from /proc (Linux only; 0 elsewhere or
// when gone). Used for processes the bench does not run as a role (stdio server processes).

import { readFileSync } from "node:fs";

export function rssOf(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

/** User + system CPU ms the process used so far (10 ms resolution), 0 when unreadable. */
export function cpuMsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
  } catch {
    return 0;
  }
}
