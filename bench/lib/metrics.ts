// Reads one sample of taskgate's GET /metrics (Prometheus text format) the way an operator's
// scrape would: by name and exact labels, 0 when the series is absent.

export interface Scraped {
  /** The sample `name{labels}` (labels in any order), or 0. */
  value(name: string, labels?: Record<string, string>): number;
}

export async function scrapeMetrics(url: string): Promise<Scraped> {
  const response = await fetch(new URL("/metrics", url));
  if (response.status !== 200) throw new Error(`GET /metrics: HTTP ${response.status}`);
  const samples = new Map<string, number>();
  for (const line of (await response.text()).split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match) continue;
    const labels = [...(match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => `${k}=${v}`);
    samples.set(`${match[1]}{${labels.sort().join(",")}}`, Number(match[3]));
  }
  return {
    value: (name, labels = {}) =>
      samples.get(
        `${name}{${Object.entries(labels)
          .map(([k, v]) => `${k}=${v}`)
          .sort()
          .join(",")}}`,
      ) ?? 0,
  };
}
