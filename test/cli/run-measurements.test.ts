/**
 * "Measure, then check": `probelet run` (the built executable, real processes) prints what
 * it measured when it ends, with the `probelet check` line; `--output json` carries every
 * recorded probe attempt as a `{"type":"probe",…}` line and the figures as one
 * `{"type":"measurements",…}` line.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MeasurementsLine } from '../../src/cli/run/measurements.js';
import { exitCode, nothingLeft, scratch, startRun, testPod, type Scratch } from './run-child.js';

/** A startup probe that fails once, then passes; a readiness probe that always passes. */
function probes(dir: string): Record<string, unknown> {
  return {
    startupProbe: { exec: { command: ['sh', '-c', `test -e ${dir}/started || { touch ${dir}/started; exit 1; }`] }, periodSeconds: 1, failureThreshold: 5 },
    readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1, timeoutSeconds: 2 },
  };
}

let s: Scratch;
beforeEach(() => {
  s = scratch();
});
afterEach(() => {
  s.cleanup();
});

describe('probelet run: measurements at the end', () => {
  it('prints per container the time to start and to ready, probe durations against the timeout, failures, and the check line', async () => {
    const file = s.manifest('pod.yaml', testPod(s, 'web', ['sleep', '300'], probes(s.dir)));
    const run = startRun(s, [file, '--listen', '127.0.0.1:0', '--exit-on-ready', '--timeout', '20s']);
    expect(await exitCode(run)).toBe(0);
    const out = run.stdout();
    expect(out).toMatch(/^ {2}web\/main: started after \d+(\.\d)?s, ready after \d+(\.\d)?s$/m);
    expect(out).toMatch(/^ {4}startup {3}exec {6}p50 \d+ms {2}p99 \d+ms {2}timeout 1s {2}2 probes, 1 failed$/m);
    expect(out).toMatch(/^ {4}readiness exec {6}p50 \d+ms {2}p99 \d+ms {2}timeout 2s {2}\d+ probes?, 0 failed$/m);
    expect(out).toMatch(new RegExp(`^ {2}probelet check ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} --startup-time main=\\d+(\\.\\d)?s( --probe-p99 main\\.(liveness|readiness|startup)=(\\d+ms|\\d+(\\.\\d+)?s))+$`, 'm'));
    expect(await nothingLeft(s.marker)).toBe(true);
  });

  it('--output json: probe lines for every attempt and transition, then one measurements line', async () => {
    const file = s.manifest('pod.yaml', testPod(s, 'web', ['sleep', '300'], probes(s.dir)));
    const run = startRun(s, [file, '--listen', '127.0.0.1:0', '--output', 'json', '--exit-on-ready', '--timeout', '20s']);
    expect(await exitCode(run)).toBe(0);
    const lines = run
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string } & Record<string, unknown>);
    const probeLines = lines.filter((l) => l.type === 'probe');
    const startupAttempts = probeLines.filter((p) => p.probeType === 'startup' && 'attempt' in p);
    expect(startupAttempts.map((p) => (p.attempt as { verdict: string }).verdict)).toEqual(['failure', 'success']);
    expect(startupAttempts[0]).toMatchObject({ pod: 'web', namespace: 'default', container: 'main', attempt: { seq: 1, outcome: 'failure', attempt: 1, details: { exitCode: 1 } } });
    expect(probeLines.some((p) => p.probeType === 'startup' && (p.transition as { kind?: string } | undefined)?.kind === 'threshold')).toBe(true);
    const measurements = lines.filter((l) => l.type === 'measurements') as unknown as MeasurementsLine[];
    expect(measurements).toHaveLength(1);
    expect(lines.at(-1)?.type).toBe('measurements');
    const [m] = measurements;
    expect(m?.containers).toEqual([
      expect.objectContaining({
        pod: 'web',
        container: 'main',
        startedAfterSeconds: expect.any(Number),
        readyAfterSeconds: expect.any(Number),
        probes: [
          expect.objectContaining({ probeType: 'startup', handler: 'exec', timeoutSeconds: 1, attempts: 2, failures: 1, errored: 0 }),
          expect.objectContaining({ probeType: 'readiness', handler: 'exec', timeoutSeconds: 2, failures: 0 }),
        ],
      }),
    ]);
    expect(m?.check).toMatch(/^probelet check \S+ --startup-time main=\d+(\.\d)?s( --probe-p99 main\.(liveness|readiness|startup)=(\d+ms|\d+(\.\d+)?s))+$/);
    expect(Date.parse(m?.since ?? '')).toBeGreaterThan(0);
    expect(await nothingLeft(s.marker)).toBe(true);
  });
});

describe('measure: from the container start', () => {
  it("counts start-up from the start of the container that reached it, not from the run's start; p99s in ms", async () => {
    const { measure, checkCommand, containerStartsOf } = await import('../../src/cli/run/measurements.js');
    const history = {
      podUID: 'u1', pod: 'web', namespace: 'default', container: 'main', probeType: 'startup' as const, handler: 'http' as const,
      periodSeconds: 1, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 30, total: 1, failures: 0, errored: 0,
      firstSuccessAt: Date.parse('2026-01-01T00:00:40Z'),
      attempts: [{ seq: 1, containerID: 'c', due: 0, start: 0, durationMs: 25.2, attempts: 1, handlerResult: 'success' as const, verdict: 'success' as const, errored: false, result: 'success' as const, output: '' }],
      transitions: [],
    };
    const runStart = Date.parse('2026-01-01T00:00:00Z');
    const pods = [{ metadata: { uid: 'u1', name: 'web' }, status: { containerStatuses: [{ name: 'main', image: 'x', imageID: '', ready: true, restartCount: 1, state: { running: { startedAt: '2026-01-01T00:00:30Z' } }, lastState: { terminated: { exitCode: 137, startedAt: '2026-01-01T00:00:05Z' } } }] } }];
    const measured = measure([history] as never, runStart, containerStartsOf(pods as never));
    expect(measured[0]?.startedAfterSeconds).toBe(10);
    expect(measure([history] as never, runStart)[0]?.startedAfterSeconds).toBe(40);
    expect(checkCommand(['pod.yaml'], measured)).toBe('probelet check pod.yaml --startup-time main=10s --probe-p99 main.startup=25ms');
  });
});
