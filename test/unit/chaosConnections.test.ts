// The chaos users' connections, through the real balancer to a real HTTP server. The balancer
// decides a connection's network faults when it joins it to an instance, and the checker counts a
// transport failure as a violation unless a fault was on around its request, so each request must
// travel on a connection opened for it. undici's pooled dispatcher does not quite do that:
// aborting a running request (a listen stream the user replaces) makes it open a spare connection
// that stays open, idle, with whatever fault was on when it was opened.

import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Balancer, type NetworkFault } from "../../chaos/balancer.js";
import { call, listen } from "../../chaos/client.js";
import { Rng } from "../../chaos/rng.js";

// Longer than any cut's byte allowance (at most 600 bytes from the instance), so a cut connection never delivers it.
const ANSWER = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { pad: "x".repeat(1_000) } });
const CUT: NetworkFault = { kind: "cut", share: 1 };

/** Answers /stream with an SSE stream left open, anything else with ANSWER. */
function instance(): Server {
  return createServer((req, res) => {
    req.resume();
    if (req.url?.startsWith("/stream")) {
      res.writeHead(200, { "Content-Type": "text/event-stream" }).write(": open\n\n");
      return;
    }
    req.once("end", () => res.writeHead(200, { "Content-Type": "application/json" }).end(ANSWER));
  });
}

/** Resolves with the faults of the `n`-th connection the balancer joins from now on. */
function nthSplice(balancer: Balancer, n: number): Promise<NetworkFault[]> {
  return new Promise((resolve) => {
    let seen = 0;
    const onSplice = (faults: NetworkFault[]) => {
      if (++seen < n) return;
      balancer.off("splice", onSplice);
      resolve(faults);
    };
    balancer.on("splice", onSplice);
  });
}

describe("chaos users' connections through the balancer", () => {
  let server: Server;
  let balancer: Balancer;

  before(async () => {
    server = instance();
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    balancer = new Balancer(() => [port], new Rng(1));
    await balancer.start();
  });

  after(async () => {
    await balancer.close();
    server.closeAllConnections();
    server.close();
  });

  it("a replaced listen stream leaves no connection open, and the next request gets one of its own, joined with no fault", async () => {
    const stream = listen(`${balancer.url}/stream`, ["t1"], "id00", () => undefined);
    await nthSplice(balancer, 1); // the stream is open, joined with no fault on
    balancer.faults.add(CUT);
    stream.close();
    assert.equal(await stream.ended, "closed by the user");
    balancer.faults.delete(CUT);
    await balancer.settled(2_000); // a pool keeps a spare open for 4 s
    assert.deepEqual(balancer.describeOpen(), [], "the replaced stream left no connection open for a later request");
    const connections = balancer.counts.connections;
    const joined = nthSplice(balancer, 1);
    const reply = await call(balancer.url, "tasks/get", { taskId: "t1" }, "id00", {}, 10_000);
    assert.deepEqual(await joined, [], "the request's own connection was joined with no fault on");
    assert.ok(balancer.counts.connections > connections);
    assert.equal(reply.outcome, "ok", JSON.stringify(reply));
  });

  it("a request cut on its way names its connection, and the balancer tells that connection's story", async () => {
    balancer.faults.add(CUT);
    const reply = await call(balancer.url, "tasks/get", { taskId: "t1" }, "id00", {}, 10_000);
    balancer.faults.delete(CUT);
    assert.equal(reply.outcome, "transport", JSON.stringify(reply));
    const failure = reply.outcome === "transport" ? reply.failure : "";
    const port = /\[connection :(\d+), \d+ B sent, 0 B read\]/.exec(failure)?.[1];
    assert.ok(port, failure);
    const story = balancer.story(Number(port), Date.now()) ?? "";
    assert.match(story, /^accepted at \S+, joined to :\d+ at \S+ with cut after (\d+) B, cut after \d+ B at \S+$/);
    assert.equal(balancer.story(Number(port), 0), undefined, "no connection from that port had come by then");
  });
});
