import { describe, expect, it } from 'vitest';
import type { EnvVar } from '../../src/api/types.js';
import { MAX_PROBE_OUTPUT_BYTES } from '../../src/probe/constants.js';
import { ExecTimeoutError, expandCommandOnlyStatic, probeExec } from '../../src/probe/exec.js';
import type { CommandRunner } from '../../src/probe/types.js';

interface Call {
  containerID: string;
  cmd: string[];
  timeoutMs: number;
}

/** A runner scripted with one answer (or rejection) that records what it was asked. */
function fakeRunner(answer: { output: string; exitCode: number } | { reject: unknown }): CommandRunner & {
  calls: Call[];
} {
  const calls: Call[] = [];
  return {
    calls,
    runInContainer(containerID, cmd, timeoutMs) {
      calls.push({ containerID, cmd: [...cmd], timeoutMs });
      if ('reject' in answer) return Promise.reject(answer.reject);
      return Promise.resolve(answer);
    },
  };
}

describe('probeExec — T48 TestExec', () => {
  const elevenKiB = 'x'.repeat(11 * 1024);

  it.each([
    ['48.1 OK, no error', { output: 'OK', exitCode: 0 }, 'success', 'OK'],
    // Our runner contract has no separate "exit error with code 0": both are exitCode 0.
    ['48.2 OK, exit code 0', { output: 'OK', exitCode: 0 }, 'success', 'OK'],
    ['48.3 11 KiB of output', { output: elevenKiB, exitCode: 0 }, 'success', elevenKiB.slice(0, 10240)],
    ['48.5 no output, exit code 1', { output: '', exitCode: 1 }, 'failure', ''],
  ] as const)('%s', async (_name, answer, result, output) => {
    const outcome = await probeExec(fakeRunner(answer), 'test://c', ['testcmd'], 1000);
    expect(outcome).toEqual({ result, output });
  });

  it('48.4 generic error → unknown, empty output, error set', async () => {
    const outcome = await probeExec(fakeRunner({ reject: new Error('test error') }), 'test://c', ['testcmd'], 1000);
    expect(outcome.result).toBe('unknown');
    expect(outcome.output).toBe('');
    expect(outcome.error?.message).toBe('test error');
  });

  it('48.6 timed-out error → failure with the error text as output, no error', async () => {
    const timeout = new ExecTimeoutError(new Error('command timed out: command testcmd timed out'), 1000);
    const outcome = await probeExec(fakeRunner({ reject: timeout }), 'test://c', ['testcmd'], 1000);
    expect(outcome).toEqual({ result: 'failure', output: 'command timed out: command testcmd timed out' });
  });

  it('48.6 any error named TimeoutError counts; the sentinel prefix is added once', async () => {
    const plain = Object.assign(new Error('command testcmd timed out'), { name: 'TimeoutError' });
    const outcome = await probeExec(fakeRunner({ reject: plain }), 'test://c', ['testcmd'], 1000);
    expect(outcome).toEqual({ result: 'failure', output: 'command timed out: command testcmd timed out' });
    const bare = await probeExec(fakeRunner({ reject: new ExecTimeoutError(undefined, 1000) }), 'c', ['x'], 1000);
    expect(bare).toEqual({ result: 'failure', output: 'command timed out' });
  });

  it.skip('48.7 timed-out error with gate ExecProbeTimeout off → unknown: skipped: ExecProbeTimeout is locked on since 1.35', () => {
    // Not applicable: the gate cannot be turned off in the kubelet version we reproduce.
  });

  it('a failure carries the output only, never the exit code', async () => {
    const outcome = await probeExec(fakeRunner({ output: 'boom\n', exitCode: 3 }), 'test://c', ['x'], 1000);
    expect(outcome).toEqual({ result: 'failure', output: 'boom\n' });
  });

  it('cuts at 10240 bytes, not characters', async () => {
    const wide = 'é'.repeat(6000); // 12000 bytes
    const outcome = await probeExec(fakeRunner({ output: wide, exitCode: 0 }), 'test://c', ['x'], 1000);
    expect(Buffer.byteLength(outcome.output)).toBe(MAX_PROBE_OUTPUT_BYTES);
    expect(outcome.output).toBe('é'.repeat(5120));
  });

  it('a rejection that is not an Error still errors the probe', async () => {
    const outcome = await probeExec(fakeRunner({ reject: 'runtime gone' }), 'test://c', ['x'], 1000);
    expect(outcome.result).toBe('unknown');
    expect(outcome.error).toBeInstanceOf(Error);
    expect(outcome.error?.message).toBe('runtime gone');
  });
});

