// Runs one third-party MCP server as a real child process on a given loopback port: a minimal
// environment (server-everything's get-env tool returns its whole process.env), every listen
// forced onto 127.0.0.1 by the loopbackOnly preload, readiness = a log line seen within a time
// limit (else an error with the log tail), stop = SIGTERM then SIGKILL, always reaped (all through the
// one launcher, ManagedProcess), and a restart on the same port. Output lines (stdout and stderr) are kept for tests to wait on.

import { preloadArgs } from "../fixtureModules.js";
import { ManagedProcess } from "../processes.js";
import { REPO } from "../repoRoot.js";

export interface ServerLaunch {
  /** Used in every message about this server. */
  name: string;
  /** Node arguments that run the server (its script first, then its own arguments); with `command`, that program's. */
  args: string[];
  /** A program other than node (no loopback preload then: the server must bind 127.0.0.1 itself). */
  command?: string;
  /** Environment variable the server reads its port from. */
  portVariable: string;
  /** A stdout or stderr line that says the server accepts connections. */
  ready: RegExp;
  /** Path of its MCP endpoint (default /mcp). */
  path?: string;
  /** Extra environment, on top of the minimal one. */
  env?: Record<string, string>;
  /** How long the readiness line may take (default REAL_SERVER_READY_TIMEOUT_MS, else 30 s). */
  readyTimeoutMs?: number;
}

export interface ServerProcess {
  readonly name: string;
  readonly port: number;
  /** http://127.0.0.1:<port><path> */
  readonly url: string;
  /** Process id of the running child (changes on restart). */
  readonly pid: number | undefined;
  /** Every output line so far, across restarts (stderr lines start with "stderr: "). */
  readonly lines: readonly string[];
  /**
   * Resolves with the first line from index `from` on (default: lines still to come) that
   * matches; rejects after `timeoutMs` with the log tail.
   */
  waitForLine(
    match: RegExp | ((line: string) => boolean),
    options?: { timeoutMs?: number; from?: number; signal?: AbortSignal },
  ): Promise<string>;
  /** Stops the server and starts it again on the same port; resolves once it is ready again. */
  restart(): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

const READY_TIMEOUT_MS = Number(process.env.REAL_SERVER_READY_TIMEOUT_MS ?? 30_000);
const TAIL_LINES = 25;

/** Only what node needs: no secrets, no TASKGATE_*, no NODE_OPTIONS of the test runner. */
function minimalEnv(launch: ServerLaunch, port: number): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", NODE_ENV: "test", [launch.portVariable]: String(port), ...launch.env };
}

export async function startServerProcess(launch: ServerLaunch, port: number): Promise<ServerProcess> {
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  let child: ManagedProcess | undefined;
  const tail = () => lines.slice(-TAIL_LINES).join("\n");
  const push = (line: string) => {
    lines.push(line);
    for (const listener of [...listeners]) listener(line);
  };

  const waitForLine: ServerProcess["waitForLine"] = (match, options = {}) => {
    const test = typeof match === "function" ? match : (line: string) => match.test(line);
    const timeoutMs = options.timeoutMs ?? 10_000;
    const earlier = lines.slice(options.from ?? lines.length).find(test);
    if (earlier !== undefined) return Promise.resolve(earlier);
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        listeners.delete(listener);
        options.signal?.removeEventListener("abort", onAbort);
      };
      const listener = (line: string) => {
        if (!test(line)) return;
        done();
        resolve(line);
      };
      const onAbort = () => {
        done();
        reject(new Error(`${launch.name}: stopped waiting for ${String(match)}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(`${launch.name}: no output line matching ${String(match)} within ${timeoutMs} ms; last lines:\n${tail() || "(none)"}`),
        );
      }, timeoutMs);
      listeners.add(listener);
      options.signal?.addEventListener("abort", onAbort, { once: true });
    });
  };

  const start = async () => {
    child = await ManagedProcess.start({
      name: launch.name,
      command: launch.command ?? process.execPath,
      args: launch.command ? launch.args : [...preloadArgs("loopbackOnly"), ...launch.args],
      cwd: REPO,
      env: minimalEnv(launch, port),
      ready: launch.ready,
      startTimeoutMs: launch.readyTimeoutMs ?? READY_TIMEOUT_MS,
      labelStderr: true,
      onLine: push,
    });
  };

  const stop = async (graceMs = 3000): Promise<void> => {
    await child?.stop("SIGTERM", graceMs);
  };

  await start();
  return {
    name: launch.name,
    port,
    url: `http://127.0.0.1:${port}${launch.path ?? "/mcp"}`,
    get pid() {
      return child?.child.pid;
    },
    lines,
    waitForLine,
    async restart() {
      await stop();
      push(`--- ${launch.name} restarted ---`);
      await start();
    },
    stop,
  };
}
