/**
 * Smoke test of `npm run bench` (bench/run.mjs, on the built dist/): a tiny TCP run of
 * probelet and the baseline must each print one JSON line with every key and real probes.
 * The figures themselves are not checked: they depend on the machine.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const RUN = fileURLToPath(new URL('../../bench/run.mjs', import.meta.url));

const KEYS = [
  'impl',
  'handler',
  'workers',
  'periodS',
  'elapsedS',
  'probes',
  'ok',
  'failed',
  'probesPerS',
  'cpuS',
  'cpuMsPerProbe',
  'maxRssMB',
  'heapMB',
  'latenessP50Ms',
  'latenessP99Ms',
  'latenessMaxMs',
  'timeWaitSockets',
  'eventLoopDelayP99Ms',
];

describe('npm run bench', () => {
  it('runs probelet and the baseline over TCP and prints one complete JSON line each', async () => {
    // The opt-in reset (probeClose 'reset'), whose point is no TIME_WAIT on the probing side.
    const args = ['--handler', 'tcp', '--workers', '20', '--period', '1', '--duration', '2', '--baseline', '--probe-close', 'reset'];
    const { stdout } = await promisify(execFile)(process.execPath, [RUN, ...args], { timeout: 40_000 });

    const runs = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(runs.map((run) => run['impl'])).toEqual(['probelet', 'baseline']);
    for (const run of runs) {
      expect(Object.keys(run)).toEqual(KEYS);
      expect(run['probes']).toBeGreaterThan(0);
    }
    // Reset connections: none left in TIME_WAIT on the probing side (the baseline closes with a FIN, as the kubelet).
    expect(runs[0]?.['timeWaitSockets']).toBe(0);
    expect(runs[1]?.['timeWaitSockets']).toBeGreaterThan(0);
    expect(stdout).toMatch(/ratio probelet÷baseline: cpuMsPerProbe=/);
  }, 45_000);

  it('--scenario node: 110 pods with liveness and readiness, mixed handlers, no false failure', async () => {
    const args = ['--scenario', 'node', '--period', '1', '--warmup', '1', '--duration', '2'];
    const { stdout } = await promisify(execFile)(process.execPath, [RUN, ...args], { timeout: 50_000 });
    const line = stdout.split('\n').find((l) => l.startsWith('{'));
    const run = JSON.parse(line ?? '{}') as Record<string, unknown>;
    expect(run).toMatchObject({ scenario: 'node', pods: 110, workers: 220, handler: 'mixed', failed: 0 });
    expect(run['probes']).toBeGreaterThan(220);
    expect(typeof run['cpuPercent']).toBe('number');
    expect(stdout).toMatch(/^node: 110 pods, 220 probe workers .* false failures 0 of \d+/m);
  }, 55_000);

  it('refuses an unknown scenario with exit 2', async () => {
    const failed = await promisify(execFile)(process.execPath, [RUN, '--scenario', 'moon']).catch((err: unknown) => err);
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringContaining('--scenario must be one of node') as unknown });
  });
});
