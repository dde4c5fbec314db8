// Which client capability an upstream question needs, and whether the request declared it.
// A question of a kind the client did not declare is never shown to it.

import type { ClientCapabilities, InputRequest } from "../protocol/wire.js";

/** The ClientCapabilities fragment the question needs but the client did not declare, if any. */
export function missingCapabilityFor(request: InputRequest, declared: ClientCapabilities): Record<string, unknown> | undefined {
  switch (request.method) {
    case "elicitation/create": {
      const elicitation = declared.elicitation;
      const url = (request.params as { mode?: string }).mode === "url";
      if (!elicitation) return { elicitation: url ? { url: {} } : { form: {} } };
      if (url) return elicitation.url ? undefined : { elicitation: { url: {} } };
      // {} alone means form; url alone does not.
      return elicitation.form || !elicitation.url ? undefined : { elicitation: { form: {} } };
    }
    case "sampling/createMessage":
      return declared.sampling ? undefined : { sampling: {} };
    case "roots/list":
      return declared.roots ? undefined : { roots: {} };
  }
}
