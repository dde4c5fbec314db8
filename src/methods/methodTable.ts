// The 2026-07-28 methods and their handlers, behind the router's gates: one table, built from the
// parts the handlers use (the upstream's pool and catalog, the call owner, task access, listen
// streams) and the cache hints of cacheable results.

import type { UpstreamAccess } from "../access/upstreamAccess.js";
import { ownerHashOf } from "../auth/identity.js";
import type { CallDesk } from "../calls/callDesk.js";
import { resultReply } from "../protocol/reply.js";
import type { JsonObject } from "../protocol/wire.js";
import type { Subscriptions } from "../subscriptions/subscriptions.js";
import type { TaskAccess } from "../tasks/taskAccess.js";
import type { BackendEra } from "../upstream/backendEra.js";
import type { UpstreamCatalog } from "../upstream/upstreamCatalog.js";
import type { UpstreamCredentials } from "../upstream/upstreamCredentials.js";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import { isObject } from "../util/json.js";
import { discoverResult } from "./discover.js";
import { EraRouter } from "./eraRouter.js";
import type { MethodHandler, MethodRequest } from "./handler.js";
import { listenHandler } from "./listen.js";
import { modernHandlers } from "./modernMethods.js";
import type { ModernBackend } from "./modernRelay.js";
import { readHandler } from "./reads.js";
import { type CacheHints, relayHandler } from "./relay.js";
import { MethodRouter } from "./router.js";
import { tasksHandlers } from "./tasks.js";
import { toolCallHandler } from "./toolCall.js";

export interface MethodParts {
  upstream: { pool: UpstreamPool; catalog: UpstreamCatalog; era: BackendEra; credentials: UpstreamCredentials };
  desk: CallDesk;
  access: TaskAccess;
  subscriptions: Subscriptions;
  cache: CacheHints;
  /** Who may see and call what, and the approvals calls need. */
  policy: UpstreamAccess;
}

export function createMethodRouter(parts: MethodParts): MethodRouter {
  const { pool, catalog } = parts.upstream;
  /** The upstream's capabilities as the caller's session sees them. */
  const upstreamInfo = (request: MethodRequest) => pool.info(ownerHashOf(request.identity));
  const relay = relayHandler(pool, parts.cache, parts.policy);
  const read = readHandler(parts.desk, parts.cache, parts.policy);
  const handlers: Record<string, MethodHandler> = {
    "server/discover": async (request) => resultReply(discoverResult(await upstreamInfo(request), parts.cache)),
    "tools/list": relay,
    "prompts/list": relay,
    "prompts/get": read,
    "resources/list": relay,
    "resources/templates/list": relay,
    "resources/read": read,
    "completion/complete": relay,
    "tools/call": toolCallHandler(parts.desk, catalog, parts.policy),
    "subscriptions/listen": listenHandler(parts.subscriptions),
    ...tasksHandlers(parts.access),
  };
  return new MethodRouter(handlers, (request) => pool.infoNow()?.capabilities ?? upstreamInfo(request).then((info) => info.capabilities));
}

/** The router of each era behind one EraRouter: the legacy table, and the modern one when the backend can be spoken to in 2026-07-28. */
export function createEraRouter(parts: MethodParts, backend: ModernBackend | undefined): EraRouter {
  const { era, credentials } = parts.upstream;
  const legacy = createMethodRouter(parts);
  const discover = (): JsonObject => era.current?.discover ?? {};
  const modern = backend
    ? new MethodRouter(modernHandlers({ ...parts, backend, discover }), async () => {
        const caps = discover().capabilities;
        return isObject(caps) ? caps : {};
      })
    : legacy;
  return new EraRouter(era, { legacy, modern }, (owner) => credentials.headersFor(owner));
}
