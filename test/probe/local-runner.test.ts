import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_PROBE_OUTPUT_BYTES } from '../../src/probe/constants.js';
import { ExecTimeoutError, probeExec } from '../../src/probe/exec.js';
import { LocalCommandRunner } from '../../src/probe/local-runner.js';
import { openSpawner } from '../../src/util/spawner.js';
import { FakeClock } from '../../src/util/clock.js';
import { aliveWithMarker, eventually, useProcessMarkers } from '../helpers/processes.js';
import { NATIVE_SKIP_REASON, NATIVE_TESTED, usePrimitive } from '../helpers/primitive.js';

const tagged = useProcessMarkers();

const PATH = process.env.PATH ?? '/usr/bin:/bin';

describe('LocalCommandRunner', () => {
  it('resolves with the output and exit code of a real process', async () => {
    const runner = new LocalCommandRunner();
    expect(await runner.runInContainer('c', ['sh', '-c', 'echo hi'], 5000)).toEqual({ output: 'hi\n', exitCode: 0 });
    expect(await runner.runInContainer('c', ['sh', '-c', 'echo no; exit 3'], 5000)).toEqual({
      output: 'no\n',
      exitCode: 3,
    });
  });

  it('puts all of stdout before stderr, whatever order they were written in', async () => {
    const runner = new LocalCommandRunner();
    const run = await runner.runInContainer('c', ['sh', '-c', 'echo err1 >&2; echo out1; echo err2 >&2; echo out2'], 5000);
    expect(run.output).toBe('out1\nout2\nerr1\nerr2\n');
  });

  it('uses env and cwd from the options, or from resolve() per container', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'probelet-runner-')));
    try {
      const script = ['sh', '-c', 'printf "%s|%s|%s" "$WHO" "${HOME-unset}" "$(pwd)"'];
      const fixed = new LocalCommandRunner({ env: { PATH, WHO: 'options' }, cwd: dir });
      expect((await fixed.runInContainer('c', script, 5000)).output).toBe(`options|unset|${dir}`);

      const perContainer = new LocalCommandRunner({
        env: { PATH, WHO: 'options' },
        cwd: '/',
        resolve: (id) => (id === 'test://known' ? { env: { PATH, WHO: id }, cwd: dir } : undefined),
      });
      expect((await perContainer.runInContainer('test://known', script, 5000)).output).toBe(
        `test://known|unset|${dir}`,
      );
      const gone = perContainer.runInContainer('test://gone', script, 5000);
      await expect(gone).rejects.toThrow('container "test://gone" not found');
      await expect(gone).rejects.not.toHaveProperty('name', 'TimeoutError');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('inherits this process environment by default', async () => {
    const runner = new LocalCommandRunner();
    const run = await runner.runInContainer('c', ['sh', '-c', 'printf "%s" "$PATH"'], 5000);
    expect(run.output).toBe(PATH);
  });

  it('kills the whole group at the timeout and rejects with a TimeoutError', async () => {
    const { marker, env } = tagged();
    const runner = new LocalCommandRunner({ env });
    const cmd = ['sh', '-c', 'trap "" TERM; echo partial; setsid sleep 30 & sleep 30 & wait'];
    const started = Date.now();
    const error: unknown = await runner.runInContainer('c', cmd, 1000).catch((err: unknown) => err);
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(ExecTimeoutError);
    expect(error).toMatchObject({
      name: 'TimeoutError',
      message: `command timed out: "sh -c trap \\"\\" TERM; echo partial; setsid sleep 30 & sleep 30 & wait" timed out after 1s`,
      timeoutMs: 1000,
      output: 'partial\n',
    });
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(4000);
    expect(await eventually(() => aliveWithMarker(marker).length === 0, 1000)).toBe(true);
  });

  it('times out on the injected clock, leaving no timer', async () => {
    const { marker, env } = tagged();
    const clock = new FakeClock();
    const runner = new LocalCommandRunner({ env, clock });
    const pending = runner.runInContainer('c', ['sleep', '30'], 1500).catch((err: unknown) => err);
    await eventually(() => aliveWithMarker(marker).length === 1);
    await clock.advance(1500);
    expect(await pending).toMatchObject({
      name: 'TimeoutError',
      message: 'command timed out: "sleep 30" timed out after 1.5s',
    });
    expect(clock.pendingTimers()).toBe(0);
    expect(aliveWithMarker(marker)).toHaveLength(0);
  });

  it('keeps 10 KiB: stdout first, then stderr in what is left', async () => {
    const runner = new LocalCommandRunner();
    const floodOut = await runner.runInContainer('c', ['sh', '-c', 'head -c 20000 /dev/zero | tr "\\0" o; echo e >&2'], 5000);
    expect(floodOut.output).toBe('o'.repeat(MAX_PROBE_OUTPUT_BYTES));
    const floodErr = await runner.runInContainer('c', ['sh', '-c', 'printf out; head -c 20000 /dev/zero | tr "\\0" e >&2'], 5000);
    expect(floodErr.output).toBe(`out${'e'.repeat(MAX_PROBE_OUTPUT_BYTES - 3)}`);
  });

  it('drains a large flood without blocking the command', async () => {
    const runner = new LocalCommandRunner();
    const started = Date.now();
    const run = await runner.runInContainer('c', ['sh', '-c', 'head -c 200M /dev/zero; echo done >&2'], 30_000);
    expect(run.exitCode).toBe(0);
    expect(Buffer.byteLength(run.output)).toBe(MAX_PROBE_OUTPUT_BYTES);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('rejects with a plain error when the command does not exist', async () => {
    const runner = new LocalCommandRunner();
    const error: unknown = await runner.runInContainer('c', ['probelet-no-such-command'], 5000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: 'Error',
      message: 'exec: "probelet-no-such-command": executable file not found in $PATH',
      output: '',
    });
  });
});

