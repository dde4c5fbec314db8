// PostgresTaskBus: the TaskBus across instances on one PostgreSQL database. publish() NOTIFYs the
// record JSON on taskgate_task_changes (a large record through taskgate_messages, see
// PostgresChannels); every instance LISTENs there (its own messages included, so a local subscriber
// gets each record exactly once, via PostgreSQL) and fans them out by task id. One instance's
// records arrive in the order it published them.

import type { PostgresChannels } from "./postgresChannels.js";
import { type Announced, RemoteTaskBus } from "./taskBus.js";

const CHANNEL = "taskgate_task_changes";

export class PostgresTaskBus<R extends Announced = Announced> extends RemoteTaskBus<R> {
  private constructor(
    private readonly channels: PostgresChannels,
    onError: (error: Error) => void,
  ) {
    super(onError);
  }

  /** Resolves once listening: every record published after that reaches this bus. The channels are closed by their owner. */
  static async open<R extends Announced = Announced>(
    channels: PostgresChannels,
    onError: (error: Error) => void,
  ): Promise<PostgresTaskBus<R>> {
    const bus = new PostgresTaskBus<R>(channels, onError);
    await channels.listen(CHANNEL, (message) => bus.deliver(message));
    return bus;
  }

  protected send(message: string): Promise<unknown> {
    return this.channels.notify(CHANNEL, message);
  }
}
