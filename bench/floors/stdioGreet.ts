// The stdio upstream of the inline scenario's stdio cases: an SDK 1.x McpServer over stdio with
// the example server's instant `greet`. Run by taskgate (upstream.command) and by the stdio floor.

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "bench-stdio-greet", version: "1.0.0" });
server.registerTool("greet", { description: "Says hello at once.", inputSchema: { name: z.string() } }, async (args) => ({
  content: [{ type: "text", text: `Hello, ${args.name}!` }],
}));
await server.connect(new StdioServerTransport());
