/**
 * `probelet run` killed with SIGKILL (or by the OOM killer) gets no chance to clean up. Its
 * containers still end with it — its supervisor sees probelet's pipe close and kills the
 * run cgroup — and the temporary run directory is removed. When the supervisor is gone too,
 * the next probelet to start removes the run cgroups it can prove belonged to a process
 * that no longer runs (pid and start time in the name), killing what is in them, and the
 * next run removes the dead run's directory (its owner file names the dead process).
 * Before, every container (a session of its own) ran on for good. Needs cgroups as
 * daemons.test.ts does.
 */
import { existsSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cgroupHome, nativeAddonLoaded } from '../../src/spawn/index.js';
import { exitCode, nothingLeft, scratch, startRun, testPod, type Scratch, runLines } from '../cli/run-child.js';
import { aliveWithMarker, eventually, liveProcesses } from '../helpers/processes.js';

const home = cgroupHome();
const why = 'unavailable' in home ? home.unavailable : nativeAddonLoaded() ? undefined : 'native addon not built';

let s: Scratch;
beforeEach(() => {
  s = scratch();
});
afterEach(() => {
  s.cleanup();
});

/** A run of one pod whose container also leaves a detached daemon; resolves once it started. */
async function started(): Promise<{ run: ReturnType<typeof startRun>; runDir: string }> {
  const pod = testPod(s, 'killed', ['sh', '-c', 'setsid sleep 300 </dev/null >/dev/null 2>&1 & exec sleep 300']);
  const run = startRun(s, [s.manifest('pod.yaml', pod), '--listen', '127.0.0.1:0', '--output', 'json']);
  await run.waitForStdout((out) => runLines(out).some((l) => l.event?.reason === 'Started'));
  // probelet, the container and its daemon.
  expect(await eventually(() => aliveWithMarker(s.marker).length >= 3)).toBe(true);
  return { run, runDir: runLines(run.stdout()).find((l) => l.type === 'run')?.runDir ?? '' };
}

describe.skipIf(why !== undefined)(`probelet run killed with SIGKILL${why ? ` (skipped: ${why})` : ''}`, () => {
  it('its containers end with it and its run directory is removed', async () => {
    const { run, runDir } = await started();
    expect(existsSync(runDir)).toBe(true);
    run.child.kill('SIGKILL');
    expect(await exitCode(run)).toBe(-1);
    expect(await nothingLeft(s.marker, 6000)).toBe(true);
    expect(await eventually(() => !existsSync(runDir), 6000)).toBe(true);
  }, 30_000);

  it('with its supervisor killed first, the next probelet removes what it left', async () => {
    const { run, runDir } = await started();
    const pid = run.child.pid ?? -1;
    const supervisor = liveProcesses().find((p) => p.ppid === pid && p.cmdline.includes('probelet-supervisor'));
    expect(supervisor).toBeDefined();
    process.kill(supervisor?.pid ?? -1, 'SIGKILL');
    run.child.kill('SIGKILL');
    await exitCode(run);
    // Nothing ended them: the container and its daemon still run, the run directory stays.
    expect(aliveWithMarker(s.marker).length).toBeGreaterThanOrEqual(2);
    expect(existsSync(runDir)).toBe(true);
    // The next probelet (any command that starts one) sweeps the dead run's cgroup.
    const next = startRun(s, [s.manifest('other.yaml', testPod(s, 'next', ['sleep', '300'])), '--listen', '127.0.0.1:0', '--output', 'json']);
    await next.waitForStdout((out) => runLines(out).some((l) => l.event?.reason === 'Started'));
    expect(await eventually(() => aliveWithMarker(s.marker).filter((p) => p.ppid !== (next.child.pid ?? -1) && p.pid !== next.child.pid).length === 0, 5000)).toBe(true);
    // And the dead run's directory, proven its own by the owner file.
    expect(existsSync(runDir)).toBe(false);
    next.child.kill('SIGTERM');
    expect(await exitCode(next)).toBe(0);
    expect(await nothingLeft(s.marker)).toBe(true);
  }, 40_000);
});
