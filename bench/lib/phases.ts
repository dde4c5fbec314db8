// Preload (BENCH_PHASES=1, `--import` into each process in the middle): where one call's time goes
// inside that process, on one-call-at-a-time traffic. It marks four moments per call:
//   A  the HTTP server's `request` event (headers parsed),
//   B  the first write on an outgoing socket after A (the upstream request, or a stdio server's stdin),
//   C  the first bytes read on an outgoing socket after B (the upstream's answer begins),
//   D  the first write on the client's socket after C (the response),
// and keeps per call B−A (to the upstream), D−C (back to the client) and D−A. It patches node:net
// and node:http prototypes, so it is a diagnostic only: never loaded unless asked for, and its
// figures hold for sequential blocks only (with calls in flight the moments interleave).
// A role hands the samples over and starts afresh on `phases` (serveRole.ts).

import { Server } from "node:http";
import { Socket } from "node:net";
import { Readable } from "node:stream";

export interface PhaseSamples {
  toUpstream: number[];
  fromUpstream: number[];
  inside: number[];
}

let samples: PhaseSamples = { toUpstream: [], fromUpstream: [], inside: [] };
let arrived = 0;
let sent = 0;
let answered = 0;

type Patchable = { server?: unknown; _writeGeneric: (...args: unknown[]) => unknown; push: (...args: unknown[]) => boolean };
const socketProto = Socket.prototype as unknown as Patchable;

const emit = Server.prototype.emit;
Server.prototype.emit = function (this: Server, event: string | symbol, ...args: unknown[]) {
  if (event === "request") {
    arrived = performance.now();
    sent = 0;
    answered = 0;
  }
  return (emit as (this: Server, ...all: unknown[]) => boolean).call(this, event, ...args);
} as Server["emit"];

const writeGeneric = socketProto._writeGeneric;
socketProto._writeGeneric = function (this: Patchable, ...args: unknown[]) {
  const now = performance.now();
  if (!this.server) {
    if (arrived && !sent) sent = now;
  } else if (arrived && answered) {
    samples.toUpstream.push(sent - arrived);
    samples.fromUpstream.push(now - answered);
    samples.inside.push(now - arrived);
    arrived = 0;
  }
  return writeGeneric.apply(this, args);
};

const push = Readable.prototype.push;
socketProto.push = function (this: Patchable, ...args: unknown[]) {
  if (args[0] && !this.server && sent && !answered) answered = performance.now();
  return push.apply(this as unknown as Readable, args as Parameters<Readable["push"]>);
};

/** The samples since the last take (the role's `phases` answer). */
(globalThis as { __benchPhases?: { take(): PhaseSamples } }).__benchPhases = {
  take() {
    const taken = samples;
    samples = { toUpstream: [], fromUpstream: [], inside: [] };
    return taken;
  },
};
