// Follows a task a modern backend made itself (a relayed task id) for a listen stream: its state
// is read with tasks/get on the backend, with the owner's credentials, at the task's own
// pollIntervalMs (250 ms – 5 s), and a notifications/tasks frame goes out when its status or its
// open questions change, until a terminal status. Polling, because a backend need not offer task
// notifications (the v2 SDK's listen does not); what the client gets is the same DetailedTask as
// from tasks/get. A backend that stops answering ends the follow after FAILED_POLLS tries, logged.

import type { Logger } from "pino";
import { type JsonObject, type TaskStatus, TERMINAL_STATUSES } from "../protocol/wire.js";
import type { BackendTasks } from "../tasks/backendTasks.js";

const MIN_POLL_MS = 250;
const MAX_POLL_MS = 5_000;
const FAILED_POLLS = 5;

export interface RelayedFollow {
  /** The task's state now (the first frame after the acknowledgement). */
  current: JsonObject;
  /** Starts pushing later states to `onTask`; returns the way to stop. */
  follow(onTask: (task: JsonObject) => void): () => void;
}

const shapeOf = (task: JsonObject): string =>
  `${String(task.status)}:${Object.keys((task.inputRequests as JsonObject | undefined) ?? {})
    .sort()
    .join(",")}`;

const pollMs = (task: JsonObject): number =>
  Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, typeof task.pollIntervalMs === "number" ? task.pollIntervalMs : 1_000));

export class RelayedTaskFeed {
  constructor(
    /** Where a relayed task is read (one backend's tasks, or the federated endpoint's router over them). */
    private readonly tasks: Pick<BackendTasks, "get">,
    private readonly log: Logger,
  ) {}

  /** The follow of `owner`'s relayed task `taskId`, or undefined when it is not one the owner may see. */
  async open(owner: string, taskId: string): Promise<RelayedFollow | undefined> {
    let current: JsonObject;
    try {
      current = await this.tasks.get(owner, taskId);
    } catch {
      return undefined; // unknown, another owner's, or the backend does not answer: not honoured
    }
    const { resultType: _complete, ...first } = current;
    return { current: first, follow: (onTask) => this.poll(owner, taskId, first, onTask) };
  }

  private poll(owner: string, taskId: string, first: JsonObject, onTask: (task: JsonObject) => void): () => void {
    let stopped = TERMINAL_STATUSES.has(first.status as TaskStatus);
    let timer: NodeJS.Timeout | undefined;
    let shape = shapeOf(first);
    let failures = 0;
    const next = (after: number) => {
      if (!stopped) timer = setTimeout(() => void tick(), after);
    };
    const tick = async () => {
      try {
        const { resultType: _complete, ...task } = await this.tasks.get(owner, taskId);
        failures = 0;
        if (stopped) return;
        if (shapeOf(task) !== shape) {
          shape = shapeOf(task);
          onTask(task);
        }
        if (TERMINAL_STATUSES.has(task.status as TaskStatus)) stopped = true;
        next(pollMs(task));
      } catch (error) {
        failures += 1;
        if (failures >= FAILED_POLLS) {
          stopped = true;
          this.log.warn(
            { event: "subscriptions.relayed.lost", taskId, err: String(error) },
            "backend task no longer answers: not followed",
          );
        }
        next(pollMs(first));
      }
    };
    next(pollMs(first));
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }
}
