// Registers the tools that ask the client something mid-call: build_report, run_suite (long, with
// progress + form elicitation), ask_url (URL elicitation), ask_sampling, list_roots, two_questions
// (two concurrent elicitations), two_rounds (two sequential ones), ask_then_work (a question, then
// a long wait), ping_then_greet (a ping first). Every question is related to the
// tool call (see ToolRun); a client lacking the capability gets the documented default instead.

import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { SessionContext } from "./state.js";
import { type AskOutcome, runTool, text } from "./toolkit.js";

/** Why a question got no usable answer, for result texts. */
function notAnswered(outcome: AskOutcome): string {
  switch (outcome.action) {
    case "decline":
      return "the user declined";
    case "cancel":
      return "the user declined (cancelled)";
    case "unavailable":
      return "the client cannot ask the user";
    case "failed":
      return `asking failed: ${outcome.error}`;
    case "accept":
      return "answered";
  }
}

function answer(outcome: AskOutcome, field: string): unknown {
  return outcome.action === "accept" ? outcome.content[field] : undefined;
}

export function registerInteractiveTools(session: SessionContext): void {
  const { mcp } = session;

  mcp.registerTool(
    "build_report",
    {
      description: "Builds a monthly report (~18 s, progress); asks whether to include charts.",
      inputSchema: { month: z.string().describe("Month, e.g. 2025-01") },
    },
    (args, extra) =>
      runTool(session, "build_report", extra, async (run) => {
        await run.work("Collecting data", 8, 0, 18);
        const outcome = await run.askForm("Include charts?", {
          type: "object",
          properties: {
            charts: { type: "boolean", title: "Include charts", description: "Add charts to the report" },
          },
          required: ["charts"],
        });
        const charts = answer(outcome, "charts") === true;
        await run.work("Rendering report", 10, 8, 18);
        const how = charts ? "charts included" : "without charts";
        const why = outcome.action === "accept" ? "" : ` (${notAnswered(outcome)}; default: no charts)`;
        return text(`Report for ${args.month}: 42 orders, 3 refunds, ${how}${why}.`);
      }),
  );

  mcp.registerTool(
    "run_suite",
    { description: "Runs the test suite (~25 s, progress); asks whether to deploy despite flaky tests.", inputSchema: {} },
    (_args, extra) =>
      runTool(session, "run_suite", extra, async (run) => {
        await run.work("Running tests", 18, 0, 25);
        const outcome = await run.askForm("3 flaky tests failed. Deploy anyway?", {
          type: "object",
          properties: { deploy: { type: "boolean", title: "Deploy", description: "Deploy despite the failures" } },
          required: ["deploy"],
        });
        const deploy = answer(outcome, "deploy") === true;
        await run.work(deploy ? "Deploying" : "Cleaning up", 7, 18, 25);
        return text(deploy ? "Deployed." : "Not deployed: 3 flaky tests failed.");
      }),
  );

  mcp.registerTool(
    "ask_url",
    { description: "Asks the user to authorize via a URL (URL-mode elicitation).", inputSchema: {} },
    (_args, extra) =>
      runTool(session, "ask_url", extra, async (run) => {
        const elicitationId = randomUUID();
        const outcome = await run.askUrl({
          message: "Authorize access to the example service",
          url: `https://example.com/authorize?session=${encodeURIComponent(extra.sessionId ?? "none")}&id=${elicitationId}`,
          elicitationId,
        });
        if (outcome.action !== "accept") return text("Not authorized.");
        await run.wait(1000); // the user completes the flow out of band
        await run.completeUrlElicitation(elicitationId);
        return text("Authorized.");
      }),
  );

  mcp.registerTool(
    "ask_sampling",
    { description: "Asks the client's model (sampling/createMessage).", inputSchema: { prompt: z.string() } },
    (args, extra) =>
      runTool(session, "ask_sampling", extra, async (run) => {
        const reply = await run.sample(args.prompt);
        return text(reply ? `Model said: ${reply.text}` : "No model available.");
      }),
  );

  mcp.registerTool("list_roots", { description: "Lists the client's roots (roots/list).", inputSchema: {} }, (_args, extra) =>
    runTool(session, "list_roots", extra, async (run) => {
      const roots = await run.listRoots();
      if (!roots) return text("No roots.");
      return text(`Roots: ${roots.length > 0 ? roots.join(", ") : "(none)"}`);
    }),
  );

  mcp.registerTool("two_questions", { description: "Asks two questions at the same time.", inputSchema: {} }, (_args, extra) =>
    runTool(session, "two_questions", extra, async (run) => {
      const [colour, size] = await Promise.all([
        run.askForm("Pick a colour", {
          type: "object",
          properties: { colour: { type: "string", title: "Colour" } },
          required: ["colour"],
        }),
        run.askForm("Pick a size", {
          type: "object",
          properties: { size: { type: "string", title: "Size", enum: ["S", "M", "L"] } },
          required: ["size"],
        }),
      ]);
      const show = (o: AskOutcome, f: string) => String(answer(o, f) ?? "unknown");
      return text(`colour=${show(colour, "colour")}, size=${show(size, "size")}`);
    }),
  );

  mcp.registerTool("two_rounds", { description: "Asks for a first name, then for a last name.", inputSchema: {} }, (_args, extra) =>
    runTool(session, "two_rounds", extra, async (run) => {
      const first = await run.askForm("First name?", {
        type: "object",
        properties: { first: { type: "string", title: "First name" } },
        required: ["first"],
      });
      if (first.action !== "accept") return text(`Hello, stranger! (${notAnswered(first)})`);
      const last = await run.askForm("Last name?", {
        type: "object",
        properties: { last: { type: "string", title: "Last name" } },
        required: ["last"],
      });
      const name = [answer(first, "first"), answer(last, "last")].filter((p) => p !== undefined).join(" ");
      return text(`Hello, ${name}!`);
    }),
  );

  mcp.registerTool(
    "ask_then_work",
    {
      description:
        "Asks for a name at once, then works `ms` milliseconds (default 10000) before greeting: a question before any task exists.",
      inputSchema: { ms: z.number().int().min(0).optional() },
    },
    (args, extra) =>
      runTool(session, "ask_then_work", extra, async (run) => {
        const asked = await run.askForm("Your name?", {
          type: "object",
          properties: { name: { type: "string", title: "Name" } },
          required: ["name"],
        });
        await run.wait(args.ms ?? 10_000);
        return text(`Hello, ${answer(asked, "name") ?? `stranger (${notAnswered(asked)})`}!`);
      }),
  );

  mcp.registerTool(
    "ping_then_greet",
    { description: "Pings the client mid-call (a legacy server checking it is alive), then greets.", inputSchema: { name: z.string() } },
    (args, extra) =>
      runTool(session, "ping_then_greet", extra, async (run) => {
        await run.pingClient();
        return text(`Pinged, then: Hello, ${args.name}!`);
      }),
  );
}