describe('probeExec — T30 TestNewExecInContainer', () => {
  it('hands container ID, command and timeout to the runner unchanged', async () => {
    const runner = fakeRunner({ output: 'foo', exitCode: 0 });
    const outcome = await probeExec(runner, 'docker://containerID', ['/foo', 'bar'], 2500);
    expect(runner.calls).toEqual([{ containerID: 'docker://containerID', cmd: ['/foo', 'bar'], timeoutMs: 2500 }]);
    expect(outcome).toEqual({ result: 'success', output: 'foo' });
  });

  it('keeps only the output limit of a larger output', async () => {
    const big = 'y'.repeat(20 * 1024);
    const outcome = await probeExec(fakeRunner({ output: big, exitCode: 0 }), 'docker://containerID', ['/foo'], 1000);
    expect(outcome.output).toBe(big.slice(0, MAX_PROBE_OUTPUT_BYTES));
  });

  it('keeps the output gathered before an error, with the error', async () => {
    const bad = Object.assign(new Error('bad'), { output: 'foo' });
    const outcome = await probeExec(fakeRunner({ reject: bad }), 'docker://containerID', ['/foo', 'bar'], 1000);
    expect(outcome).toEqual({ result: 'unknown', output: 'foo', error: bad });
  });
});

describe('ExecTimeoutError — T49', () => {
  it('TestNewTimeoutError: from (nothing, 0) has no inner error and zero timeout', () => {
    const err = new ExecTimeoutError(undefined, 0);
    expect(err.cause).toBeUndefined();
    expect(err.timeoutMs).toBe(0);
    expect(err.name).toBe('TimeoutError');
    expect(err).toBeInstanceOf(Error);
  });

  it('TestError: its text is the wrapped error text', () => {
    const inner = new Error('some example error text');
    const err = new ExecTimeoutError(inner, 0);
    expect(err.message).toBe('some example error text');
    expect(err.cause).toBe(inner);
  });

  it('TestTimeout: keeps the given timeout', () => {
    expect(new ExecTimeoutError(undefined, 1).timeoutMs).toBe(1);
  });
});

describe('expandCommandOnlyStatic — T29 rows 29.9–29.10 and §5.4', () => {
  it('29.9 a command without references reaches the runner exactly', async () => {
    const runner = fakeRunner({ output: '', exitCode: 0 });
    const command = expandCommandOnlyStatic(['/bin/bash', '-c', 'some script'], undefined);
    await probeExec(runner, 'test://foobar', command, 1000);
    expect(runner.calls[0]?.cmd).toEqual(['/bin/bash', '-c', 'some script']);
  });

  it('29.10 $(A) is expanded from env, an undefined $(B) stays', async () => {
    const runner = fakeRunner({ output: '', exitCode: 0 });
    const command = expandCommandOnlyStatic(['/bin/bash', '-c', 'some $(A) $(B)'], [{ name: 'A', value: 'script' }]);
    await probeExec(runner, 'test://foobar', command, 1000);
    expect(runner.calls[0]?.cmd).toEqual(['/bin/bash', '-c', 'some script $(B)']);
  });

  const env: EnvVar[] = [
    { name: 'A', value: 'first' },
    { name: 'FROM_REF', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'EMPTY', value: '' },
    { name: 'A', value: 'later' },
    { name: 'CHAIN', value: '$(A)' },
    { name: 'BOTH', value: 'literal', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
  ];

  it.each([
    ['$(A)', 'later', 'a later duplicate wins'],
    ['$(FROM_REF)', '', 'a valueFrom-only name expands to the empty string'],
    ['x$(EMPTY)y', 'xy', 'an empty literal value'],
    ['$(BOTH)', 'literal', 'the literal value is what counts'],
    ['$(NOPE)', '$(NOPE)', 'an undefined name stays verbatim'],
    ['$$(A)', '$(A)', '$$ escapes the reference'],
    ['$$', '$', '$$ is a single $'],
    ['$(A', '$(A', 'an unclosed reference is kept'],
    ['$A $HOME ${A}', '$A $HOME ${A}', 'shell variables are untouched'],
    ['$', '$', 'a trailing $ is kept'],
    ['$(CHAIN)', '$(A)', 'expansion is not recursive'],
  ])('%j → %j (%s)', (input, expected) => {
    expect(expandCommandOnlyStatic([input], env)).toEqual([expected]);
  });

  it('expands every element and leaves the input array alone', () => {
    const command = ['sh', '-c', 'echo $(A)', '$(FROM_REF)'];
    expect(expandCommandOnlyStatic(command, env)).toEqual(['sh', '-c', 'echo later', '']);
    expect(command).toEqual(['sh', '-c', 'echo $(A)', '$(FROM_REF)']);
    expect(expandCommandOnlyStatic([], env)).toEqual([]);
  });
});
