// Registers plan_release: one form question whose requestedSchema uses every field kind a form
// elicitation may carry (strings with format/length/pattern, a bounded integer and number, a
// boolean, a plain enum, a titled oneOf, a multi-select, defaults, required fields), so a client's
// form generator and taskgate's answer check can be tried against all of them at once.

import type { ElicitRequestFormParams } from "@modelcontextprotocol/sdk/types.js";
import type { SessionContext } from "./state.js";
import { runTool, text } from "./toolkit.js";

// `pattern` is beyond the SDK's type of a requestedSchema (JSON Schema allows it; taskgate checks it): hence the cast.
export const RELEASE_FORM = {
  type: "object",
  properties: {
    version: {
      type: "string",
      title: "Version",
      description: "Semantic version, e.g. 1.4.0",
      pattern: "^\\d+\\.\\d+\\.\\d+$",
      minLength: 5,
      maxLength: 20,
    },
    contact: { type: "string", title: "Contact email", format: "email" },
    environment: {
      type: "string",
      title: "Environment",
      oneOf: [
        { const: "staging", title: "Staging" },
        { const: "production", title: "Production" },
      ],
    },
    canary: { type: "integer", title: "Canary percent", minimum: 1, maximum: 100, default: 10 },
    errorBudget: { type: "number", title: "Error budget", description: "Share of failed requests tolerated", minimum: 0, maximum: 0.5 },
    size: { type: "string", title: "Machine size", enum: ["S", "M", "L"], default: "M" },
    regions: { type: "array", title: "Regions", items: { type: "string", enum: ["eu", "us", "ap"] }, minItems: 1, default: ["eu"] },
    notify: { type: "boolean", description: "Notify the team", default: true },
  },
  required: ["version", "environment", "regions"],
} as ElicitRequestFormParams["requestedSchema"];

export function registerFormTools(session: SessionContext): void {
  session.mcp.registerTool(
    "plan_release",
    { description: "Asks for a release's settings in one form (every field kind), then answers with what it got.", inputSchema: {} },
    (_args, extra) =>
      runTool(session, "plan_release", extra, async (run) => {
        const outcome = await run.askForm("Release settings?", RELEASE_FORM);
        if (outcome.action !== "accept") return text(`No release (${outcome.action}).`);
        return text(`Release planned: ${JSON.stringify(outcome.content)}`);
      }),
  );
}
