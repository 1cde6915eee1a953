/**
 * check's crash loop (check/crash-loop.ts, in `startup-time-exceeds-budget`'s message) against
 * `probelet simulate` on virtual time, over several seeds: the kills that restart at once, the
 * kill that enters CrashLoopBackOff, and the earliest restart after it must be what simulate
 * does — both sit on the kubelet's back-off gate, and this pins check's reading of `doBackOff`
 * (the exit before the killed one) to the kubelet's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Probe } from '../../src/api/types.js';
import { formatSeconds } from '../../src/check/budgets.js';
import { probeKillLoop, probeKillRunSeconds } from '../../src/check/crash-loop.js';
import { runCli } from '../cli/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'probelet-crash-loop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SEEDS = [1, 2, 3, 4, 5];

interface Shape {
  name: string;
  kind: 'livenessProbe' | 'startupProbe';
  probe: Probe;
  /** What check must print for it. */
  says: string[];
}

const http = { httpGet: { path: '/healthz', port: 8080 } };
const SHAPES: Shape[] = [
  {
    name: 'liveness-10x3',
    kind: 'livenessProbe',
    probe: { ...http, periodSeconds: 10, failureThreshold: 3 },
    // The example: restarts at 30, 60, 90, 120 s, first BackOff at 150 s, then 190 s.
    says: ['killed and restarted at once at 30s, 1m0s, 1m30s and 2m0s', 'CrashLoopBackOff from the kill at 2m30s: restarted no sooner than 3m10s (step 40s)'],
  },
  {
    name: 'liveness-delay-20',
    kind: 'livenessProbe',
    probe: { ...http, initialDelaySeconds: 20, periodSeconds: 10, failureThreshold: 3 },
    // initialDelaySeconds a multiple of the period: the first probe at the delay, or a period after
    // it when a second boundary fell between the killing tick and the restart (startedAt is read in
    // whole seconds; kubernetes#130393): runs of 40 or 50 s (a first start: always 50 s).
    says: ['at once at 50s, 1m30s–1m40s, 2m10s–2m30s, 2m50s–3m20s and 3m30s–4m10s', 'CrashLoopBackOff from the kill at 4m10s–5m0s: restarted no sooner than 5m30s–6m20s (step 1m20s)'],
  },
  {
    name: 'startup-2x5',
    kind: 'startupProbe',
    probe: { ...http, periodSeconds: 2, failureThreshold: 5 },
    // A first start comes 1–2 s after its worker (the sandbox): its first probe can be a tick late.
    says: ['at once at 10s–12s, 20s–22s and 30s–32s', 'CrashLoopBackOff from the kill at 40s–42s: restarted no sooner than 1m0s–1m2s (step 20s)'],
  },
  {
    name: 'liveness-1x3',
    kind: 'livenessProbe',
    probe: { ...http, periodSeconds: 1, failureThreshold: 3 },
    // A 1 s period: the relist can cost a tick, so a run is 3 or 4 s; a first start's sandbox another (4 or 5 s).
    says: ['at once at 4s–5s and 7s–9s', 'CrashLoopBackOff from the kill at 10s–13s: restarted no sooner than 20s–23s (step 10s)'],
  },
];

function manifest(shape: Shape): string {
  const path = join(dir, `${shape.name}.json`);
  const container = { name: 'app', image: 'app:1', ports: [{ containerPort: 8080 }], [shape.kind]: shape.probe };
  writeFileSync(path, JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: shape.name }, spec: { containers: [container] } }));
  return path;
}

/** The times (virtual seconds) of the events with each reason, from simulate's JSON lines. */
function eventTimes(stdout: string): Map<string, number[]> {
  const times = new Map<string, number[]>();
  for (const line of stdout.trim().split('\n')) {
    const parsed = JSON.parse(line) as { type: string; t?: number; event?: { reason?: string; count?: number } };
    if (parsed.type !== 'event' || parsed.t === undefined || !parsed.event?.reason) continue;
    times.set(parsed.event.reason, [...(times.get(parsed.event.reason) ?? []), parsed.t]);
  }
  return times;
}

describe('check\'s probe-kill crash loop is what simulate does', () => {
  for (const shape of SHAPES) {
    it(`${shape.name}: check's words, and simulate's kills, first BackOff and restart over seeds ${SEEDS.join(', ')}`, async () => {
      const path = manifest(shape);
      const check = await runCli(['check', path, '--startup-time', 'app=1h', '-o', 'json']);
      const finding = (JSON.parse(check.stdout) as { findings: { rule: string; message: string }[] }).findings.find((f) => f.rule === 'startup-time-exceeds-budget');
      for (const words of shape.says) expect(finding?.message).toContain(words);

      const run = probeKillRunSeconds(shape.probe);
      const [short, long] = [probeKillLoop(run.min, run.first.min), probeKillLoop(run.max, run.first.max)];
      const atOnce = long.restartedAtOnce.length;
      expect(short.restartedAtOnce).toHaveLength(atOnce);
      // The n-th kill: the first start's run, then n − 1 runs of restarts at once.
      const killAt = (n: number): { min: number; max: number } => ({ min: run.first.min + (n - 1) * run.min, max: run.first.max + (n - 1) * run.max });
      const backOffKill = killAt(atOnce + 1);
      const step = long.firstBackOffStepSeconds ?? Number.NaN;
      const forSeconds = Math.ceil(backOffKill.max + step + 60);
      for (const seed of SEEDS) {
        const sim = await runCli(['simulate', path, '-b', 'app=down', '--for', `${forSeconds}s`, '--seed', String(seed), '-o', 'json']);
        expect(sim.code).toBe(0);
        const events = eventTimes(sim.stdout);
        const kills = events.get('Killing') ?? [];
        const started = events.get('Started') ?? [];
        // Every kill up to the first back-off: at n runs from the start (whole ticks), restarted within δ.
        for (let n = 1; n <= atOnce + 1; n++) {
          expect(kills[n - 1], `seed ${seed}, kill ${n}`).toBeGreaterThanOrEqual(killAt(n).min);
          expect(kills[n - 1], `seed ${seed}, kill ${n}`).toBeLessThanOrEqual(killAt(n).max);
        }
        for (let n = 1; n <= atOnce; n++) expect((started[n] ?? Infinity) - (kills[n - 1] ?? 0), `seed ${seed}, restart ${n} at once`).toBeLessThan(1);
        const firstBackOff = events.get('BackOff')?.[0];
        expect(firstBackOff, `seed ${seed}`).toBe(kills[atOnce]);
        // The restart after it: no sooner than the step after that kill, at most half a (capped) step later.
        const restart = (started[atOnce + 1] ?? Infinity) - (kills[atOnce] ?? 0);
        expect(restart, `seed ${seed}, first restart after the back-off`).toBeGreaterThanOrEqual(step);
        expect(restart, `seed ${seed}, first restart after the back-off`).toBeLessThanOrEqual(step + Math.min(step, 60) / 2 + 1);
      }
      // The numbers check prints are these.
      expect(finding?.message).toContain(`(step ${formatSeconds(step)})`);
    });
  }
});
