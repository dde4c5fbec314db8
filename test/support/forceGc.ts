// A full garbage collection on demand, without starting node with --expose-gc: a busy gateway
// collects at any moment, and a wait whose end the collector can take away must be seen to fail.

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

export function forceGc(): void {
  gc();
}
