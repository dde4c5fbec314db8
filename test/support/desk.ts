// The call owner's parts for unit tests, real except the upstream: a CallDesk on a memory task
// store with the local cluster seams (bus, leases, holder link), whose calls are ScriptedCalls the
// test drives. DirectHolderLink is a TEST DOUBLE of the holder link between two instances in one
// process (the real one is Redis pub/sub, tested in redisCluster.test.ts): a command goes straight
// to the other instance's handler, and a holder nobody serves is gone (undefined), as on Redis.

import { CallDesk } from "../../src/calls/callDesk.js";
import type { QuotaLimits } from "../../src/calls/callQuotas.js";
import type { CallStart } from "../../src/calls/callStarter.js";
import { ParkedCalls } from "../../src/calls/parkedCalls.js";
import { RequestStateCodec } from "../../src/calls/requestStateCodec.js";
import type { TaskSettings } from "../../src/calls/taskPolicy.js";
import { type Cluster, createCluster } from "../../src/cluster/createCluster.js";
import type { HolderCommand, HolderLink, HolderReply, SendOptions } from "../../src/cluster/holderLink.js";
import { createLogger } from "../../src/observability/logger.js";
import { RpcError } from "../../src/protocol/errors.js";
import type { RequestNote } from "../../src/protocol/requestNote.js";
import type { ClientCapabilities, JsonObject } from "../../src/protocol/wire.js";
import { createTaskStore } from "../../src/tasks/stores/createTaskStore.js";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import { TaskRecords } from "../../src/tasks/taskRecords.js";
import { TaskRunner } from "../../src/tasks/taskRunner.js";
import { ClientGone } from "../../src/util/clientGone.js";
import { ScriptedCall } from "./scriptedCall.js";

export const log = createLogger("silent");
export const SECRET = "a shared mrtr secret of at least thirty-two characters";
export const TASKS_CAPS: ClientCapabilities = { extensions: { "io.modelcontextprotocol/tasks": {} }, elicitation: {} };

export const settingsOf = (extra: Partial<TaskSettings> = {}): TaskSettings => ({
  policy: "auto",
  autoAfterMs: 60_000,
  ttlMs: 60_000,
  tools: {},
  inputKeys: {},
  ...extra,
});

export interface DeskSetup {
  desk: CallDesk;
  /** Every call started, in order. */
  calls: ScriptedCall[];
  starts: CallStart[];
  runner: TaskRunner;
  records: TaskRecords;
  parked: ParkedCalls;
  cluster: Cluster<TaskRecord>;
  instanceId: string;
}

export async function deskOf(
  options: {
    instanceId?: string;
    link?: HolderLink;
    holderAlive?: (instanceId: string) => Promise<boolean>;
    quotas?: QuotaLimits;
    settings?: Partial<TaskSettings>;
    holdTimeoutMs?: number;
  } = {},
): Promise<DeskSetup> {
  const instanceId = options.instanceId ?? "here";
  const store = await createTaskStore({ kind: "memory" });
  const cluster = await createCluster<TaskRecord>({ kind: "local", instanceId });
  const records = new TaskRecords(store, cluster.bus);
  const settings = settingsOf(options.settings);
  const runner = new TaskRunner({ records, instanceId, settings: { ...settings, pollIntervalMs: 1_000 }, log });
  const parked = new ParkedCalls(new RequestStateCodec(SECRET), options.holdTimeoutMs ?? 60_000, log, instanceId);
  const calls: ScriptedCall[] = [];
  const starts: CallStart[] = [];
  const desk = new CallDesk({
    startCall: async (start) => {
      starts.push(start);
      const call = new ScriptedCall();
      calls.push(call);
      return call;
    },
    runner,
    parked,
    link: options.link ?? cluster.link,
    holderAlive: options.holderAlive ?? ((id) => cluster.leases.isAlive(id)),
    quotas: options.quotas ?? {},
    settings,
    log,
  });
  return { desk, calls, starts, runner, records, parked, cluster, instanceId };
}

let nextId = 1;

/** A method request as the front door makes it; `leave()` is the client going away. */
export function requestOf(params: JsonObject, capabilities: ClientCapabilities = {}, meta: JsonObject = {}) {
  const gone = new ClientGone();
  const note: RequestNote = {};
  return { id: nextId++, params, meta, capabilities, gone, log, note, leave: () => gone.leave() };
}

/** tools/call of `name` as a CallOrder. */
export const toolOrder = (name: string, policy: "never" | "auto" | "always" | "required", args: JsonObject = {}) => ({
  owner: "owner-hash",
  method: "tools/call",
  name,
  args,
  upstreamParams: { name, arguments: args },
  policy,
});

/** The RpcError `promise` is refused with (fails the test when it resolves). */
export async function refusalOf(promise: Promise<unknown>): Promise<RpcError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RpcError) return error;
    throw error;
  }
  throw new Error("expected a refusal (an RpcError), but it resolved");
}

/** TEST DOUBLE: instances in one process reach each other's holder side directly. */
export class DirectHolderLink implements HolderLink {
  private static readonly served = new Map<string, (command: HolderCommand) => Promise<HolderReply>>();

  constructor(private readonly self: string) {}

  async serve(handler: (command: HolderCommand) => Promise<HolderReply>): Promise<void> {
    DirectHolderLink.served.set(this.self, handler);
  }

  async send(holder: string, command: HolderCommand): Promise<HolderReply | undefined> {
    const handler = DirectHolderLink.served.get(holder);
    return handler ? handler(structuredClone(command)) : undefined;
  }

  async close(): Promise<void> {
    DirectHolderLink.served.delete(this.self);
  }
}

interface HeldSend {
  holder: string;
  command: HolderCommand;
  options: SendOptions | undefined;
  resolve: (reply: HolderReply | undefined) => void;
}

/** TEST DOUBLE of a holder still waiting for its sender's go (the real link asks first) when the retry's client leaves: the
 *  first resume is held back until the next leave, which reaches the holder first. */
export class LeaveFirstHolderLink implements HolderLink {
  private held: HeldSend | undefined;
  private holding = true;

  constructor(private readonly inner: HolderLink) {}

  serve(handler: (command: HolderCommand) => Promise<HolderReply>): Promise<void> {
    return this.inner.serve(handler);
  }

  async send(holder: string, command: HolderCommand, options?: SendOptions): Promise<HolderReply | undefined> {
    if (command.kind === "resume" && this.holding) {
      this.holding = false;
      return new Promise((resolve) => (this.held = { holder, command, options, resolve }));
    }
    const held = command.kind === "leave" ? this.held : undefined;
    this.held = undefined;
    const reply = await this.inner.send(holder, command, options);
    if (held) held.resolve(await this.inner.send(held.holder, held.command, held.options));
    return reply;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** TEST DOUBLE of a holder that falls silent (paused; a fault a direct link cannot have): its next `silences` resumes get
 *  no reply. `taken`: each was taken (onTaken told) and carried out before the silence; else it never arrived. */
export class SilentHolderLink implements HolderLink {
  constructor(
    private readonly inner: HolderLink,
    private silences: number,
    private readonly taken: boolean,
  ) {}

  serve(handler: (command: HolderCommand) => Promise<HolderReply>): Promise<void> {
    return this.inner.serve(handler);
  }

  async send(holder: string, command: HolderCommand, options?: SendOptions): Promise<HolderReply | undefined> {
    if (command.kind !== "resume" || this.silences === 0) return this.inner.send(holder, command, options);
    this.silences--;
    if (this.taken) {
      options?.onTaken?.();
      void this.inner.send(holder, command);
    }
    return undefined;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