describe('probeExec with real processes (LocalCommandRunner)', () => {
  const runner = new LocalCommandRunner();

  it('exit 0 → success with the output', async () => {
    expect(await probeExec(runner, 'c', ['sh', '-c', 'printf OK; exit 0'], 5000)).toEqual({
      result: 'success',
      output: 'OK',
    });
  });

  it('non-zero exit → failure with the output only', async () => {
    expect(await probeExec(runner, 'c', ['sh', '-c', 'echo not ready >&2; exit 2'], 5000)).toEqual({
      result: 'failure',
      output: 'not ready\n',
    });
  });

  it('timeout → failure with the kubelet-style timeout message', async () => {
    const { marker, env } = tagged();
    const outcome = await probeExec(new LocalCommandRunner({ env }), 'c', ['sleep', '30'], 1000);
    expect(outcome).toEqual({
      result: 'failure',
      output: 'command timed out: "sleep 30" timed out after 1s',
    });
    expect(aliveWithMarker(marker)).toHaveLength(0);
  });

  it('command not found → unknown with the error (an errored probe)', async () => {
    const outcome = await probeExec(runner, 'c', ['/nonexistent/probe'], 5000);
    expect(outcome.result).toBe('unknown');
    expect(outcome.output).toBe('');
    expect(outcome.error?.message).toBe('fork/exec /nonexistent/probe: no such file or directory');
  });
});

describe('LocalCommandRunner: where commands start (Node spawn forced)', () => {
  usePrimitive('node');

  it('starts commands in the spawner process by default, from this process with spawner: false', async () => {
    const viaSpawner = new LocalCommandRunner();
    const direct = new LocalCommandRunner({ spawner: false });
    await viaSpawner.runInContainer('c', ['true'], 5000); // opens its spawner
    const lease = openSpawner(); // the same (one per process): wait until it serves commands
    expect(await lease.ready()).toBe(true);
    await lease.close();
    const parent = async (runner: LocalCommandRunner): Promise<number> =>
      Number((await runner.runInContainer('c', ['sh', '-c', 'echo $PPID'], 5000)).output);
    expect(await parent(viaSpawner)).not.toBe(process.pid);
    expect(await parent(direct)).toBe(process.pid);
    await viaSpawner.close();
    await direct.close();
    await expect(viaSpawner.runInContainer('c', ['true'], 5000)).rejects.toThrow('exec: command runner is closed');
  });
});

describe.skipIf(!NATIVE_TESTED)(`LocalCommandRunner: where commands start (native spawn)${NATIVE_SKIP_REASON}`, () => {
  usePrimitive('native');

  it('starts commands from this process, with or without a spawner: the spawner serves none', async () => {
    const lease = openSpawner();
    for (const runner of [new LocalCommandRunner(), new LocalCommandRunner({ spawner: false })]) {
      expect(Number((await runner.runInContainer('c', ['sh', '-c', 'echo $PPID'], 5000)).output)).toBe(process.pid);
      await runner.close();
    }
    expect(await lease.ready()).toBe(false);
    await lease.close();
  });
});
