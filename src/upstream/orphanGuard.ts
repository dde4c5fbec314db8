// OrphanGuard: makes sure no server process outlives taskgate, even after `kill -9` of taskgate.
// One small `sh` per taskgate (not per server) reads "+<pgid>" / "-<pgid>" lines on its stdin as
// server processes start and end. Only taskgate holds the other end of that pipe, so however
// taskgate ends, the guard reads end-of-file and then signals every process group still listed
// (SIGTERM, then SIGKILL after a grace). Each server runs in a process group of its own, so
// whatever it started itself (npx → node, a shell → python) goes too. The guard ignores
// SIGINT/SIGTERM/SIGHUP so a Ctrl-C in a terminal leaves it to do this job; it is detached so
// it survives taskgate. POSIX only: on Windows nothing is guarded.

import { type ChildProcess, spawn } from "node:child_process";
import type { Logger } from "pino";

const SCRIPT = `
trap '' INT TERM HUP
groups=""
while IFS= read -r line; do
  case "$line" in
    +*) groups="$groups \${line#+}" ;;
    -*) gone="\${line#-}"; keep=""; for g in $groups; do [ "$g" = "$gone" ] || keep="$keep $g"; done; groups="$keep" ;;
  esac
done
[ -z "$groups" ] && exit 0
for g in $groups; do kill -s TERM -- "-$g" 2>/dev/null; done
sleep "$1"
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
`;

export class OrphanGuard {
  private guard?: ChildProcess | undefined;

  constructor(
    /** Seconds between SIGTERM and SIGKILL once taskgate is gone. */
    private readonly graceSeconds: number,
    private readonly log: Logger,
  ) {}

  /** Whether this platform has process groups to guard (POSIX). */
  static get supported(): boolean {
    return process.platform !== "win32";
  }

  /** The process group `pgid` (a server started detached) is to be ended with taskgate. */
  watch(pgid: number): void {
    this.tell(`+${pgid}`);
  }

  /** The process group `pgid` ended: forget it (its number may be reused). */
  forget(pgid: number): void {
    this.tell(`-${pgid}`);
  }

  /** taskgate is stopping cleanly (every server already stopped): the guard exits. */
  close(): void {
    this.guard?.stdin?.end();
    this.guard = undefined;
  }

  private tell(line: string): void {
    if (!OrphanGuard.supported) return;
    const stdin = this.started().stdin;
    if (stdin?.writable) stdin.write(`${line}\n`);
  }

  private started(): ChildProcess {
    if (this.guard) return this.guard;
    const guard = spawn("/bin/sh", ["-c", SCRIPT, "taskgate-orphan-guard", String(this.graceSeconds)], {
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
    });
    guard.on("error", (error) =>
      this.log.warn(
        { event: "upstream.guard.failed", err: error.message },
        "the guard that stops server processes with taskgate could not start",
      ),
    );
    guard.stdin?.on("error", () => undefined); // gone: nothing more to tell it
    // Neither the guard nor its pipe keeps taskgate's event loop alive.
    guard.unref();
    (guard.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    this.guard = guard;
    return guard;
  }
}
