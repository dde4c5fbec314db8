// The ids of tasks a modern backend made itself, as the client sees them: the backend's task id and
// its owner's hash, sealed (util/sealedClaims.ts: AES-256-GCM, a key derived from mrtr.secret, random per process
// when unset, like requestState). So the id is useless to any other identity (opening it names
// another owner: the same "Task not found" as an unknown id), cannot be forged or altered, and needs
// nothing stored: any instance with the same secret opens it. The same task always gets the same
// id (the IV is derived from the sealed claims, as in SIV), so polls and notifications agree. Prefixed `rt.` so taskgate's own task
// ids (base64url, no dot) are told apart at a glance; in a fleet the backend's name follows
// (`rt.<backend>.…`, sealed too), so the federated endpoint routes the id without opening it.
// Header-safe (base64url; backend names are [a-z0-9-]).

import { SealedClaims } from "../util/sealedClaims.js";

const PREFIX = "rt.";
const INFO = "taskgate relayed task id";

export interface RelayedTask {
  /** The backend's own task id. */
  backendTaskId: string;
  /** Owner hash of the identity that created it. */
  owner: string;
}

export class RelayedTaskIds {
  private readonly sealed: SealedClaims;

  /** `backend`: the fleet backend whose tasks these are (none for the single upstream). */
  constructor(
    secret: string | undefined,
    private readonly backend?: string,
  ) {
    this.sealed = new SealedClaims(secret, INFO);
  }

  static isRelayed(taskId: string): boolean {
    return taskId.startsWith(PREFIX);
  }

  /** The fleet backend a relayed id names (undefined for the single upstream's, or any other id). */
  static backendOf(taskId: string): string | undefined {
    return /^rt\.([a-z0-9-]+)\./.exec(taskId)?.[1];
  }

  private get prefix(): string {
    return this.backend ? `${PREFIX}${this.backend}.` : PREFIX;
  }

  wrap(task: RelayedTask): string {
    return this.prefix + this.sealed.seal({ t: task.backendTaskId, o: task.owner, b: this.backend ?? null });
  }

  /** The task behind `taskId` when it is `owner`'s; undefined for anything else (unknown, altered, another owner's). */
  open(taskId: string, owner: string): RelayedTask | undefined {
    if (!taskId.startsWith(this.prefix)) return undefined;
    const claims = this.sealed.open(taskId.slice(this.prefix.length));
    if (typeof claims?.t !== "string" || claims.o !== owner || claims.b !== (this.backend ?? null)) return undefined;
    return { backendTaskId: claims.t, owner };
  }
}
