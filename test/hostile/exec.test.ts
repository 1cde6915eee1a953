/**
 * Hostile exec commands (issue #13's hostile-world suite): what a broken or malicious
 * container can run as an exec probe. Each case goes through the real path — probeExec,
 * LocalCommandRunner, the spawn primitive (the native addon from this process, or Node's
 * spawn in the spawner process: both run), real child processes — and asserts the verdict,
 * the message, that the time taken is cut at the timeout, and that nothing leaked: no
 * process of the command (tagged with a marker every descendant inherits), no file
 * descriptor in this process or in the spawner.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PROBE_OUTPUT_BYTES } from '../../src/probe/constants.js';
import { probeExec } from '../../src/probe/exec.js';
import { LocalCommandRunner } from '../../src/probe/local-runner.js';
import { openSpawner, type Spawner } from '../../src/util/spawner.js';
import { aliveWithMarker, eventually, isAlive, useProcessMarkers } from '../helpers/processes.js';
import { PRIMITIVES, usePrimitive } from '../helpers/primitive.js';
import { spawnerPids } from '../helpers/spawner.js';

const tagged = useProcessMarkers();

function fdCount(pid: number | 'self'): number {
  if (pid === 0) return 0; // no spawner process (native spawn)
  return readdirSync(`/proc/${pid}/fd`).length;
}

function rssMB(pid: number | 'self', field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
  return Number(match?.[1] ?? 0) / 1024;
}

describe.each(PRIMITIVES)('hostile exec commands (%s spawn)', (primitive) => {
  usePrimitive(primitive);
  /** Node's spawn runs in a spawner process; the native primitive from this process. */
  const viaSpawner = primitive === 'node';
  let runner: LocalCommandRunner;
  let env: Record<string, string>;
  let spawner = 0;
  let lease: Spawner; // the runner's spawner (one per process), to wait until it is ready
  let fds = { self: 0, spawner: 0 };

  /** Runs `cmd` as an exec probe with a fresh marker; returns the outcome, the time taken and the marker. */
  async function probe(cmd: string[], timeoutMs: number): Promise<{ outcome: Awaited<ReturnType<typeof probeExec>>; elapsedMs: number; marker: string }> {
    const tag = tagged();
    env = tag.env;
    const started = performance.now();
    const outcome = await probeExec(runner, 'c', cmd, timeoutMs);
    return { outcome, elapsedMs: performance.now() - started, marker: tag.marker };
  }

  /** Nothing of the run is left, and neither this process nor the spawner holds more fds than before. */
  async function expectNothingLeaked(marker: string): Promise<void> {
    expect(await eventually(() => aliveWithMarker(marker).length === 0, 2000)).toBe(true);
    expect(await eventually(() => fdCount('self') <= fds.self && fdCount(spawner) <= fds.spawner, 2000)).toBe(true);
  }

  beforeAll(async () => {
    // Each command gets the environment of the case running (its marker).
    runner = new LocalCommandRunner({ resolve: () => ({ env }) });
    lease = openSpawner();
    env = tagged().env;
    await probeExec(runner, 'c', ['true'], 30_000); // starts the spawner (Node spawn)
    expect(await lease.ready()).toBe(viaSpawner); // from now on, commands run in it
    // One command in it: the descriptors it keeps open for good (/proc files) count in the baseline.
    await probeExec(runner, 'c', ['true'], 30_000);
    const pids = spawnerPids();
    expect(pids).toHaveLength(viaSpawner ? 1 : 0);
    spawner = pids[0] ?? 0;
    fds = { self: fdCount('self'), spawner: fdCount(spawner) };
  });

  afterAll(async () => {
    await runner.close();
    await lease.close();
    if (spawner !== 0) expect(isAlive(spawner)).toBe(false);
    expect(spawnerPids()).toEqual([]);
  });

  it('1 GB on stdout: success, 10 KiB kept, memory bounded', async () => {
    const rssBefore = rssMB('self', 'VmRSS');
    const { outcome, marker } = await probe(['sh', '-c', 'head -c 1G /dev/zero | tr "\\0" x; echo done >&2'], 60_000);
    expect(outcome.result).toBe('success');
    expect(outcome.output).toBe('x'.repeat(MAX_PROBE_OUTPUT_BYTES));
    expect(rssMB('self', 'VmRSS') - rssBefore).toBeLessThan(64);
    if (spawner !== 0) expect(rssMB(spawner, 'VmHWM')).toBeLessThan(160);
    await expectNothingLeaked(marker);
  });

  it('a grandchild that calls setsid and stays: failure at the timeout, the grandchild killed too', async () => {
    const cmd = ['sh', '-c', 'setsid sleep 300 & echo started; sleep 300'];
    const { outcome, elapsedMs, marker } = await probe(cmd, 1000);
    expect(outcome).toEqual({
      result: 'failure',
      output: 'command timed out: "sh -c setsid sleep 300 & echo started; sleep 300" timed out after 1s',
    });
    expect(elapsedMs).toBeGreaterThanOrEqual(950);
    expect(elapsedMs).toBeLessThan(3000);
    await expectNothingLeaked(marker);
  });

  // Found by this suite: once its parent is gone, nothing links such a process to the command
  // (its group, session and parent changed) but the stdout and stderr it inherited. With the
  // native primitive those are pipes, which /proc/<pid>/fd names: when they outlive the tree by
  // the drain grace, their holders are killed. Node's stdio are socketpairs whose peer /proc
  // does not name; there a subreaper (process-wide) or a cgroup per command would be needed.
  it.skipIf(viaSpawner)(
    `a grandchild that calls setsid before its parent exits and keeps stdout: success, the grandchild killed after the drain grace${viaSpawner ? ' (skipped: KNOWN GAP with Node spawn, whose socketpairs /proc does not link)' : ''}`,
    async () => {
      const { outcome, marker } = await probe(['sh', '-c', 'setsid sleep 300 & sleep 0.5; echo started'], 5000);
      expect(outcome).toEqual({ result: 'success', output: 'started\n' });
      await expectNothingLeaked(marker);
    },
  );

  it('a fork bomb bounded to 200 processes: failure at the timeout, every process killed', async () => {
    // 199 orphans (each forked by a subshell that exits at once) in the command's group and session.
    const bomb = 'i=0; while [ $i -lt 199 ]; do (sleep 300 &); i=$((i+1)); done; echo spawned; sleep 300';
    const tag = tagged();
    env = tag.env;
    const started = performance.now();
    const pending = probeExec(runner, 'c', ['sh', '-c', bomb], 6000);
    // The bomb went off before its timeout: most of its processes are alive at once.
    expect(await eventually(() => aliveWithMarker(tag.marker).length >= 150, 6000)).toBe(true);
    const outcome = await pending;
    const elapsedMs = performance.now() - started;
    expect(outcome).toEqual({
      result: 'failure',
      output: `command timed out: "sh -c ${bomb}" timed out after 6s`,
    });
    expect(elapsedMs).toBeGreaterThanOrEqual(5900);
    expect(elapsedMs).toBeLessThan(9000);
    await expectNothingLeaked(tag.marker);
  });

  it('a command that ignores SIGTERM and outlives its timeout: failure, cut at the timeout', async () => {
    const { outcome, elapsedMs, marker } = await probe(['sh', '-c', 'trap "" TERM; echo partial; sleep 300'], 1000);
    expect(outcome).toEqual({
      result: 'failure',
      output: 'command timed out: "sh -c trap \\"\\" TERM; echo partial; sleep 300" timed out after 1s',
    });
    expect(elapsedMs).toBeGreaterThanOrEqual(950);
    expect(elapsedMs).toBeLessThan(3000);
    await expectNothingLeaked(marker);
  });

  it('a command that closes stdout and stderr and keeps running: failure, cut at the timeout', async () => {
    const { outcome, elapsedMs, marker } = await probe(['sh', '-c', 'exec >&- 2>&-; sleep 300'], 1000);
    expect(outcome).toEqual({
      result: 'failure',
      output: 'command timed out: "sh -c exec >&- 2>&-; sleep 300" timed out after 1s',
    });
    expect(elapsedMs).toBeGreaterThanOrEqual(950);
    expect(elapsedMs).toBeLessThan(3000);
    await expectNothingLeaked(marker);
  });

  it('a missing binary: an errored probe with Go wording, at once', async () => {
    const inPath = await probe(['probelet-no-such-binary', '--flag'], 1000);
    expect(inPath.outcome).toMatchObject({ result: 'unknown', output: '' });
    expect(inPath.outcome.error?.message).toBe('exec: "probelet-no-such-binary": executable file not found in $PATH');
    expect(inPath.elapsedMs).toBeLessThan(1000);
    const byPath = await probe(['/nonexistent/probelet/bin'], 1000);
    expect(byPath.outcome.error?.message).toBe('fork/exec /nonexistent/probelet/bin: no such file or directory');
    await expectNothingLeaked(byPath.marker);
  });

  it('a directory as the command: an errored probe, permission denied', async () => {
    const { outcome, elapsedMs, marker } = await probe(['/tmp'], 1000);
    expect(outcome).toMatchObject({ result: 'unknown', output: '' });
    expect(outcome.error?.message).toBe('fork/exec /tmp: permission denied');
    expect(elapsedMs).toBeLessThan(1000);
    await expectNothingLeaked(marker);
  });

  it('100,000 arguments: passed as they are', async () => {
    const args = Array.from({ length: 100_000 }, (_, i) => `a${i}`);
    const { outcome, elapsedMs, marker } = await probe(['sh', '-c', 'echo "$# ${100000}"', 'sh', ...args], 5000);
    expect(outcome).toEqual({ result: 'success', output: '100000 a99999\n' });
    expect(elapsedMs).toBeLessThan(5000);
    await expectNothingLeaked(marker);
  });

  it('an argument list over the kernel limit: an errored probe, argument list too long', async () => {
    const args = Array.from({ length: 100_000 }, () => 'x'.repeat(100));
    const { outcome, marker } = await probe(['sh', '-c', 'true', 'sh', ...args], 5000);
    expect(outcome).toMatchObject({ result: 'unknown', output: '' });
    expect(outcome.error?.message).toBe('fork/exec sh: argument list too long');
    await expectNothingLeaked(marker);
  });
});
