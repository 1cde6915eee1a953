/**
 * `npm run bench -- --scenario kubelet` without a cluster: its argument handling, the message
 * and exit status when the cluster is missing, and the report's format on fixed figures. The
 * run itself needs `npm run cluster:up` (root, containerd) and is measured by hand
 * (docs/performance-kubelet.md); its figures depend on the machine.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module of the bench, without declarations
import { KUBELET_DEFAULTS, cpuPerProbeUs, jsonLine, kubeletReport, latenessOf, parseKubeletOptions } from '../../bench/lib/kubelet-report.mjs';

const RUN = fileURLToPath(new URL('../../bench/run.mjs', import.meta.url));

interface Failure {
  code: number;
  stderr: string;
}

async function runFailing(args: string[], env: Record<string, string> = {}): Promise<Failure> {
  const err: unknown = await promisify(execFile)(process.execPath, [RUN, ...args], { timeout: 30_000, env: { ...process.env, ...env } }).then(
    () => new Error('exited 0'),
    (e: unknown) => e,
  );
  return err as Failure;
}

const figures = (agent: 'kubelet' | 'probelet', idleCpuS: number, loadCpuS: number, loadRssMB: number) => ({
  agent,
  version: agent === 'kubelet' ? 'Kubernetes v1.35.4' : 'probelet 0.1.0',
  windowS: 60,
  idleCpuS,
  loadCpuS,
  idleRssMB: loadRssMB - 10,
  loadRssMB,
  hostProbes: 6000,
  execProbes: 120,
  containerdCpuS: 1.5,
  lateness: { samples: 5900, p50: 0.1, p99: 12.5, max: 40 },
  idleLoadAvg: agent === 'kubelet' ? 0.8 : 0.9,
  loadAvg: 1.5,
  otherPods: 0,
});

describe('npm run bench -- --scenario kubelet, without the cluster', () => {
  it('takes its flags, in both spellings, with the documented defaults', () => {
    expect(parseKubeletOptions([])).toEqual(KUBELET_DEFAULTS);
    expect(KUBELET_DEFAULTS).toMatchObject({ pods: 100, periodS: 1, windowS: 60 });
    expect(parseKubeletOptions(['--pods', '10', '--exec-pods=0', '--period', '2', '--exec-period', '5', '--window=20', '--cpu-prof'])).toEqual({
      pods: 10,
      execPods: 0,
      periodS: 2,
      execPeriodS: 5,
      windowS: 20,
      cpuProf: true,
    });
  });

  it('refuses bad arguments naming the flag and the range', () => {
    expect(() => parseKubeletOptions(['--pods', '0'])).toThrow('--pods wants a whole number from 2 to 200, got "0"');
    expect(() => parseKubeletOptions(['--window'])).toThrow('--window wants a whole number from 5 to 600, got nothing');
    expect(() => parseKubeletOptions(['--period', '0.5'])).toThrow('--period wants a whole number');
    expect(() => parseKubeletOptions(['--workers', '3'])).toThrow('unknown argument --workers');
  });

  it('exits 2 with the usage on a bad argument', async () => {
    const err = await runFailing(['--scenario', 'kubelet', '--pods', 'many']);
    expect(err.code).toBe(2);
    expect(err.stderr).toContain('bench: --pods wants a whole number');
    expect(err.stderr).toContain('usage: npm run bench -- --scenario kubelet');
  });

  it('exits 1 saying how to bring the cluster up when there is none', async () => {
    const err = await runFailing(['--scenario', 'kubelet'], { PROBELET_CLUSTER_DIR: '/nonexistent/probelet-cluster' });
    expect(err.code).toBe(1);
    expect(err.stderr).toContain('needs the local cluster');
    expect(err.stderr).toContain('npm run cluster:up');
  });

  it('measures lateness as intervals between a pod\'s probes minus the period', () => {
    expect(latenessOf([[0, 1000, 2010, 3000], [500, 1505]], 1000)).toEqual({ samples: 4, p50: 5, p99: 10, max: 10 });
    expect(latenessOf([[5]], 1000).samples).toBe(0);
  });

  it('prints CPU per probe with idle subtracted, both agents, the ratio and the versions', () => {
    const kubelet = figures('kubelet', 1, 7.12, 120);
    const probelet = figures('probelet', 0.5, 3.56, 90);
    expect(cpuPerProbeUs(kubelet)).toBe(1000);
    expect(cpuPerProbeUs(probelet)).toBe(500);
    expect(JSON.parse(jsonLine(probelet))).toMatchObject({ scenario: 'kubelet', agent: 'probelet', cpuPerProbeUs: 500 });
    const text: string = kubeletReport(kubelet, probelet, KUBELET_DEFAULTS);
    expect(text).toContain('window 60 s each, both agents at once; Kubernetes v1.35.4; probelet 0.1.0');
    // Each window's load average beside the figures measured in it (the same windows for both agents).
    expect(text).toMatch(/load average \(1 min\) idle \/ loaded window\s+0\.8 \/ 1\.5 {2}0\.9 \/ 1\.5/);
    expect(text).toMatch(/CPU per probe \(µs, idle subtracted\)\s+1000 {2}500/);
    expect(text).toContain('probelet / kubelet CPU per probe = 0.5 (goal ≤ 1 met); RSS 90 MB / 120 MB');
    expect(kubeletReport(probelet, kubelet, KUBELET_DEFAULTS)).toContain('= 2 (goal ≤ 1 NOT met)');
  });

  it('gives no ratio when an agent\'s loaded CPU is not above its idle', () => {
    const text: string = kubeletReport(figures('kubelet', 1, 0.9, 100), figures('probelet', 0.5, 3.56, 90), KUBELET_DEFAULTS);
    expect(text).toContain('= NaN (no ratio: an agent\'s loaded CPU is not above its idle CPU');
  });
});
