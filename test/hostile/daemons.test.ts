/**
 * A daemon started by an exec probe — `setsid`, its parent gone, every descriptor of the
 * command's redirected — is linked to the command by nothing a process-tree or pipe scan
 * can follow. The kubelet's runtime ends it with the container (its cgroup); probelet's
 * host-process runner puts every command in a cgroup of its own and kills it when the
 * command ends (src/spawn/cgroup.ts). Before, `sleep` stayed behind for good.
 * Needs a writable cgroup v2 hierarchy with cgroup.kill and the native addon; elsewhere the
 * cases are skipped with the reason in their name (and probelet says what is lost).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { cgroupHome, nativeAddonLoaded } from '../../src/spawn/index.js';
import { BIN, REPO_ROOT } from '../cli/helpers.js';
import { exitCode, nothingLeft, scratchPerTest, startRun, testPod } from '../cli/run-child.js';
import { aliveWithMarker } from '../helpers/processes.js';

const home = cgroupHome();
const why = 'unavailable' in home ? home.unavailable : nativeAddonLoaded() ? undefined : 'native addon not built';
const DAEMON = 'setsid sleep 99 </dev/null >/dev/null 2>&1 &';

const scratchOf = scratchPerTest();

describe.skipIf(why !== undefined)(`exec probes that leave a daemon${why ? ` (skipped: ${why})` : ''}`, () => {
  it('probelet probe --exec: the daemon ends with the probe', async () => {
    const s = scratchOf();
    const child = spawn(process.execPath, [BIN, 'probe', '--exec', '--', 'sh', '-c', DAEMON], { cwd: REPO_ROOT, env: s.env, stdio: 'ignore' });
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(0);
    expect(await nothingLeft(s.marker)).toBe(true);
  });

  it('an exec probe inside probelet run: no daemon outlives the probe, nor the run', async () => {
    const s = scratchOf();
    const pod = testPod(s, 'daemons', ['sleep', '300'], { readinessProbe: { exec: { command: ['sh', '-c', DAEMON] }, periodSeconds: 1 } }, { terminationGracePeriodSeconds: 2 });
    const run = startRun(s, [s.manifest('pod.yaml', pod), '--listen', '127.0.0.1:0', '--output', 'json']);
    await run.waitForStdout((out) => out.includes('"ready":true'));
    // The probe ran (and succeeded); only the container itself and probelet carry the marker.
    const sleepers = (): number => aliveWithMarker(s.marker).filter((p) => p.cmdline === 'sleep 99').length;
    expect(sleepers()).toBe(0);
    run.child.kill('SIGTERM');
    expect(await exitCode(run)).toBe(0);
    expect(await nothingLeft(s.marker)).toBe(true);
  }, 30_000);
});
