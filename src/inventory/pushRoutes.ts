// The Web Push routes of the inventory: the VAPID public key browsers subscribe with (404 when Web
// Push is off), and adding or removing the caller's push subscription (kept in the task store; a
// store that fails is a 503 naming it). Answers never carry keys other than the public one.

import type { ServerResponse } from "node:http";
import type express from "express";
import type { Notifier } from "../notify/notifier.js";
import { parseSubscription } from "../notify/pushSubscriptions.js";
import { inventoryError } from "../protocol/errors.js";
import { isObject } from "../util/json.js";
import { sendInventoryJson } from "./inventoryCaller.js";
import type { CallerRoute } from "./inventoryRoutes.js";

export function pushRoutes(notifier: Notifier): Array<{ method: "get" | "post" | "delete"; path: string; handle: CallerRoute }> {
  const publicKey = (): string => {
    const key = notifier.vapidPublicKey;
    if (key === undefined) throw inventoryError("not_found", "Web Push is off on this gateway (notify.webPush is not set)");
    return key;
  };
  return [
    {
      method: "get",
      path: "/notify/vapid-public-key",
      handle: async (_caller, _req, res) => sendInventoryJson(res, 200, { publicKey: publicKey() }),
    },
    {
      method: "post",
      path: "/notify/push-subscriptions",
      handle: async (caller, req: express.Request, res: ServerResponse) => {
        publicKey();
        await notifier.subscribe(caller.owner, caller.identity, parseSubscription(req.body));
        sendInventoryJson(res, 201, { subscribed: true });
      },
    },
    {
      method: "delete",
      path: "/notify/push-subscriptions",
      handle: async (caller, req: express.Request, res: ServerResponse) => {
        const endpoint = isObject(req.body) ? req.body.endpoint : undefined;
        if (typeof endpoint !== "string")
          throw inventoryError("bad_request", 'the body must be {"endpoint": "<the subscription\'s endpoint>"}');
        await notifier.unsubscribe(caller.owner, new URL(endpoint).href);
        res.writeHead(204, { "Cache-Control": "no-store" }).end();
      },
    },
  ];
}
