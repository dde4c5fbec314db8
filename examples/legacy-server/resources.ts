// Registers resources and prompts on one session's McpServer: example://readme, example://counter
// (value shared by all sessions; resources/subscribe + unsubscribe are tracked per session), the
// template example://months/{month} (list + completion), and prompt summarize({topic}) whose
// `topic` argument completes from a fixed list.

import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import { ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { SessionContext } from "./state.js";

export const README_URI = "example://readme";
export const COUNTER_URI = "example://counter";
export const MONTHS = ["2025-01", "2025-02", "2025-03", "2025-04", "2025-05", "2025-06"];
export const TOPICS = ["billing", "deploys", "tests"];

const startingWith = (options: string[]) => (value: string | undefined) => options.filter((o) => o.startsWith(value ?? ""));

export function registerResources(session: SessionContext): void {
  const { mcp, state } = session;

  mcp.registerResource("readme", README_URI, { title: "README", description: "What this server is.", mimeType: "text/plain" }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "An example legacy MCP server for taskgate demos." }],
  }));

  mcp.registerResource(
    "counter",
    COUNTER_URI,
    { title: "Counter", description: "A number that touch_resource increments.", mimeType: "text/plain" },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: String(state.counter) }] }),
  );

  mcp.registerResource(
    "months",
    new ResourceTemplate("example://months/{month}", {
      list: () => ({
        resources: MONTHS.map((m) => ({ uri: `example://months/${m}`, name: `month-${m}`, mimeType: "text/plain" })),
      }),
      complete: { month: startingWith(MONTHS) },
    }),
    { title: "Monthly figures", description: "Figures for one month.", mimeType: "text/plain" },
    (uri, variables) => ({
      contents: [{ uri: uri.href, mimeType: "text/plain", text: `Figures for ${String(variables.month)}: 42 orders, 3 refunds.` }],
    }),
  );

  mcp.server.setRequestHandler(SubscribeRequestSchema, (request) => {
    session.subscriptions.add(request.params.uri);
    return {};
  });
  mcp.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    session.subscriptions.delete(request.params.uri);
    return {};
  });

  mcp.registerPrompt(
    "summarize",
    {
      title: "Summarize",
      description: "Summarize recent activity on a topic.",
      argsSchema: { topic: completable(z.string().describe("What to summarize"), startingWith(TOPICS)) },
    },
    (args) => ({
      messages: [{ role: "user", content: { type: "text", text: `Please summarize recent activity on ${args.topic}.` } }],
    }),
  );
}
