// Role "upstream": the example legacy server (examples/legacy-server, SDK 1.x, sessions, SSE) in
// its own process, so its CPU is not counted against taskgate. Answers "calls" with what its
// tools really did (started / finished / running, outcomes, and how many notifications/cancelled
// for a running call it received), and "waitStarted" once at least
// `count` tool calls have started (bounded by `ms`).

import { startLegacyServer } from "../../examples/legacy-server/server.js";
import type { ToolFinishedEvent } from "../../examples/legacy-server/state.js";
import { serveRole } from "./serveRole.js";

await serveRole("upstream", async () => {
  const server = await startLegacyServer({ port: 0, host: "127.0.0.1", speed: 1 });
  let started = 0;
  let finished = 0;
  let cancelsReceived = 0;
  const outcomes: Record<string, number> = {};
  const waiters = new Set<() => void>();
  server.events.on("tool-started", () => {
    started++;
    for (const wake of waiters) wake();
  });
  server.events.on("cancelled", () => cancelsReceived++);
  server.events.on("tool-finished", (event: ToolFinishedEvent) => {
    finished++;
    outcomes[event.outcome] = (outcomes[event.outcome] ?? 0) + 1;
  });
  const calls = () => ({
    started,
    finished,
    running: started - finished,
    outcomes: { ...outcomes },
    cancelsReceived,
    sessions: server.sessionCount(),
  });
  return {
    info: { url: server.url, port: server.port },
    handlers: {
      calls,
      accepted: () => server.acceptedConnections(),
      waitStarted: (args) => {
        const { count, ms } = args as { count: number; ms: number };
        return new Promise((resolve, reject) => {
          const wake = () => {
            if (started < count) return;
            waiters.delete(wake);
            clearTimeout(timer);
            resolve(calls());
          };
          const timer = setTimeout(() => {
            waiters.delete(wake);
            reject(new Error(`only ${started} of ${count} tool calls started upstream within ${ms} ms`));
          }, ms);
          waiters.add(wake);
          wake();
        });
      },
    },
    close: () => server.close(),
  };
});
