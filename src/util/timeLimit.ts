// timeLimit: waits with an end. limit(work, ms, describe) settles like `work`, or rejects with
// new Error(describe()) once `ms` have passed without an answer (a store's wait). `work` itself goes
// on (a command already sent to Redis or a write already handed to the disk cannot be taken back),
// so the message must say the outcome is unknown where that matters. withDeadline(work, ms,
// fallback) resolves with `fallback` instead: for waits whose end is an answer too.

export function limit<T>(work: Promise<T>, ms: number, describe: () => string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(describe())), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** `promise`, or `fallback` once `ms` passed. */
export async function withDeadline<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
