// timeLimit: a store's wait with an end. limit(work, ms, describe) settles like `work`, or rejects
// with new Error(describe()) once `ms` have passed without an answer. `work` itself goes on (a
// command already sent to Redis or a write already handed to the disk cannot be taken back), so the
// message must say the outcome is unknown where that matters.

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
