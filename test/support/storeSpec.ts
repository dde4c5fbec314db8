// A task store named by one string, so the crash child and its parent open the same one:
//   postgres://…            the postgres store on that database (instance id "crash")
//   keyv:<uri>[#namespace]  the keyv store over the adapter for <uri>
//   anything else           the file store at that path (minRewriteBytes optional)

import { openPostgresPool } from "../../src/cluster/postgresConnection.js";
import { createTaskStore } from "../../src/tasks/stores/createTaskStore.js";
import { keyvAdapterFor } from "../../src/tasks/stores/keyvAdapter.js";
import type { TaskStore } from "../../src/tasks/taskStore.js";

export async function openStoreSpec(spec: string, minRewriteBytes?: number): Promise<TaskStore> {
  if (spec.startsWith("postgres://")) {
    return createTaskStore({
      kind: "postgres",
      connect: () => openPostgresPool({ url: spec, commandTimeoutMs: 5_000 }),
      instanceId: "crash",
    });
  }
  if (spec.startsWith("keyv:")) {
    const [uri, namespace] = spec.slice("keyv:".length).split("#");
    return createTaskStore({ kind: "keyv", adapter: await keyvAdapterFor(uri!), label: uri!, ...(namespace ? { namespace } : {}) });
  }
  return createTaskStore({ kind: "file", path: spec, ...(minRewriteBytes !== undefined ? { minRewriteBytes } : {}) });
}
