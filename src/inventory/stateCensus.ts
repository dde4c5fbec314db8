// Tasks by state, for the operators' summary: counted over the newest CENSUS_LIMIT tasks in the store
// (every owner's index, newest first: cost bounded whatever the store holds), now and once a minute
// for the last hour (HISTORY_POINTS points, the oldest dropped: bounded memory). A store that fails
// a sample leaves a gap, logged; the summary still answers.

import type { Logger } from "pino";
import type { TaskStatus } from "../protocol/wire.js";
import { LIST_LIMIT_MAX, type TaskStore } from "../tasks/taskStore.js";

export const CENSUS_LIMIT = 2_000;
export const HISTORY_POINTS = 60;
const MINUTE_MS = 60_000;

export type ByState = Record<TaskStatus, number>;

export interface Census {
  byState: ByState;
  /** Tasks counted; `complete` false when the store holds more than CENSUS_LIMIT. */
  counted: number;
  complete: boolean;
}

const empty = (): ByState => ({ working: 0, input_required: 0, completed: 0, failed: 0, cancelled: 0 });

export async function countByState(store: Pick<TaskStore, "listAll">): Promise<Census> {
  const byState = empty();
  let counted = 0;
  let cursor: string | undefined;
  do {
    const page = await store.listAll({ limit: LIST_LIMIT_MAX, ...(cursor !== undefined ? { cursor } : {}) });
    for (const record of page.records) byState[record.status] += 1;
    counted += page.records.length;
    cursor = page.nextCursor;
  } while (cursor !== undefined && counted < CENSUS_LIMIT);
  return { byState, counted, complete: cursor === undefined };
}

export class StateHistory {
  private readonly points: Array<{ at: string; byState: ByState }> = [];
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly store: Pick<TaskStore, "listAll">,
    private readonly log: Logger,
    private readonly everyMs = MINUTE_MS,
  ) {}

  start(): void {
    void this.sample();
    this.timer = setInterval(() => void this.sample(), this.everyMs).unref();
  }

  /** The last hour, oldest first. */
  history(): Array<{ at: string; byState: ByState }> {
    return [...this.points];
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async sample(): Promise<void> {
    try {
      const { byState } = await countByState(this.store);
      this.points.push({ at: new Date().toISOString(), byState });
      if (this.points.length > HISTORY_POINTS) this.points.shift();
    } catch (error) {
      this.log.warn(
        { event: "inventory.census_failed", err: error instanceof Error ? error.message : String(error) },
        "task census failed",
      );
    }
  }
}
