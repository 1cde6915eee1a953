/**
 * The spawner process (spawn/spawner.ts): commands started through it keep process.ts's
 * guarantees (the hostile cases are in test/hostile/exec.test.ts); here, its own life:
 * shared by leases, stopped with nothing left by the last close(), and a spawner that
 * dies takes no command's processes with it and is replaced. The spawner process is the
 * path when the native spawn addon is not there, so these run with Node's spawn forced; with
 * the addon, a lease starts commands directly and no spawner process exists (last case).
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/util/clock.js';
import { runProcess } from '../../src/spawn/index.js';
import { MAX_DEATHS, openSpawner } from '../../src/spawn/index.js';
import { aliveWithMarker, eventually, isAlive, useProcessMarkers } from '../helpers/processes.js';
import { NATIVE_SKIP_REASON, NATIVE_TESTED, usePrimitive } from '../helpers/primitive.js';
import { spawnerPids } from '../helpers/spawner.js';

const tagged = useProcessMarkers();

/** SIGKILLs the one spawner process (never pid 0: that would be our own process group). */
function killSpawner(): number {
  const pids = spawnerPids();
  expect(pids).toHaveLength(1);
  const pid = pids[0] ?? -1;
  if (pid > 1) process.kill(pid, 'SIGKILL');
  return pid;
}

