// SessionLedger: which upstream sessions each taskgate instance holds, kept where the task store
// keeps its data, so that after a crash (kill -9: no chance to close anything) the next start can
// close the sessions the dead process left and the upstream stops their calls. Best effort: an
// entry written just before a crash may be missing; a stale entry only costs a DELETE the
// upstream answers 404. memory store: nothing survives a crash, so nothing is kept.
// In a fleet each backend has its own ledger (scoped(name)): a leftover session id is closed on
// the upstream that opened it, never sent to another backend.

export interface SessionLedger {
  /** This instance holds `sessionId` now. */
  add(sessionId: string): void;
  /** ... and no longer. */
  remove(sessionId: string): void;
  /** Sessions held by instances that are gone (`isAlive` false), forgotten as they are returned. */
  takeLeftovers(isAlive: (instanceId: string) => Promise<boolean>): Promise<string[]>;
  /** The ledger of backend `name`, kept apart from this one and from every other backend's. */
  scoped(name: string): SessionLedger;
  close(): Promise<void>;
}

export class NoSessionLedger implements SessionLedger {
  add(): void {}
  remove(): void {}
  async takeLeftovers(): Promise<string[]> {
    return [];
  }
  scoped(): SessionLedger {
    return this;
  }
  async close(): Promise<void> {}
}
