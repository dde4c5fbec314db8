// FileSessionLedger: the SessionLedger of the file store (one process per store file): a sidecar
// "<store.path>.sessions" of lines "+<id>" / "-<id>", appended without fsync (best effort). At
// start everything it lists belongs to the previous process, which is gone: those ids are the
// leftovers, and the file starts over. Only the first look finds any: later ones (taskgate looks
// every lease) would otherwise take this process's own sessions. A fleet backend's ledger is "<store.path>.sessions.<name>".

import { appendFile, readFile, writeFile } from "node:fs/promises";
import type { Logger } from "pino";
import type { SessionLedger } from "./sessionLedger.js";

export class FileSessionLedger implements SessionLedger {
  private chain: Promise<void> = Promise.resolve();
  private taken = false;
  private readonly scopes = new Map<string, FileSessionLedger>();

  constructor(
    private readonly file: string,
    private readonly log: Logger,
  ) {}

  add(sessionId: string): void {
    this.append(`+${sessionId}\n`);
  }

  remove(sessionId: string): void {
    this.append(`-${sessionId}\n`);
  }

  async takeLeftovers(): Promise<string[]> {
    if (this.taken) return [];
    this.taken = true;
    let text = "";
    try {
      text = await readFile(this.file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    const open = new Set<string>();
    for (const line of text.split("\n")) {
      if (line.startsWith("+")) open.add(line.slice(1));
      else if (line.startsWith("-")) open.delete(line.slice(1));
    }
    await writeFile(this.file, "");
    return [...open];
  }

  scoped(name: string): SessionLedger {
    let scope = this.scopes.get(name);
    if (!scope) this.scopes.set(name, (scope = new FileSessionLedger(`${this.file}.${name}`, this.log)));
    return scope;
  }

  async close(): Promise<void> {
    await Promise.all([...this.scopes.values()].map((scope) => scope.close()));
    await this.chain;
  }

  private append(line: string): void {
    this.chain = this.chain
      .then(() => appendFile(this.file, line))
      .catch((error: unknown) =>
        this.log.warn(
          { event: "upstream.ledger.failed", err: error instanceof Error ? error.message : String(error) },
          "could not note an upstream session",
        ),
      );
  }
}
