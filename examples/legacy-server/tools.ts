// Registers the simple tools on one session's McpServer: greet, forecast (x-mcp-header
// arguments), fail_tool, broken_tool (a true JSON-RPC error, via rawErrorTools), slow_echo
// (cancellable; with progressMs it streams progress while it waits), log_steps (log messages on
// the call's stream), toggle_beta (adds/removes `beta` on EVERY live session, so each gets
// tools/list_changed) and touch_resource (bumps example://counter and sends resources/updated to
// subscribed sessions) and deploy (a stand-in for a call someone must approve: its "deployed"
// event says what it received). Interactive tools live in interactiveTools.ts.

import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { registerFormTools } from "./formTools.js";
import { registerInteractiveTools } from "./interactiveTools.js";
import { JsonRpcError, routeRawTools } from "./rawErrorTools.js";
import { COUNTER_URI } from "./resources.js";
import type { SessionContext, SharedState } from "./state.js";
import { type Extra, runTool, type ToolRun, text } from "./toolkit.js";

export function registerTools(session: SessionContext): void {
  const { mcp, state } = session;

  mcp.registerTool(
    "greet",
    { title: "Greet", description: "Says hello at once.", inputSchema: { name: z.string().describe("Who to greet") } },
    (args, extra) => runTool(session, "greet", extra, async () => text(`Hello, ${args.name}!`)),
  );

  mcp.registerTool(
    "forecast",
    {
      description: "A forecast for a region; `region` is mirrored in the Mcp-Param-Region header (x-mcp-header).",
      inputSchema: {
        region: z.string().meta({ "x-mcp-header": "Region" }).describe("Region name"),
        days: z.number().int().min(1).max(7).optional().meta({ "x-mcp-header": "Days" }),
      },
    },
    (args, extra) =>
      runTool(session, "forecast", extra, async () => text(`Forecast for ${args.region}: sunny for ${args.days ?? 1} day(s).`)),
  );

  mcp.registerTool("fail_tool", { description: "Always returns a tool error (isError: true).", inputSchema: {} }, (_args, extra) =>
    runTool(session, "fail_tool", extra, async () => text("The tool failed on purpose", true)),
  );

  const brokenTool = (extra: Extra) =>
    runTool(session, "broken_tool", extra, async () => {
      throw new JsonRpcError(ErrorCode.InternalError, "broken_tool always fails");
    });
  mcp.registerTool(
    "broken_tool",
    { description: "Always fails with a JSON-RPC error (-32603).", inputSchema: {} },
    (_args, extra) => brokenTool(extra), // listed here; calls are routed to brokenTool by routeRawTools
  );

  mcp.registerTool(
    "slow_echo",
    {
      description:
        "Waits `ms` milliseconds (default 3000), then echoes `text`; with `progressMs`, sends progress that often meanwhile. " +
        "Honours cancellation.",
      inputSchema: {
        text: z.string(),
        ms: z.number().int().min(0).optional(),
        progressMs: z.number().int().min(1).optional().describe("Progress every this many ms while waiting"),
      },
    },
    (args, extra) =>
      runTool(session, "slow_echo", extra, async (run) => {
        const ms = args.ms ?? 3000;
        if (args.progressMs === undefined) await run.wait(ms);
        else await waitWithProgress(run, ms, args.progressMs);
        return text(args.text);
      }),
  );

  mcp.registerTool(
    "log_steps",
    { description: "Logs one message per level (debug, info, warning, error) on the call's stream, then returns.", inputSchema: {} },
    (_args, extra) =>
      runTool(session, "log_steps", extra, async () => {
        for (const level of ["debug", "info", "warning", "error"] as const) {
          await extra.sendNotification({
            method: "notifications/message",
            params: { level, logger: "log_steps", data: `step at ${level}` },
          });
        }
        return text("logged 4 messages");
      }),
  );

  mcp.registerTool(
    "toggle_beta",
    { description: "Registers or removes the `beta` tool (sends tools/list_changed to every session).", inputSchema: {} },
    (_args, extra) =>
      runTool(session, "toggle_beta", extra, async () => {
        state.betaEnabled = !state.betaEnabled;
        for (const live of state.sessions.values()) applyBeta(live);
        applyBeta(session); // in case this session is not (or no longer) in the map
        return text(state.betaEnabled ? "beta enabled" : "beta disabled");
      }),
  );

  mcp.registerTool("touch_resource", { description: `Changes ${COUNTER_URI} and notifies subscribers.`, inputSchema: {} }, (_args, extra) =>
    runTool(session, "touch_resource", extra, async () => {
      state.counter += 1;
      await notifyCounterSubscribers(state);
      return text(`counter is now ${state.counter}`);
    }),
  );

  mcp.registerTool(
    "deploy",
    {
      description: "Deploys `service` at `version` (a stand-in for a dangerous call; nothing is deployed).",
      inputSchema: { service: z.string(), version: z.string() },
    },
    (args, extra) =>
      runTool(session, "deploy", extra, async () => {
        state.events.emit("deployed", { service: args.service, version: args.version, sessionId: extra.sessionId });
        return text(`deployed ${args.service} ${args.version}`);
      }),
  );

  registerInteractiveTools(session);
  registerFormTools(session);
  applyBeta(session);
  routeRawTools(mcp, { broken_tool: (_request, extra) => brokenTool(extra) });
}

/** Makes this session's server match the shared beta flag (register/remove ⇒ list_changed). */
function applyBeta(session: SessionContext): void {
  if (session.state.betaEnabled && !session.beta) {
    session.beta = session.mcp.registerTool(
      "beta",
      { description: "A tool that comes and goes (see toggle_beta).", inputSchema: {} },
      (_args, extra) => runTool(session, "beta", extra, async () => text("beta says hi")),
    );
  } else if (!session.state.betaEnabled && session.beta) {
    session.beta.remove();
    session.beta = undefined;
  }
}

async function notifyCounterSubscribers(state: SharedState): Promise<void> {
  const sends = [...state.sessions.values()]
    .filter((s) => s.subscriptions.has(COUNTER_URI) && s.mcp.isConnected())
    .map((s) => s.mcp.server.sendResourceUpdated({ uri: COUNTER_URI }).catch(() => undefined));
  await Promise.all(sends);
}

/** Waits `ms` in steps of `everyMs`, reporting progress k of the steps after each (a busy, streaming call). */
async function waitWithProgress(run: ToolRun, ms: number, everyMs: number): Promise<void> {
  const steps = Math.max(1, Math.ceil(ms / everyMs));
  for (let k = 1; k <= steps; k++) {
    await run.wait(Math.min(everyMs, ms - (k - 1) * everyMs));
    await run.progress(k, steps, `waited ${k} of ${steps}`);
  }
}