describe('spawner (the fallback: Node spawn forced)', () => {
  usePrimitive('node');

  it('runs commands in one spawner process for every lease; the last close() stops it', async () => {
    const a = openSpawner();
    const b = openSpawner();
    expect(spawnerPids()).toEqual([]); // started by the first command or ready()
    expect(await a.ready()).toBe(true);
    const one = await runProcess({ argv: ['sh', '-c', 'echo $$; echo err >&2; exit 3'], spawn: a.spawnGroup });
    const two = await runProcess({ argv: ['sh', '-c', 'kill -TERM $$'], spawn: b.spawnGroup });
    expect(one).toMatchObject({ exitCode: 3, signal: null, timedOut: false });
    expect(one.stderr.toString()).toBe('err\n');
    expect(two).toMatchObject({ exitCode: 143, signal: 'SIGTERM' });
    const pids = spawnerPids();
    expect(pids).toHaveLength(1);
    // The command ran in the spawner, not here.
    expect(Number(one.stdout.toString().trim())).not.toBe(process.pid);
    await a.close();
    expect(spawnerPids()).toEqual(pids);
    await b.close();
    expect(spawnerPids()).toEqual([]);
    await expect(a.spawnGroup({ argv: ['true'] })).rejects.toThrow('exec: spawner is closed');
    expect(await a.ready()).toBe(false);
  });

  it('while the spawner starts, commands are spawned directly: the first probes never wait for it', async () => {
    const lease = openSpawner();
    try {
      const first = await runProcess({ argv: ['sh', '-c', 'echo $PPID'], spawn: lease.spawnGroup });
      expect(Number(first.stdout.toString())).toBe(process.pid);
      expect(spawnerPids()).toHaveLength(1); // started by that first command
      expect(await lease.ready()).toBe(true);
      const later = await runProcess({ argv: ['sh', '-c', 'echo $PPID'], spawn: lease.spawnGroup });
      expect(Number(later.stdout.toString())).toBe(spawnerPids()[0]);
    } finally {
      await lease.close();
    }
  });

  it('a spawner that dies under a running command: runProcess rejects (an errored probe), never a failed one', async () => {
    const lease = openSpawner();
    try {
      expect(await lease.ready()).toBe(true);
      const run = runProcess({ argv: ['sh', '-c', 'sleep 1; echo healthy'], spawn: lease.spawnGroup });
      await new Promise((resolve) => setTimeout(resolve, 300));
      killSpawner();
      await expect(run).rejects.toThrow('exec: the spawner process died while the command ran; its outcome is unknown');
    } finally {
      await lease.close();
    }
  });

  it('close() kills what still runs (137) and leaves nothing', async () => {
    const { marker, env } = tagged();
    const lease = openSpawner();
    expect(await lease.ready()).toBe(true);
    const group = await lease.spawnGroup({ argv: ['sh', '-c', 'setsid sleep 300 & sleep 300 & wait'], env });
    expect(await eventually(() => aliveWithMarker(marker).length === 3)).toBe(true);
    const [spawner] = spawnerPids();
    await lease.close();
    expect((await group.exited).exitCode).toBe(137);
    expect(aliveWithMarker(marker)).toEqual([]);
    expect(isAlive(spawner ?? 0)).toBe(false);
  });

  it('times out on the caller clock, counted from when the command started', async () => {
    const { marker, env } = tagged();
    const clock = new FakeClock();
    const lease = openSpawner();
    try {
      expect(await lease.ready()).toBe(true);
      const run = runProcess({ argv: ['sleep', '300'], env, clock, timeoutMs: 1000, spawn: lease.spawnGroup });
      expect(await eventually(() => aliveWithMarker(marker).length === 1)).toBe(true);
      await clock.advance(999);
      expect(aliveWithMarker(marker)).toHaveLength(1);
      await clock.advance(1);
      expect(await run).toMatchObject({ timedOut: true, exitCode: 137, signal: 'SIGKILL' });
      expect(clock.pendingTimers()).toBe(0);
    } finally {
      await lease.close();
    }
  });

  it('a spawner that dies: its commands are killed (137), the next one starts a new spawner', async () => {
    const { marker, env } = tagged();
    const lease = openSpawner();
    try {
      expect(await lease.ready()).toBe(true);
      const group = await lease.spawnGroup({ argv: ['sh', '-c', 'setsid sleep 300 & sleep 300 & wait'], env });
      expect(await eventually(() => aliveWithMarker(marker).length === 3)).toBe(true);
      const first = killSpawner();
      expect(await group.exited).toMatchObject({ exitCode: 137, signal: 'SIGKILL' });
      expect(await eventually(() => aliveWithMarker(marker).length === 0)).toBe(true);
      expect(await lease.ready()).toBe(true); // a new spawner
      const next = await runProcess({ argv: ['sh', '-c', 'echo $PPID'], spawn: lease.spawnGroup });
      const [second] = spawnerPids();
      expect(Number(next.stdout.toString())).toBe(second);
      expect(second).toBeDefined();
      expect(second).not.toBe(first);
    } finally {
      await lease.close();
    }
  });

  it(`after ${MAX_DEATHS} deaths in a row, commands are spawned directly, with the same results`, async () => {
    const { env } = tagged();
    const lease = openSpawner();
    try {
      for (let i = 0; i < MAX_DEATHS; i++) {
        expect(await lease.ready()).toBe(true);
        const group = await lease.spawnGroup({ argv: ['sleep', '300'], env });
        killSpawner();
        // Settles once the engine has seen the spawner die (and killed the command).
        expect((await group.exited).exitCode).toBe(137);
      }
      expect(await lease.ready()).toBe(false);
      const direct = await runProcess({ argv: ['sh', '-c', 'echo $PPID'], spawn: lease.spawnGroup });
      expect(Number(direct.stdout.toString().trim())).toBe(process.pid);
      expect(spawnerPids()).toEqual([]);
    } finally {
      await lease.close();
    }
  });
});

describe.skipIf(!NATIVE_TESTED)(`spawner with the native spawn primitive${NATIVE_SKIP_REASON}`, () => {
  usePrimitive('native');

  it('starts commands directly from this process: no spawner process, same results', async () => {
    const lease = openSpawner();
    try {
      expect(await lease.ready()).toBe(false);
      const run = await runProcess({ argv: ['sh', '-c', 'echo $PPID; exit 4'], spawn: lease.spawnGroup });
      expect(run).toMatchObject({ exitCode: 4, signal: null, timedOut: false });
      expect(Number(run.stdout.toString())).toBe(process.pid);
      expect(spawnerPids()).toEqual([]);
    } finally {
      await lease.close();
    }
  });
});
