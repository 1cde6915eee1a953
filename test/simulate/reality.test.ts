/**
 * Cross-check with reality: the demo pod run for real (`probelet run`, real processes, real
 * probes, 40 s) and simulated with a script that mirrors what the demo's processes do
 * (examples/simulate/demo-behaviour.yaml) must tell the same story: the same sequence of
 * lifecycle events (Created, Started, Killing, BackOff) per container at times within 1 s,
 * the same kinds of probe failures, and the same restart counts. Uses the demo's fixed ports.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from '../cli/helpers.js';
import { exitCode, nothingLeft, scratch, startRun, type Scratch } from '../cli/run-child.js';

const SPAN_S = 40;
/** Events this close to the end may fall either side of it. */
const EDGE_S = 2;
const LIFECYCLE = new Set(['Created', 'Started', 'Killing', 'BackOff']);

interface Line {
  type: string;
  t?: number;
  event?: { reason?: string; message?: string; involvedObject: { fieldPath?: string } };
  pod?: { status?: { containerStatuses?: { name: string; restartCount: number }[] } };
}

interface Happening {
  container: string;
  reason: string;
  t: number;
}

let s: Scratch;
beforeEach(() => {
  s = scratch();
});
afterEach(() => {
  s.cleanup();
});

function containerOf(line: Line): string {
  return /\{(.*)\}$/.exec(line.event?.involvedObject.fieldPath ?? '')?.[1] ?? '';
}

function story(lines: Line[]): { lifecycle: Happening[]; failures: string[]; restarts: Record<string, number> } {
  const events = lines.filter((l) => l.type === 'event' && (l.t ?? 0) < SPAN_S - EDGE_S);
  const lifecycle = events
    .filter((l) => LIFECYCLE.has(l.event?.reason ?? ''))
    .map((l) => ({ container: containerOf(l), reason: l.event?.reason ?? '', t: l.t ?? 0 }));
  const failures = [
    ...new Set(events.filter((l) => l.event?.reason === 'Unhealthy').map((l) => `${containerOf(l)}: ${/^(\w+ probe failed)/.exec(l.event?.message ?? '')?.[1] ?? ''}`)),
  ].sort();
  const restarts: Record<string, number> = {};
  for (const l of lines) {
    if (l.type !== 'pod' || (l.t ?? 0) >= SPAN_S - EDGE_S) continue;
    for (const c of l.pod?.status?.containerStatuses ?? []) restarts[c.name] = c.restartCount;
  }
  return { lifecycle, failures, restarts };
}

it('the demo pod simulated tells the same story as the demo pod run for real over 40 s', async () => {
  const run = startRun(s, ['examples/demo/pod.yaml', '--listen', '127.0.0.1:0', '--output', 'json', '--timeout', `${SPAN_S}s`]);
  const real: Line[] = [];
  let origin: number | undefined;
  let buffered = '';
  run.child.stdout?.on('data', (text: string) => {
    const now = performance.now();
    buffered += text;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const part of parts) {
      if (!part.startsWith('{')) continue;
      const line = JSON.parse(part) as Line;
      if (line.type === 'run') continue;
      origin ??= now;
      real.push({ ...line, t: (now - origin) / 1000 });
    }
  });
  expect(await exitCode(run, (SPAN_S + 30) * 1000)).toBe(0);
  expect(await nothingLeft(run.marker)).toBe(true);

  const simulated = await runCli(['simulate', 'examples/demo/pod.yaml', '--behavior', 'examples/simulate/demo-behaviour.yaml', '--for', `${SPAN_S}s`, '-o', 'json']);
  expect(simulated.code).toBe(0);
  const sim = simulated.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);

  const a = story(real);
  const b = story(sim);
  expect(b.lifecycle.map((h) => `${h.container} ${h.reason}`)).toEqual(a.lifecycle.map((h) => `${h.container} ${h.reason}`));
  b.lifecycle.forEach((h, i) => expect(Math.abs(h.t - (a.lifecycle[i]?.t ?? Infinity)), `${h.container} ${h.reason}`).toBeLessThanOrEqual(1));
  expect(b.failures).toEqual(a.failures);
  expect(b.restarts).toEqual(a.restarts);
  // The story is not empty: the app was killed for its liveness probe and restarted.
  expect(a.lifecycle.some((h) => h.container === 'app' && h.reason === 'Killing')).toBe(true);
  expect(a.restarts['app']).toBe(1);
}, 120_000);
