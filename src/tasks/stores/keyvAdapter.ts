// keyvAdapter: the keyv storage adapter for a store.uri, loaded from the package the operator
// installed beside taskgate (taskgate depends on none of them): sqlite:// → @keyv/sqlite,
// postgres:// and postgresql:// → @keyv/postgres, mysql:// → @keyv/mysql, redis:// and rediss:// →
// @keyv/redis, valkey:// → @keyv/valkey, mongodb:// and mongodb+srv:// → @keyv/mongo, etcd:// →
// @keyv/etcd. Each is constructed with the uri. An unknown scheme or a missing package fails the
// start with what to install.

import type { KeyvStoreAdapter } from "keyv";

const PACKAGES: Record<string, string> = {
  sqlite: "@keyv/sqlite",
  postgres: "@keyv/postgres",
  postgresql: "@keyv/postgres",
  mysql: "@keyv/mysql",
  redis: "@keyv/redis",
  rediss: "@keyv/redis",
  valkey: "@keyv/valkey",
  mongodb: "@keyv/mongo",
  "mongodb+srv": "@keyv/mongo",
  etcd: "@keyv/etcd",
};

type AdapterClass = new (uri: string) => KeyvStoreAdapter;

export async function keyvAdapterFor(uri: string): Promise<KeyvStoreAdapter> {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase();
  const name = scheme === undefined ? undefined : PACKAGES[scheme];
  if (name === undefined) {
    throw new Error(
      `store.uri ${JSON.stringify(uri.replace(/\/\/[^@/]*@/, "//***@"))}: no keyv adapter for this scheme; ` +
        `use one of ${Object.keys(PACKAGES).join(", ")}`,
    );
  }
  let loaded: { default?: unknown };
  try {
    loaded = (await import(name)) as { default?: unknown };
  } catch (error) {
    throw new Error(`store.uri with ${scheme}:// needs the keyv adapter ${name}: install it beside taskgate (npm install ${name})`, {
      cause: error,
    });
  }
  const Adapter = loaded.default as AdapterClass | undefined;
  if (typeof Adapter !== "function") throw new Error(`${name} has no default export to construct a keyv adapter from`);
  return new Adapter(uri);
}
