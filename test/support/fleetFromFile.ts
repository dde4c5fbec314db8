// A taskgate started in process from a configuration file, as `taskgate serve --config` starts a
// fleet: the file lives in a fresh temp folder, is watched (unless the text says otherwise) and read
// again on reload(). Every file written starts with demo auth, a free port and no shutdown grace;
// the test writes the rest (backends, reload, federation). close() closes the gateway and removes
// the folder.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/loadConfig.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";

const HEAD = "auth: { mode: demo }\nport: 0\nshutdown: { graceMs: 0 }\n";

export interface FleetFromFile {
  gateway: Gateway;
  /** http://127.0.0.1:<port> */
  base: string;
  /** Rewrites the file: HEAD, then `rest`. */
  write(rest: string): void;
  close(): Promise<void>;
}

/** Writes HEAD + `rest` to a new file (its folder named after `label`) and starts taskgate from it. */
export async function startFleetFromFile(label: string, rest: string): Promise<FleetFromFile> {
  const dir = mkdtempSync(join(tmpdir(), `taskgate-${label}-`));
  const file = join(dir, "taskgate.yaml");
  const write = (text: string) => writeFileSync(file, `${HEAD}${text}`);
  try {
    write(rest);
    const gateway = await startGateway(loadConfig({ file }), {
      log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent"),
      configFile: file,
      reloadConfig: () => loadConfig({ file }),
    });
    return {
      gateway,
      base: `http://127.0.0.1:${gateway.port}`,
      write,
      async close() {
        await gateway.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
