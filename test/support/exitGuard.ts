// failIfStillRunning(): once every test of the file has finished, the file's process must end. If
// something a test started is still running (a taskgate whose close() hung on a dead Redis, a
// reconnect loop), the test runner would wait for it forever; instead the file fails (exit 1)
// after `graceMs`, naming what was left. Call it once at the top level of a test file.

import { after } from "node:test";

export function failIfStillRunning(graceMs = 5_000): void {
  after(() => {
    setTimeout(() => {
      const left = process.getActiveResourcesInfo().filter((kind) => kind !== "TTYWrap");
      process.stderr.write(`still running ${graceMs} ms after the last test: ${left.join(", ")}; failing the file\n`);
      process.exit(1);
    }, graceMs).unref();
  });
}
