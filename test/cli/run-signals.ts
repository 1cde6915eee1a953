/**
 * The signal scenario of `probelet run` on a container runtime, one body for every runtime
 * (test/cri/shutdown.test.ts, test/docker/shutdown-scenarios.ts): the example httpd
 * Deployment becomes Ready on its pod IP, then a signal (or Ctrl-C pressed twice: the
 * graceful stop cut short) ends the run, which must leave nothing behind — nothing the runtime
 * still lists for the run, no process of it. What each runtime holds of a pod (containers and
 * volumes, a network namespace) is checked by the runtime's own hooks.
 */
import { expect, vi } from 'vitest';
import { aliveWithMarker } from '../helpers/processes.js';
import { httpdDeployment } from '../helpers/httpd-deployment.js';
import { exitCode, nothingLeft, readyPod, startRun, type Scratch } from './run-child.js';

export interface RunRuntime {
  /** `probelet run`'s arguments for the manifest `file` on this runtime. */
  args(file: string): string[];
  /** Whether the Deployment mounts a volume for its web root (the Docker runtime's named volume). */
  wwwVolume: boolean;
  /** What the runtime still lists for the probelet process `pid`, as its own API lists it. */
  leftIn(pid: number): Promise<string[]>;
  /**
   * Checks what the Ready pod holds (`listed`: {@link leftIn}; `containerPids`: its container
   * processes); returns the check, if any, of what must be gone after the exit.
   */
  whileReady(listed: string[], containerPids: number[]): (() => void) | undefined;
  /** How long the pod may take to become Ready, and probelet to exit after the signal. */
  readyMs: number;
  exitMs: number;
}

/**
 * `signal` (with `forced`: SIGINT, then a second SIGINT once the graceful deletion began, to a
 * pod that ignores SIGTERM) to `probelet run` on `runtime`: exit 0 (130 forced), nothing left.
 */
export async function signalStop(s: Scratch, runtime: RunRuntime, signal: NodeJS.Signals, forced: boolean): Promise<void> {
  const file = s.manifest('deploy.yaml', httpdDeployment(s, 'web', { ignoresTerm: forced, wwwVolume: runtime.wwwVolume }));
  const run = startRun(s, runtime.args(file));
  await run.waitForStdout((out) => readyPod(out) !== undefined, runtime.readyMs);
  const pid = run.child.pid ?? 0;
  const ready = readyPod(run.stdout());
  // Named as the Deployment controller names its pods, with its IP on the runtime's bridge.
  expect(ready?.metadata?.name).toMatch(/^web-[a-z0-9]{8,10}-[a-z0-9]{5}$/);
  expect(ready?.status?.podIP).toMatch(/^169\.254\.\d+\.\d+$/);
  const listed = await runtime.leftIn(pid);
  expect(listed).not.toEqual([]);
  const containerPids = aliveWithMarker(s.marker).map((p) => p.pid);
  expect(containerPids.length).toBeGreaterThan(0);
  const afterExit = runtime.whileReady(listed, containerPids);

  run.child.kill(signal);
  if (forced) {
    // The graceful stop would wait out the 60 s grace: the second Ctrl-C kills at once.
    await vi.waitFor(() => expect(run.stderr()).toContain('deleting every pod gracefully'), { timeout: 10_000 });
    run.child.kill('SIGINT');
  }
  expect(await exitCode(run, runtime.exitMs)).toBe(forced ? 130 : 0);
  // probelet's own words on what it could not remove, should this ever fail (it did once in CI, 2026-11-24).
  expect(await runtime.leftIn(pid), `left in the runtime; probelet's stderr:\n${run.stderr()}`).toEqual([]);
  expect(await nothingLeft(s.marker)).toBe(true);
  afterExit?.();
}
