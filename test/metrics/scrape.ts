// Reads GET /metrics as a scraper does. The families come from parse-prometheus-text-format
// (it throws on a malformed line); the samples are read line by line here, because that parser
// folds a histogram's label sets into one (its flattenMetrics), and the tests need each.
import { execFileSync, spawnSync } from 'node:child_process';
import { expect } from 'vitest';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import type { TestApp } from '../helpers/app.ts';
import { ADMIN } from '../helpers/frames.ts';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function samplesOf(text: string): Sample[] {
  return text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((line) => {
      const m = LINE.exec(line);
      if (!m) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(LABEL)].map((l) => [l[1], l[2]]));
      return { name: m[1] as string, labels, value: Number(m[3]) };
    });
}

export function parseMetrics(text: string) {
  const families = parsePrometheusTextFormat(text);
  const samples = samplesOf(text);
  return {
    text,
    families,
    samples,
    /** The value of the one sample of `name` whose labels include `labels`; undefined if none. */
    value(name: string, labels: Record<string, string> = {}) {
      const found = samples.filter(
        (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
      );
      expect(found.length, `${name} ${JSON.stringify(labels)}`).toBeLessThanOrEqual(1);
      return found[0]?.value;
    },
  };
}

export async function scrape(t: TestApp) {
  const r = await t.get('/metrics', { token: ADMIN });
  expect(r.status, r.text).toBe(200);
  return parseMetrics(r.text);
}

/** `promtool check metrics` on `text`: its complaints, or undefined when promtool is absent. */
export function promtoolProblems(text: string): string | undefined {
  if (spawnSync('sh', ['-c', 'command -v promtool']).status !== 0) return undefined;
  try {
    execFileSync('promtool', ['check', 'metrics'], { input: text, stdio: 'pipe' });
    return '';
  } catch (err) {
    const e = err as { stdout?: Buffer; stderr?: Buffer };
    return `${e.stdout?.toString() ?? ''}${e.stderr?.toString() ?? ''}`;
  }
}
