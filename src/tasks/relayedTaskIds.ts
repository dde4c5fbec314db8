// The ids of tasks a modern backend made itself, as the client sees them: the backend's task id and
// its owner's hash, sealed with AES-256-GCM under a key derived from mrtr.secret (random per process
// when unset, like requestState). So the id is useless to any other identity (opening it names
// another owner: the same "Task not found" as an unknown id), cannot be forged or altered, and needs
// nothing stored: any instance with the same secret opens it. The same task always gets the same
// id (the IV is derived from the sealed claims, as in SIV), so polls and notifications agree. Prefixed `rt.` so taskgate's own task
// ids (base64url, no dot) are told apart at a glance; in a fleet the backend's name follows
// (`rt.<backend>.…`, sealed too), so the federated endpoint routes the id without opening it.
// Header-safe (base64url; backend names are [a-z0-9-]).

import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";

const PREFIX = "rt.";
const IV_BYTES = 12;
const TAG_BYTES = 16;
const INFO = "taskgate relayed task id";

export interface RelayedTask {
  /** The backend's own task id. */
  backendTaskId: string;
  /** Owner hash of the identity that created it. */
  owner: string;
}

export class RelayedTaskIds {
  private readonly key: Buffer;
  private readonly ivKey: Buffer;

  /** `backend`: the fleet backend whose tasks these are (none for the single upstream). */
  constructor(
    secret: string | undefined,
    private readonly backend?: string,
  ) {
    const material = secret === undefined ? randomBytes(32) : Buffer.from(secret, "utf8");
    this.key = Buffer.from(hkdfSync("sha256", material, Buffer.alloc(0), INFO, 32));
    this.ivKey = Buffer.from(hkdfSync("sha256", material, Buffer.alloc(0), `${INFO} iv`, 32));
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
    const claims = JSON.stringify({ t: task.backendTaskId, o: task.owner, b: this.backend ?? null });
    const iv = createHmac("sha256", this.ivKey).update(claims).digest().subarray(0, IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const body = Buffer.concat([cipher.update(claims, "utf8"), cipher.final()]);
    return this.prefix + Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
  }

  /** The task behind `taskId` when it is `owner`'s; undefined for anything else (unknown, altered, another owner's). */
  open(taskId: string, owner: string): RelayedTask | undefined {
    if (!taskId.startsWith(this.prefix)) return undefined;
    const bytes = Buffer.from(taskId.slice(this.prefix.length), "base64url");
    if (bytes.length <= IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
      const claims = JSON.parse(plain.toString("utf8")) as { t?: unknown; o?: unknown; b?: unknown };
      if (typeof claims.t !== "string" || claims.o !== owner || claims.b !== (this.backend ?? null)) return undefined;
      return { backendTaskId: claims.t, owner };
    } catch {
      return undefined;
    }
  }
}
