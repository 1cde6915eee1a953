import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, realClock, type Clock } from '../../src/util/clock.js';
import { runProcess, spawnGroup, type ProcessGroup } from '../../src/spawn/index.js';
import { aliveInGroup, aliveWithMarker, eventually, useProcessMarkers } from '../helpers/processes.js';
import { PRIMITIVES, usePrimitive } from '../helpers/primitive.js';

const tagged = useProcessMarkers();

/** Counts of the handle kinds a run could leak besides timers (child processes, pipes). */
function activeResources(): { ProcessWrap: number; PipeWrap: number } {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return { ProcessWrap: counts.ProcessWrap ?? 0, PipeWrap: counts.PipeWrap ?? 0 };
}

describe.each(PRIMITIVES)('runProcess (%s spawn)', (primitive) => {
  usePrimitive(primitive);

  it('returns the exit code and stdout and stderr separately', async () => {
    const run = await runProcess({ argv: ['sh', '-c', 'printf out; printf err >&2; exit 3'] });
    expect(run.exitCode).toBe(3);
    expect(run.signal).toBeNull();
    expect(run.stdout.toString()).toBe('out');
    expect(run.stderr.toString()).toBe('err');
    expect(run.timedOut).toBe(false);
  });

  it('passes argv as is, without a shell', async () => {
    const run = await runProcess({ argv: ['printf', '%s|%s', '$HOME', 'a b;c'] });
    expect(run.stdout.toString()).toBe('$HOME|a b;c');
    expect(run.exitCode).toBe(0);
  });

  it('runs with exactly the given environment and working directory', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'probelet-cwd-')));
    try {
      const run = await runProcess({
        argv: ['sh', '-c', 'printf "%s|%s|%s" "$FOO" "${HOME-unset}" "$(pwd)"'],
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', FOO: 'bar' },
        cwd: dir,
      });
      expect(run.stdout.toString()).toBe(`bar|unset|${dir}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports death by signal as 128 + signal number', async () => {
    const term = await runProcess({ argv: ['sh', '-c', 'kill -TERM $$'] });
    expect(term).toMatchObject({ exitCode: 143, signal: 'SIGTERM' });
    const kill = await runProcess({ argv: ['sh', '-c', 'kill -KILL $$'] });
    expect(kill).toMatchObject({ exitCode: 137, signal: 'SIGKILL' });
  });

  it('kills the whole tree at the timeout: a leader ignoring SIGTERM, a grandchild in its group, one in its own session', async () => {
    const { marker, env } = tagged();
    const started = Date.now();
    const run = await runProcess({
      argv: ['sh', '-c', 'trap "" TERM; setsid sleep 30 & sleep 30 & wait'],
      env,
      timeoutMs: 1000,
    });
    const elapsed = Date.now() - started;
    expect(run).toMatchObject({ timedOut: true, exitCode: 137, signal: 'SIGKILL' });
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(4000);
    expect(await eventually(() => aliveWithMarker(marker).length === 0, 1000)).toBe(true);
  });

  it('kills what is left of the tree when the leader exits (even a process that moved to another group)', async () => {
    const { marker, env } = tagged();
    const started = Date.now();
    const run = await runProcess({
      argv: [
        'sh',
        '-c',
        // A background sleep holding stdout, and one that moved to its own process group.
        'sleep 30 & perl -e "setpgrp(0,0); exec qw(sleep 30)" >/dev/null 2>&1 & sleep 0.3; echo done',
      ],
      env,
      timeoutMs: 20_000,
    });
    expect(run.stdout.toString()).toBe('done\n');
    expect(run).toMatchObject({ timedOut: false, exitCode: 0 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await eventually(() => aliveWithMarker(marker).length === 0, 1000)).toBe(true);
  });

  it('keeps only the first maxOutputBytes of a 1 GB flood, drains the rest and stays small', async () => {
    const rssBefore = process.memoryUsage().rss;
    const seen = { stdout: 0, stderr: 0 };
    const started = Date.now();
    const run = await runProcess({
      argv: ['sh', '-c', 'head -c 1G /dev/zero; printf tail >&2'],
      maxOutputBytes: 10240,
      onOutput: (stream, chunk) => {
        seen[stream] += chunk.length;
      },
      timeoutMs: 60_000,
    });
    expect(run.exitCode).toBe(0);
    expect(run.timedOut).toBe(false);
    expect(run.stdout.length).toBe(10240);
    expect(run.stderr.toString()).toBe('tail');
    expect(seen.stdout).toBe(1024 ** 3);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
  });

  it('rejects (never throws from an event) when the command cannot be started, with Go wording', async () => {
    await expect(runProcess({ argv: ['probelet-no-such-command'] })).rejects.toMatchObject({
      code: 'ENOENT',
      message: 'exec: "probelet-no-such-command": executable file not found in $PATH',
    });
    await expect(runProcess({ argv: ['/nonexistent/probelet'] })).rejects.toMatchObject({
      code: 'ENOENT',
      message: 'fork/exec /nonexistent/probelet: no such file or directory',
    });
    await expect(runProcess({ argv: ['sh', '-c', 'true'], cwd: '/nonexistent-dir' })).rejects.toMatchObject({
      message: 'chdir /nonexistent-dir: no such file or directory',
    });
    await expect(runProcess({ argv: [] })).rejects.toThrow('exec: no command');
  });

  it('names a wrong type from JavaScript callers: an argument that is not a string, a NaN output cap', async () => {
    await expect(runProcess({ argv: ['echo', 1 as unknown as string] })).rejects.toThrow('argv[1] must be a string, got number');
    await expect(runProcess({ argv: ['echo'], maxOutputBytes: Number.NaN })).rejects.toThrow('maxOutputBytes must be a number of bytes, got NaN');
  });

  it('reports EACCES for a file that is not executable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'probelet-eacces-'));
    const file = join(dir, 'not-executable');
    try {
      writeFileSync(file, '#!/bin/sh\necho hi\n');
      chmodSync(file, 0o644);
      await expect(runProcess({ argv: [file] })).rejects.toMatchObject({
        code: 'EACCES',
        message: `fork/exec ${file}: permission denied`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('times out on the injected clock and leaves no timer behind', async () => {
    const { marker, env } = tagged();
    const clock = new FakeClock();
    const quick = await runProcess({ argv: ['true'], timeoutMs: 5000, clock });
    expect(quick).toMatchObject({ timedOut: false, exitCode: 0 });
    expect(clock.pendingTimers()).toBe(0);
    const pending = runProcess({ argv: ['sleep', '30'], env, timeoutMs: 5000, clock });
    await eventually(() => aliveWithMarker(marker).length === 1);
    await clock.advance(4999);
    expect(aliveWithMarker(marker)).toHaveLength(1);
    await clock.advance(1);
    const run = await pending;
    expect(run).toMatchObject({ timedOut: true, exitCode: 137 });
    expect(clock.pendingTimers()).toBe(0);
    expect(aliveWithMarker(marker)).toHaveLength(0);
  });

  it('leaves no timer, process or pipe handle after a run (real clock)', async () => {
    // Handles of earlier tests' processes may still be on their way out: start from none.
    expect(await eventually(() => activeResources().ProcessWrap === 0, 2000, 5)).toBe(true);
    const before = activeResources();
    const clock = trackingRealClock();
    await runProcess({ argv: ['sh', '-c', 'echo hi; echo ho >&2'], timeoutMs: 10_000, clock });
    await runProcess({ argv: ['sleep', '5'], timeoutMs: 200, clock });
    await expect(runProcess({ argv: ['probelet-no-such-command'], timeoutMs: 10_000, clock })).rejects.toThrow();
    expect(clock.scheduled).toBeGreaterThanOrEqual(3);
    expect(clock.live.size).toBe(0);
    // Closed handles are freed by libuv some loop turns after their close (more under load).
    const settled = (): boolean => {
      const now = activeResources();
      return now.ProcessWrap === 0 && now.PipeWrap <= before.PipeWrap;
    };
    await eventually(settled, 2000, 5);
    const after = activeResources();
    expect(after.ProcessWrap).toBe(0);
    expect(after.PipeWrap).toBeLessThanOrEqual(before.PipeWrap);
  });
});

/** realClock, counting the timers scheduled through it that neither fired nor were cleared. */
function trackingRealClock(): Clock & { live: Set<unknown>; scheduled: number } {
  const live = new Set<unknown>();
  const clock = {
    live,
    scheduled: 0,
    now: () => realClock.now(),
    setTimeout(fn: () => void, ms: number): unknown {
      clock.scheduled++;
      const handle: unknown = realClock.setTimeout(() => {
        live.delete(handle);
        fn();
      }, ms);
      live.add(handle);
      return handle;
    },
    clearTimeout(handle: unknown): void {
      live.delete(handle);
      realClock.clearTimeout(handle);
    },
  };
  return clock;
}

describe.each(PRIMITIVES)('spawnGroup (%s spawn)', (primitive) => {
  usePrimitive(primitive);

  let group: ProcessGroup | undefined;
  afterEach(async () => {
    group?.kill('SIGKILL');
    await group?.exited;
    group = undefined;
  });

  it('starts the process as leader of its own group', async () => {
    const { marker, env } = tagged();
    group = await spawnGroup({ argv: ['sh', '-c', 'sleep 30 & sleep 30'], env });
    expect(group.running).toBe(true);
    expect(await eventually(() => aliveWithMarker(marker).length === 3)).toBe(true);
    for (const p of aliveWithMarker(marker)) expect(p.pgid).toBe(group.pid);
    expect(aliveInGroup(process.pid)).not.toContainEqual(expect.objectContaining({ pid: group.pid }));
  });

  it('terminate: SIGTERM ends a cooperative process at once (143)', async () => {
    const { marker, env } = tagged();
    group = await spawnGroup({ argv: ['sleep', '30'], env });
    const started = Date.now();
    const exit = await group.terminate(10_000);
    expect(exit).toMatchObject({ exitCode: 143, signal: 'SIGTERM' });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(group.running).toBe(false);
    expect(aliveWithMarker(marker)).toHaveLength(0);
  });

  it('terminate: SIGKILL after the grace period when SIGTERM is ignored (137), whole group gone', async () => {
    const { marker, env } = tagged();
    group = await spawnGroup({ argv: ['sh', '-c', 'trap "" TERM; sleep 30 & wait; wait'], env });
    await eventually(() => aliveWithMarker(marker).length === 2);
    const started = Date.now();
    const exit = await group.terminate(500);
    const elapsed = Date.now() - started;
    expect(exit).toMatchObject({ exitCode: 137, signal: 'SIGKILL' });
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(4000);
    expect(await eventually(() => aliveWithMarker(marker).length === 0, 1000)).toBe(true);
  });

  it('kill() with another signal reaches every process of the group', async () => {
    const { marker, env } = tagged();
    group = await spawnGroup({ argv: ['sh', '-c', 'trap "exit 7" HUP; sleep 30 & wait'], env });
    await eventually(() => aliveWithMarker(marker).length === 2);
    group.kill('SIGHUP');
    const exit = await group.exited;
    expect(exit.exitCode).toBe(7);
    expect(await eventually(() => aliveWithMarker(marker).length === 0, 1000)).toBe(true);
  });
});

describe.each(PRIMITIVES)('runProcess on a busy machine (%s spawn)', (primitive) => {
  usePrimitive(primitive);

  it('a command that exited in time is not a timeout, even if its exit is seen after the timer fired', async () => {
    const clock = new FakeClock();
    let release: () => void = () => undefined;
    // The spawn seam, reporting the (real) exit late, as a busy event loop or spawner would.
    const slowToNotice = async (options: Parameters<typeof spawnGroup>[0]): Promise<ProcessGroup> => {
      const group = await spawnGroup(options);
      const seen = new Promise<void>((resolve) => {
        release = resolve;
      });
      let running = true;
      const exited = Promise.all([group.exited, seen]).then(([exit]) => {
        running = false;
        return exit;
      });
      return {
        pid: group.pid,
        get running() {
          return running;
        },
        exited,
        kill: (signal) => group.kill(signal),
        terminate: (graceMs) => group.terminate(graceMs),
      };
    };
    const run = runProcess({ argv: ['sh', '-c', 'echo done; exit 3'], clock, timeoutMs: 1000, spawn: slowToNotice });
    expect(await eventually(() => clock.pendingTimers() === 1)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200)); // the command is long gone
    await clock.advance(1000); // the timer fires and kills what it believes still runs
    release();
    const result = await run;
    expect(result).toMatchObject({ exitCode: 3, signal: null, timedOut: false });
    expect(result.stdout.toString()).toBe('done\n');
  });
});
