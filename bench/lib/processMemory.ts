// Resident set size of another process, read from /proc (Linux only; 0 elsewhere or when gone).

import { readFileSync } from "node:fs";

export function rssOf(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
