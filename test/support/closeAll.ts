// closeAll(): runs every closer, in order, even when an earlier one fails or hangs past its own
// limit, then rethrows the first failure. For after-hooks, so a taskgate whose close() fails
// (a dead store) does not leave the upstream or redis-server running.

export async function closeAll(...closers: Array<(() => unknown) | undefined>): Promise<void> {
  const failures: unknown[] = [];
  for (const close of closers) {
    try {
      await close?.();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
}
