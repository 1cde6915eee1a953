/**
 * What only the native spawn primitive (native/spawn.c) sees, and how it behaves where the
 * kernel cannot do what it needs: real-time signals, files that are not programs, an empty
 * working directory, descriptors it must not hand on, and — through an LD_PRELOAD fault
 * injection (test/fixtures/native/fault-inject.c) — a kernel without pidfd_open or without
 * waitid(P_PIDFD), where it must step aside for Node's spawn or still report every exit.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../src/spawn/index.js';
import { usableAddon } from '../../src/spawn/index.js';
import { NATIVE_SKIP_REASON, NATIVE_TESTED, usePrimitive } from '../helpers/primitive.js';

const ADDON = fileURLToPath(new URL('../../build/Release/probelet_spawn.node', import.meta.url));
const FAULT_SOURCE = fileURLToPath(new URL('../fixtures/native/fault-inject.c', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'spawn-native-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('usableAddon: the addon serves only where the kernel lets it watch a child', () => {
  const spawn = (): void => undefined;
  it('takes an addon whose supported() says yes, and nothing else', () => {
    const addon = { spawn, supported: () => true };
    expect(usableAddon(addon)).toBe(addon);
    expect(usableAddon({ spawn, supported: () => false })).toBeNull();
    expect(usableAddon({ spawn })).toBeNull();
    expect(usableAddon(null)).toBeNull();
  });
});

describe.skipIf(!NATIVE_TESTED)(`the native primitive${NATIVE_SKIP_REASON}`, () => {
  usePrimitive('native');

  it('a child ended by a real-time signal exits 128 + its number, not as a SIGKILL', async () => {
    const run = await runProcess({ argv: ['sh', '-c', 'kill -40 $$'] });
    expect(run).toMatchObject({ exitCode: 168, signal: null });
  });

  it('a file that is not a program fails to start with exec format error, as an exec in a container does', async () => {
    const file = join(dir, 'no-shebang');
    writeFileSync(file, 'echo should not run\n');
    chmodSync(file, 0o755);
    const run = await runProcess({ argv: [file] }).catch((err: Error) => err);
    expect(run).toMatchObject({ code: 'ENOEXEC', message: `fork/exec ${file}: exec format error` });
  });

  it('an empty working directory is this one, as for Node spawn and Go', async () => {
    const run = await runProcess({ argv: ['pwd'], cwd: '' });
    expect(run.stdout.toString()).toBe(`${process.cwd()}\n`);
  });
});

/** A cc to build the fault injection with: CI has one (it builds the addon). */
const CC = spawnSync('cc', ['--version']).status === 0;
const FAULTS_TESTED = NATIVE_TESTED && (CC || process.env.PROBELET_REQUIRE_NATIVE === '1');
const FAULT_SKIP = FAULTS_TESTED ? '' : ' (skipped: needs the addon and a C compiler, cc, to build the LD_PRELOAD fault injection)';

/**
 * Runs a Node process that loads the addon with the fault injection preloaded; with
 * `command`, it starts `sh -c command` through the addon (with an extra inherited,
 * non-close-on-exec descriptor 3) and reports the exit and what the command printed.
 */
function underFaults(faults: Record<string, string>, command?: string): { supported: boolean; exit?: [number, number]; out?: string; timedOut?: boolean } {
  const lib = join(dir, 'fault-inject.so');
  execFileSync('cc', ['-shared', '-fPIC', '-o', lib, FAULT_SOURCE, '-ldl']);
  const script = `
    const net = require('node:net');
    const addon = require(${JSON.stringify(ADDON)});
    const report = { supported: addon.supported() };
    const done = () => { process.stdout.write(JSON.stringify(report)); process.exit(0); };
    const timer = setTimeout(() => { report.timedOut = true; done(); }, 5000);
    if (!process.env.COMMAND) done();
    let out = '', pending = 2;
    const finish = () => { if (--pending === 0) { clearTimeout(timer); report.out = out; done(); } };
    addon.spawn('/bin/sh', ['sh', '-c', process.env.COMMAND], null, null, (error, pid, stdoutFd, stderrFd) => {
      if (error) { report.startError = error; clearTimeout(timer); done(); return; }
      const stdout = new net.Socket({ fd: stdoutFd, readable: true, writable: false });
      stdout.on('data', (d) => { out += d; }).on('close', finish);
      new net.Socket({ fd: stderrFd, readable: true, writable: false }).resume();
    }, (code, signal) => { report.exit = [code, signal]; finish(); });
  `;
  const child = spawnSync(process.execPath, ['-e', script], {
    env: { ...process.env, LD_PRELOAD: lib, ...faults, ...(command === undefined ? {} : { COMMAND: command }) },
    stdio: ['ignore', 'pipe', 'inherit', 'pipe'],
    encoding: 'utf8',
    timeout: 20_000,
  });
  return JSON.parse(child.stdout) as ReturnType<typeof underFaults>;
}

describe.skipIf(!FAULTS_TESTED)(`the addon on a kernel that lacks what it needs${FAULT_SKIP}`, () => {
  it('says it is supported on this one, and starts a command with only stdin, stdout and stderr open', () => {
    const report = underFaults({}, 'ls /proc/$$/fd; exit 7');
    expect(report.supported).toBe(true);
    expect(report.exit).toEqual([7, 0]);
    // Descriptor 3 of the Node process (inherited, not close-on-exec) must not reach it.
    expect(report.out?.trim().split('\n').sort()).toEqual(['0', '1', '2']);
  });

  it('without pidfd_open: not supported (Node spawn serves instead of every command failing)', () => {
    expect(underFaults({ PROBELET_FAULT_NO_PIDFD: '1' }).supported).toBe(false);
  });

  it('without waitid(P_PIDFD): not supported, and an exit is still reported (reaped by waitpid), not spun on', () => {
    const report = underFaults({ PROBELET_FAULT_NO_WAITID_PIDFD: '1' }, 'exit 7');
    expect(report.supported).toBe(false);
    expect(report).toMatchObject({ exit: [7, 0] });
    expect(report.timedOut).toBeUndefined();
  });
});
