// Summaries of samples (nearest-rank percentiles, mean, median of per-round figures) and the
// plain-text table and goal lines every scenario prints. Numbers only; no I/O.

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function summarise(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    mean: sorted.length === 0 ? NaN : sorted.reduce((sum, v) => sum + v, 0) / sorted.length,
  };
}

/** The middle value, or the mean of the two middle ones for an even count (the nearest-rank p50 would take the lower one:
 *  of eight per-round figures, the fourth smallest). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const half = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[half]! : (sorted[half - 1]! + sorted[half]!) / 2;
}

// ---- formatting ------------------------------------------------------------------------------

export const fixed = (value: number, digits = 3) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
export const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : "n/a");
export const mib = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MiB`;
export const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** A right-aligned table; the first column is left-aligned. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

export type Goal = { kind: "atMost"; limit: number; unit?: string } | { kind: "atLeast"; limit: number; unit?: string };

/** "label  measured  goal ≤ 1.5x  met|MISSED" — the figure the team must move, next to its target. */
export function goalLine(label: string, measured: number, shown: string, goal: Goal): string {
  let target: string;
  let met: boolean;
  switch (goal.kind) {
    case "atMost":
      target = `goal ≤ ${goal.limit}${goal.unit ?? "x"}`;
      met = measured <= goal.limit;
      break;
    case "atLeast":
      target = `goal ≥ ${goal.limit}${goal.unit ?? "x"}`;
      met = measured >= goal.limit;
      break;
  }
  const verdict = Number.isFinite(measured) ? (met ? "met" : "MISSED") : "not measured";
  // A ratio that rounds to its limit gets a third digit: "1.10x  goal ≤ 1.1x  MISSED" would read as a contradiction.
  const text = shown === ratio(goal.limit) ? `${measured.toFixed(3)}x` : shown;
  return `  GOAL ${label.padEnd(44)} ${text.padStart(12)}   ${target.padEnd(20)} ${verdict}`;
}
