// One V8 setting for a process that serves requests: no allocation-site pretenuring. V8 watches
// which object literals' objects outlive a young-generation collection and, past a threshold,
// allocates that literal's objects in old space from then on. A request's objects live a few
// milliseconds, but when a collection catches many in flight V8 judges their literals long-lived;
// every young object stored into such an old-space object then survives young collections until
// the next full one, and with it all it references: about a third of everything a call allocated
// was promoted, and scavenges paused 5–10 ms (docs/benchmarks.md, decisions/0036). Set by
// startGateway() before the first request, so no literal has been judged yet; the collector reads
// the flag at each young collection, where it makes those judgements.

import { setFlagsFromString } from "node:v8";

let tuned = false;

export function tuneHeapForRequests(): void {
  if (tuned) return;
  tuned = true;
  setFlagsFromString("--no-allocation-site-pretenuring");
}
