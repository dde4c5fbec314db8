// Turns tracing on for this process (tracing.enabled, OTEL_SDK_DISABLED not true) and off again at
// shutdown. The SDK module is imported here, at run time, so a taskgate with tracing off never
// loads it. A bad OTEL_* setting stops the start with a message naming the variable.

import type { Logger } from "pino";
import { installTracing } from "./tracing.js";

export interface TracingSettings {
  enabled: boolean;
  serviceName: string;
}

export interface RunningTracing {
  shutdown(): Promise<void>;
}

const OFF: RunningTracing = { shutdown: async () => {} };

export async function startTracing(
  settings: TracingSettings,
  log: Logger,
  version: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunningTracing> {
  if (!settings.enabled) return OFF;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") {
    log.warn({ event: "tracing.disabled" }, "tracing.enabled is true but OTEL_SDK_DISABLED=true: tracing stays off");
    return OFF;
  }
  const { startSdk } = await import("./tracingSdk.js");
  const sdk = startSdk({ serviceName: settings.serviceName, version, env });
  installTracing(sdk.engine);
  log.info({ event: "tracing.started", exporter: sdk.exporter, sampler: env.OTEL_TRACES_SAMPLER ?? "parentbased_always_on" }, "tracing on");
  return {
    async shutdown() {
      installTracing(undefined);
      await sdk.shutdown();
    },
  };
}
