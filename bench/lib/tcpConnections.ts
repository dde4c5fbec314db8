// Counts the TCP connections a process holds to a local port, from /proc (Linux): the socket
// inodes among /proc/<pid>/fd, matched against /proc/net/tcp and tcp6 entries whose remote port
// is `port`. Returns counts by TCP state (ESTABLISHED, CLOSE_WAIT, …), so a connection the peer
// closed but the process never did shows up as such.

import { readdirSync, readFileSync, readlinkSync } from "node:fs";

const STATES: Record<string, string> = {
  "01": "ESTABLISHED",
  "02": "SYN_SENT",
  "03": "SYN_RECV",
  "04": "FIN_WAIT1",
  "05": "FIN_WAIT2",
  "06": "TIME_WAIT",
  "07": "CLOSE",
  "08": "CLOSE_WAIT",
  "09": "LAST_ACK",
  "0A": "LISTEN",
  "0B": "CLOSING",
};

export interface Connections {
  total: number;
  byState: Record<string, number>;
}

function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  const dir = `/proc/${pid}/fd`;
  for (const fd of readdirSync(dir)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`${dir}/${fd}`));
      if (match) inodes.add(match[1]!);
    } catch {
      // The fd closed while we looked.
    }
  }
  return inodes;
}

export function connectionsTo(pid: number, port: number): Connections {
  const inodes = socketInodes(pid);
  const byState: Record<string, number> = {};
  let total = 0;
  const portHex = port.toString(16).toUpperCase().padStart(4, "0");
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const remote = fields[2]!;
      if (!remote.endsWith(`:${portHex}`) || !inodes.has(fields[9]!)) continue;
      const state = STATES[fields[3]!] ?? fields[3]!;
      byState[state] = (byState[state] ?? 0) + 1;
      total++;
    }
  }
  return { total, byState };
}

export const describeConnections = (c: Connections) =>
  `${c.total}` +
  (Object.keys(c.byState).some((s) => s !== "ESTABLISHED")
    ? ` (${Object.entries(c.byState)
        .map(([s, n]) => `${s} ${n}`)
        .join(", ")})`
    : "");

/** The soft limit on open files of a process (Max open files in /proc/<pid>/limits). */
export function openFileLimit(pid: number | "self" = "self"): number {
  const line = readFileSync(`/proc/${pid}/limits`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("Max open files"));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === undefined || soft === "unlimited" ? Infinity : Number(soft);
}
