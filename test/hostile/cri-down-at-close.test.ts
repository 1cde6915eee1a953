/**
 * Ctrl-C while containerd is down (issue 21 §11), in the real world: `probelet run --runtime
 * cri` as a child process on a containerd instance of this test's own (`scripts/cri-up.sh
 * --name …`, never the shared default one: the test kills it), a pod Ready on it, then
 * containerd killed and the run sent SIGINT. Before: the run's last word was grpc-js's raw
 * `14 UNAVAILABLE: No connection established. Last error: Error: connect ECONNREFUSED ….
 * Resolution note: `. Now: one plain line naming what is left and the `crictl` line that
 * removes it, no Node warning, no raw gRPC error, exit 2 (docs/reliability-signals.md). The
 * instance (and the containers it left running) is torn down by `scripts/cri-down.sh`.
 * (The same close on a fake CRI service: test/cri/fake-service.test.ts.)
 *
 * Needs root and containerd installed; skipped with the reason in its name otherwise, failing
 * instead under PROBELET_REQUIRE_CRI=1. PROBELET_HOSTILE_CRI_INSTANCE names the instance.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { eventually } from '../helpers/processes.js';
import { exitCode, markerVar, runLines, scratch, startRun, type Scratch } from '../cli/run-child.js';
import { BUSYBOX, describeCri, ownContainerdUnavailable } from '../cri/helpers.js';

const SCRIPTS = fileURLToPath(new URL('../../scripts/', import.meta.url));
const INSTANCE = process.env.PROBELET_HOSTILE_CRI_INSTANCE ?? 'hostile-down';
/** cri-instance.sh's directory of a named instance (PROBELET_CRI_DIR unset). */
const INSTANCE_DIR = `/tmp/probelet-cri-${INSTANCE}`;

let s: Scratch | undefined;
afterEach(() => {
  s?.cleanup();
  s = undefined;
});

/** The pid of a live (not zombie) process, or undefined. */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

describeCri(
  'hostile: Ctrl-C while containerd is down',
  () => {
    let endpoint = '';
    beforeAll(() => {
      const out = execFileSync('bash', [`${SCRIPTS}cri-up.sh`, '--name', INSTANCE], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      endpoint = out.trim().split('\n').at(-1) ?? '';
    }, 240_000);
    afterAll(() => {
      // containerd is dead by then (no user to refuse for), its containers still running: cri-down kills them.
      execFileSync('bash', [`${SCRIPTS}cri-down.sh`, '--name', INSTANCE], { stdio: 'ignore', env: { ...process.env, PROBELET_CRI_FORCE: '1' } });
    }, 60_000);

    it('says in one plain line what is left and the crictl line; no Node warning, no raw gRPC error; exit 2', async () => {
      expect(endpoint).toMatch(/^unix:\/\//);
      s = scratch();
      const file = s.manifest('pod.yaml', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'down-at-close' },
        spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'app', image: BUSYBOX, command: ['sleep', '3600'], env: [markerVar(s)] }] },
      });
      const run = startRun(s, [file, '--runtime', 'cri', '--cri-endpoint', endpoint, '--listen', '127.0.0.1:0', '-o', 'json']);
      const ready = (out: string): boolean =>
        runLines(out).some((l) => l.type === 'pod' && JSON.stringify(l.pod?.status ?? {}).includes('"type":"Ready","status":"True"'));
      await run.waitForStdout(ready, 30_000);

      const containerd = Number(readFileSync(`${INSTANCE_DIR}/containerd.pid`, 'utf8'));
      process.kill(containerd, 'SIGKILL');
      expect(await eventually(() => !alive(containerd), 5000, 50)).toBe(true);
      run.child.kill('SIGINT');
      const code = await exitCode(run, 60_000);

      const lines = run.stderr().split('\n').filter((l) => l !== '');
      const left = lines.filter((l) => l.includes('could not remove'));
      expect(left, run.stderr()).toHaveLength(1);
      expect(left[0]).toMatch(
        new RegExp(`^probelet: this run could not remove its pod sandbox \\(and their containers\\): cannot reach the container runtime at ${endpoint}: .*; is containerd \\(or CRI-O\\) running\\?; the next probelet start on ${endpoint} removes them, or once the runtime is back: crictl --runtime-endpoint ${endpoint} rmp -f [0-9a-f]{64}$`),
      );
      expect(run.stderr(), 'no raw gRPC error').not.toMatch(/\d+ UNAVAILABLE|Resolution note|Error: connect/);
      expect(run.stderr(), 'no Node warning').not.toMatch(/\(node:\d+\)|Warning:/);
      expect(run.stderr(), 'no stack trace').not.toMatch(/^\s+at /m);
      expect(code).toBe(2);
    }, 120_000);
  },
  () => ownContainerdUnavailable(),
);
