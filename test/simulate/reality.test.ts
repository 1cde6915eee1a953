/**
 * Cross-check with reality: the demo pod run for real (`probelet run`, real processes, real
 * probes, 27 s: the first liveness kill and its restart, before the second) and simulated with a script that mirrors what the demo's processes do
 * (examples/simulate/demo-behaviour.yaml) must tell the same story: the same sequence of
 * lifecycle events (Created, Started, Killing, BackOff) per container at times within 1 s (and
 * the simulated sandbox's latency),
 * the kinds of probe failures the scripts model, and the same restart counts. The demo runs on free ports
 * and its own ready file, so that it may run beside test/cli/demo.test.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { freePort } from '../e2e/helpers.js';
import { runCli } from '../cli/helpers.js';
import { SANDBOX_LATENCY } from '../../src/prober/start-latency.js';
import { exitCode, nothingLeft, scratch, startRun, type Scratch } from '../cli/run-child.js';
import { podLineReader } from '../../src/cli/run/json-lines.js';

const SPAN_S = 27;
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
  // A readiness probe within a relist (and a δ) of its container's kill may still probe the
  // killed instance — nothing listens then — on a kubelet and in the simulation alike, by phase.
  const kills = events.filter((l) => l.event?.reason === 'Killing').map((l) => ({ container: containerOf(l), t: l.t ?? 0 }));
  const atAKill = (l: Line): boolean =>
    /^Readiness/.test(l.event?.message ?? '') && kills.some((k) => k.container === containerOf(l) && (l.t ?? 0) >= k.t && (l.t ?? 0) - k.t <= 2);
  const failures = [
    ...new Set(
      events
        .filter((l) => l.event?.reason === 'Unhealthy' && !atAKill(l))
        .map((l) => `${containerOf(l)}: ${/^(\w+ probe failed)/.exec(l.event?.message ?? '')?.[1] ?? ''}`),
    ),
  ].sort();
  const restarts: Record<string, number> = {};
  const read = podLineReader();
  for (const l of lines) {
    const pod = read(l);
    if (pod === undefined || (l.t ?? 0) >= SPAN_S - EDGE_S) continue;
    for (const c of pod.status?.containerStatuses ?? []) restarts[c.name] = c.restartCount;
  }
  return { lifecycle, failures, restarts };
}

/** The demo pod on ports nobody else uses, with a ready file of its own. */
async function demoCopy(): Promise<string> {
  const [app, proxy] = [await freePort(), await freePort()];
  const text = readFileSync('examples/demo/pod.yaml', 'utf8')
    .replaceAll('18573', String(app))
    .replaceAll('18574', String(proxy))
    .replaceAll('/tmp/probelet-demo-worker-ready', join(s.dir, 'worker-ready'));
  const path = join(s.dir, 'demo.yaml');
  writeFileSync(path, text);
  return path;
}

it('the demo pod simulated tells the same story as the demo pod run for real over 27 s', async () => {
  const manifest = await demoCopy();
  const run = startRun(s, [manifest, '--listen', '127.0.0.1:0', '--output', 'json', '--timeout', `${SPAN_S}s`]);
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

  const simulated = await runCli(['simulate', manifest, '--behavior', 'examples/simulate/demo-behaviour.yaml', '--for', `${SPAN_S}s`, '-o', 'json']);
  expect(simulated.code).toBe(0);
  const sim = simulated.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);

  const a = story(real);
  const b = story(sim);
  expect(b.lifecycle.map((h) => `${h.container} ${h.reason}`)).toEqual(a.lifecycle.map((h) => `${h.container} ${h.reason}`));
  // Simulate plays a CRI node, whose first start waits for the pod's sandbox (SANDBOX_LATENCY),
  // and the process runtime has none: its starts (not its probe ticks) come that much sooner.
  const tolerance = 1 + SANDBOX_LATENCY.maxMs / 1000;
  b.lifecycle.forEach((h, i) => expect(Math.abs(h.t - (a.lifecycle[i]?.t ?? Infinity)), `${h.container} ${h.reason}`).toBeLessThanOrEqual(tolerance));
  // Every kind of probe failure simulated happened for real. Reality may add readiness
  // failures from races the scripts leave out (a probe before Node listens, or at the kill).
  expect(a.failures).toEqual(expect.arrayContaining(b.failures));
  expect(b.failures).toEqual(['app: Liveness probe failed', 'app: Startup probe failed', 'worker: Readiness probe failed']);
  expect(b.restarts).toEqual(a.restarts);
  // The story is not empty: the app was killed for its liveness probe and restarted.
  expect(a.lifecycle.some((h) => h.container === 'app' && h.reason === 'Killing')).toBe(true);
  expect(a.restarts['app']).toBe(1);
}, 120_000);
