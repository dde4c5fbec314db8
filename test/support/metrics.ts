// Reads a running taskgate's GET /metrics the way Prometheus does (over HTTP, text format) and
// looks samples up by name and labels, so tests observe what an operator sees instead of internal
// counters. The sample-line reader is written here on purpose: the npm parser for this format
// (parse-prometheus-text-format 1.1.1) merges every labelled histogram into one series and drops
// its _count and _sum, which these tests read.

import assert from "node:assert/strict";

export type Labels = Record<string, string>;

export interface Sample {
  name: string;
  labels: Labels;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export class Scrape {
  constructor(
    readonly text: string,
    readonly samples: Sample[],
  ) {}

  /** The sample with exactly this name and these labels, or undefined. */
  find(name: string, labels: Labels = {}): number | undefined {
    const wanted = Object.entries(labels);
    const sample = this.samples.find(
      (s) => s.name === name && Object.keys(s.labels).length === wanted.length && wanted.every(([k, v]) => s.labels[k] === v),
    );
    return sample?.value;
  }

  /** Like find(), but the sample must exist. */
  value(name: string, labels: Labels = {}): number {
    const value = this.find(name, labels);
    assert.notEqual(value, undefined, `no sample ${name}${JSON.stringify(labels)} in /metrics`);
    return value!;
  }

  /** The sum of every sample of `name` whose labels include `labels`. */
  sum(name: string, labels: Labels = {}): number {
    const wanted = Object.entries(labels);
    return this.samples
      .filter((s) => s.name === name && wanted.every(([k, v]) => s.labels[k] === v))
      .reduce((total, s) => total + s.value, 0);
  }
}

export function parseMetrics(text: string): Scrape {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = SAMPLE.exec(line);
    assert.ok(match, `not a sample line: ${line}`);
    const labels: Labels = {};
    for (const [, key, raw] of (match[2] ?? "").matchAll(LABEL))
      labels[key!] = raw!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return new Scrape(text, samples);
}

/** GET /metrics of the gateway whose MCP endpoint is `url`. */
export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(new URL("/metrics", url));
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return parseMetrics(await response.text());
}

/** Scrapes until the sample `name{labels}` satisfies `check` (a number: equals it); the last scrape. */
export async function waitForMetric(
  url: string,
  name: string,
  labels: Labels,
  check: number | ((value: number) => boolean),
  timeoutMs = 5_000,
): Promise<Scrape> {
  const ok = typeof check === "number" ? (v: number) => v === check : check;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const scraped = await scrape(url);
    const value = scraped.find(name, labels);
    if (value !== undefined && ok(value)) return scraped;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${name}${JSON.stringify(labels)} ${typeof check === "number" ? `= ${check}` : "to match"}; last: ${value}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
