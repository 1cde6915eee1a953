/**
 * Smoke test of `npm run bench -- --scenario check` on the built dist/: a small run prints
 * one complete JSON line. The figures depend on the machine and are not checked.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const RUN = fileURLToPath(new URL('../../bench/run.mjs', import.meta.url));

describe('npm run bench -- --scenario check', () => {
  it('checks N generated workloads and prints the time beside parse-only', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [RUN, '--scenario', 'check', '--objects', '300'], {
      timeout: 60_000,
      env: { ...process.env, BENCH_RUNS: '1' },
    });
    const line = JSON.parse(stdout.split('\n')[0] ?? '') as Record<string, unknown>;
    expect(Object.keys(line)).toEqual([
      'scenario', 'objects', 'megabytes', 'findings', 'containers', 'problems', 'parseOnlyS', 'parseOnlyCpuS',
      'checkS', 'checkCpuS', 'jsonOutputS', 'objectsPerS', 'ratioToParse', 'cpuRatioToParse', 'goalS', 'withinGoal',
    ]);
    expect(line['objects']).toBe(300);
    expect(line['problems']).toBe(0);
    expect(line['containers']).toBe(360);
    expect(line['findings']).toBeGreaterThan(0);
    expect(stdout).toContain('check / parse-only = ');
  });

  it('refuses an unknown scenario with exit status 2', async () => {
    const err = await promisify(execFile)(process.execPath, [RUN, '--scenario', 'nope']).catch((e: { code: number; stderr: string }) => e);
    expect(err).toMatchObject({ code: 2 });
    expect((err as { stderr: string }).stderr).toContain('--scenario must be one of node, check, simulate, stream, kubelet');
  });
});
