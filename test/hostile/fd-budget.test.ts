/**
 * Before `run` starts, the file descriptors its pods need are counted against `ulimit -n`
 * (issue 21: 400 pods under 1024 failed silently); when they do not fit, it says so, with how
 * many of the pods would, runs those and rejects the others the kubelet's way (issue 33).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { FDS_BASE, fdShortfall, podFds } from '../../src/cli/run/fds.js';
import { BIN } from '../cli/helpers.js';

const pod = (name: string, probes = 0): Pod => ({
  metadata: { name },
  spec: {
    containers: [{ name: 'app', command: ['sleep', '60'], ...(probes > 0 ? { livenessProbe: { exec: { command: ['true'] } } } : {}), ...(probes > 1 ? { readinessProbe: { tcpSocket: { port: 80 } } } : {}) }],
  },
});

describe('file descriptors a run needs', () => {
  it('counts containers and probes; sidecars add up, plain init containers only the largest', () => {
    expect(podFds(pod('a'))).toBe(4);
    expect(podFds(pod('a', 2))).toBe(4 + 3 + 1);
    const withInit: Pod = {
      metadata: { name: 'i' },
      spec: {
        initContainers: [{ name: 'i1' }, { name: 'i2', livenessProbe: undefined }, { name: 'side', restartPolicy: 'Always', readinessProbe: { exec: { command: ['true'] } } }],
        containers: [{ name: 'app' }],
      },
    };
    expect(podFds(withInit)).toBe(4 + 3 + 4 + 4);
  });

  it('fits, or says how many pods fit under the limit', () => {
    const pods = Array.from({ length: 400 }, (_, i) => pod(`p${i}`, 1));
    expect(fdShortfall(pods, { soft: 20_000, hard: 20_000 })).toBeUndefined();
    expect(fdShortfall(pods, { soft: 1024, hard: 1024 })).toEqual({ needed: FDS_BASE + 400 * 7, limit: 1024, hard: 1024, podsThatFit: Math.floor((1024 - FDS_BASE) / 7) });
    expect(fdShortfall(pods, undefined)).toBeUndefined();
  });

  it('probelet run under a low ulimit -n says so before it starts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'probelet-fds-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'pods.yaml');
    writeFileSync(
      file,
      Array.from({ length: 30 }, (_, i) => `apiVersion: v1\nkind: Pod\nmetadata: {name: p${i}}\nspec: {containers: [{name: app, image: x, command: [sleep, "60"]}]}\n`).join('---\n'),
    );
    // sh's ulimit -n sets the soft and the hard limit.
    const child = spawn('sh', ['-c', `ulimit -n 128 && exec "${process.execPath}" "${BIN}" run "${file}" --timeout 1s --listen 127.0.0.1:0 --log-dir "${join(dir, 'logs')}"`], { stdio: ['ignore', 'pipe', 'pipe'] });
    onTestFinished(() => void child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(stderr).toContain(`probelet: these 30 pods need about ${FDS_BASE + 120} file descriptors on the process runtime`);
    expect(stderr).toMatch(/more than its limit of 128 \(ulimit -n\): containers would fail to start and probes would error\. 24 of the 30 pods fit; raise the hard limit \(128; as root: ulimit -Hn, or LimitNOFILE= for a service\) or run fewer pods/);
    // Only what fits is started (issue 33: the rest crash-looped on EMFILE); the others are rejected the kubelet's way.
    const rejected = stderr.match(/rejected \(OutOfpods\): Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 24, capacity: 24/g) ?? [];
    expect(rejected).toHaveLength(6);
    expect(stderr).toContain('probelet: pod "p24" rejected (OutOfpods)');
    expect(stderr).not.toContain('pod "p23" rejected');
    expect(stderr).not.toMatch(/EMFILE|too many open files/);
    expect(code).toBe(2);
  }, 30_000);
});
