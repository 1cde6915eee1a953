/**
 * `probelet run` whose stdout is a pipe nobody reads: Node queued every view line in memory
 * and the run's RSS grew by the view's rate (+2 MB/s of JSON) for as long as it ran (issue
 * 33). Now at most STDOUT_BACKLOG_BYTES wait for the reader; the lines after them are
 * dropped, and stderr says so. The view here is ~1.5 MB/s: pods whose 200 KB annotation is
 * in every pod line, and whose readiness flips on every probe (period 1 s). Stated bound:
 * the run's RSS grows by under 12 MiB in 8 s of an unread stdout (it grew by ~25 MiB).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT } from '../cli/helpers.js';
import { eventually } from '../helpers/processes.js';
import { nothingLeft, scratch, testPod, type Scratch } from '../cli/run-child.js';

let s: Scratch;
beforeEach(() => {
  s = scratch();
});
afterEach(() => s.cleanup());

function rssMib(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1]) / 1024;
}

function flappingPod(i: number): unknown {
  const flag = `${s.dir}/flap${i}`;
  const pod = testPod(s, `flap${i}`, ['sleep', '300'], {
    readinessProbe: { exec: { command: ['sh', '-c', `if [ -e ${flag} ]; then rm ${flag}; exit 1; fi; touch ${flag}`] }, periodSeconds: 1, failureThreshold: 1 },
  }) as { metadata: Record<string, unknown> };
  pod.metadata.annotations = { big: 'x'.repeat(200_000) };
  return pod;
}

describe('run with a stdout nobody reads', () => {
  it('holds a bounded backlog: the view lines past it are dropped and said on stderr', async () => {
    const manifest = s.manifest('pods.yaml', ...Array.from({ length: 8 }, (_, i) => flappingPod(i)));
    const args = [BIN, 'run', manifest, '--runtime', 'process', '--listen', '127.0.0.1:0', '--output', 'json'];
    // stdout is a pipe this test never reads (Node takes its first 16 KiB, then stops reading).
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: s.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = once(child, 'close');
    try {
      const pid = child.pid ?? 0;
      // Started: the pods' readiness flips from here on.
      expect(await eventually(() => stderr.includes('runtime "process"'), 10_000, 50)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const before = rssMib(pid);
      await new Promise((resolve) => setTimeout(resolve, 8000));
      const grown = rssMib(pid) - before;
      expect(grown, `RSS ${before.toFixed(0)} MiB grew by ${grown.toFixed(1)} MiB`).toBeLessThan(12);
      expect(stderr).toMatch(/probelet: stdout is not being read: output lines are dropped until it is/);
      // Stopped, the run waits for its reader with its last lines; a reader that goes away
      // then (EPIPE) loses them, and the status is the run's (it was Node's stack trace, 1).
      child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 3000));
      child.stdout.destroy();
      const [code] = (await exited) as [number | null];
      expect(stderr).not.toMatch(/Unhandled 'error' event/);
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
      child.stdout.destroy();
      await exited;
    }
    expect(await nothingLeft(s.marker)).toBe(true);
  }, 40_000);
});
