// A HolderLink whose hops are traced: each command sent to another instance is a client span whose
// trace context travels inside the command (`trace`, W3C keys), and the holder serves it in a
// server span continuing that trace, so a tasks/update answered on instance A and delivered to the
// holder B stays one trace. Used only while tracing is on (the link is not wrapped otherwise).

import { SpanKind } from "@opentelemetry/api";
import { extractContext, inSpan, outgoingMeta } from "../observability/tracing.js";
import type { HolderCommand, HolderLink, HolderReply } from "./holderLink.js";

type Carried = HolderCommand & { trace?: Record<string, string> };

export function tracedHolderLink(link: HolderLink): HolderLink {
  return {
    serve: (handler) =>
      link.serve((command: Carried) => {
        const { trace, ...bare } = command;
        return inSpan(`holder_link serve ${command.kind}`, attributesOf(command), () => handler(bare as HolderCommand), {
          kind: SpanKind.SERVER,
          ...(trace ? { parent: extractContext(trace) } : {}),
        });
      }),
    send: (holder, command, options) =>
      inSpan(
        `holder_link send ${command.kind}`,
        { ...attributesOf(command), "taskgate.holder": holder },
        async (span): Promise<HolderReply | undefined> => {
          const reply = await link.send(holder, { ...command, trace: outgoingMeta() } as Carried, options);
          span.setAttribute("taskgate.holder_link.answered", reply !== undefined);
          return reply;
        },
        { kind: SpanKind.CLIENT },
      ),
    close: () => link.close(),
  };
}

function attributesOf(command: HolderCommand): Record<string, string> {
  const found: Record<string, string> = { "taskgate.holder_link.command": command.kind };
  if ("taskId" in command) found["taskgate.task.id"] = command.taskId;
  if ("method" in command) found["mcp.method.name"] = command.method;
  return found;
}
