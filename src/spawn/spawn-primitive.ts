/**
 * The one primitive under process.ts: start a program in a session (and process group) of
 * its own, stdin /dev/null, stdout and stderr on pipes, and report when it exited.
 * Everything else (tree kill, output caps, exit codes, timeouts, leftovers) is process.ts's.
 *
 * Two implementations:
 * - `native`: the addon built from native/spawn.c at `npm ci` (binding.gyp). glibc's
 *   `posix_spawn` uses clone(CLONE_VM | CLONE_VFORK), so a start costs the same from a
 *   200 MB engine as from a small process, and it runs on a libuv pool thread, so the event
 *   loop never waits for an exec (≈ 0.75 ms of CPU per `/bin/true` with children, against
 *   ≈ 1.6 ms for Node's spawn). Exit comes from a pidfd polled on the event loop.
 * - `node`: `child_process.spawn` (fork, then wait for the exec, in this thread), used when
 *   the addon was not built or cannot load, when the kernel cannot watch a child through a
 *   pidfd (before Linux 5.4, or a seccomp filter that refuses it: the addon's `supported()`),
 *   on other systems than Linux, or when `PROBELET_NATIVE_SPAWN=0` (read at every start,
 *   so tests can run both). Two things only the native one sees: a child ended by a
 *   real-time signal (Node reports neither code nor signal), and a file without a `#!`
 *   line, which Node's spawn runs through `/bin/sh` where an exec (and the kubelet's, in
 *   a container) fails with `exec format error`.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { constants as osConstants } from 'node:os';
import type { Readable } from 'node:stream';
import { getSystemErrorName } from 'node:util';

export type PrimitiveName = 'native' | 'node';

/** How the leader ended: `code` when it exited, `signal` (and its number) when a signal ended it. */
export interface PrimitiveExit {
  code: number | null;
  /** Null for a signal Node has no name for (a real-time one): `signalNumber` still says which. */
  signal: NodeJS.Signals | null;
  signalNumber: number | null;
}

export interface StartedProcess {
  readonly pid: number;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /**
   * This process's descriptors of the stdout and stderr pipes (native only: Node's are
   * socketpairs, whose other end /proc does not name). Valid while the stream is open.
   */
  readonly pipeFds?: readonly [stdout: number, stderr: number];
  /** Called once, after the leader was reaped. */
  onExit(listener: (exit: PrimitiveExit) => void): void;
}

export interface PrimitiveOptions {
  /** Program and arguments; `argv[0]` is the file, looked up in PATH when it holds no '/'. */
  argv: readonly [string, ...string[]];
  /** The complete environment; default this process's, as it is now. */
  env: Readonly<Record<string, string>> | undefined;
  cwd: string | undefined;
  /** A cgroup's `cgroup.procs` the child joins before its exec (native only; see cgroup.ts). */
  cgroupProcs?: string;
}

/** What the addon exports (native/spawn.c). */
interface SpawnAddon {
  spawn(
    file: string,
    argv: readonly string[],
    env: readonly string[] | null,
    cwd: string | null,
    /** `error` is 0 or a negative errno (libuv's numbering). */
    onStart: (error: number, pid: number, stdoutFd: number, stderrFd: number) => void,
    onExit: (code: number, signal: number) => void,
    /** Moved there right after posix_spawn returns (an older build ignores it; JS writes the pid again). */
    cgroupProcs?: string | null,
  ): void;
  /** Whether pidfds can watch a child here (see native/spawn.c). */
  supported(): boolean;
}

let addon: SpawnAddon | null | undefined;

/** The addon, or null when it is not built or does not load (then Node's spawn serves). */
function loadAddon(): SpawnAddon | null {
  if (addon !== undefined) return addon;
  addon = null;
  if (process.platform !== 'linux') return addon;
  try {
    // src/util and dist/util are both two levels below the package root, where node-gyp builds.
    addon = usableAddon(createRequire(import.meta.url)('../../build/Release/probelet_spawn.node'));
  } catch {
    // Not built (no compiler at install) or not loadable: the fallback is complete.
  }
  return addon;
}

/**
 * The addon, if it is one and this kernel lets it watch a child. Without that check every
 * command would fail to start (no pidfd), or start and never be seen to end (no
 * waitid(P_PIDFD)), where Node's spawn works.
 */
export function usableAddon(required: unknown): SpawnAddon | null {
  const candidate = required as Partial<SpawnAddon> | null | undefined;
  if (typeof candidate?.spawn !== 'function' || typeof candidate.supported !== 'function') return null;
  return candidate.supported() ? (candidate as SpawnAddon) : null;
}

/** Whether the addon was built and loads here (whatever PROBELET_NATIVE_SPAWN says). */
export function nativeAddonLoaded(): boolean {
  return loadAddon() !== null;
}

/** The primitive the next start will use. */
export function currentPrimitive(): PrimitiveName {
  return process.env.PROBELET_NATIVE_SPAWN !== '0' && loadAddon() !== null ? 'native' : 'node';
}

/**
 * Starts `options.argv`. Rejects with an errno error (`code` 'ENOENT', 'EACCES', ..., and
 * `errno`, libuv's negative number) when it could not start, as Node's spawn does.
 */
export function startProcess(options: PrimitiveOptions): Promise<StartedProcess> {
  const native = currentPrimitive() === 'native' ? addon : null;
  // A NUL byte cannot reach exec; Node's spawn says so in its own words.
  if (native && !hasNul(options)) return startNative(native, options);
  return startNode(options);
}

function hasNul({ argv, env, cwd }: PrimitiveOptions): boolean {
  if (argv.some((a) => a.includes('\0')) || cwd?.includes('\0')) return true;
  return env !== undefined && Object.entries(env).some(([k, v]) => k.includes('\0') || v.includes('\0'));
}

function startNative(native: SpawnAddon, { argv, env, cwd, cgroupProcs }: PrimitiveOptions): Promise<StartedProcess> {
  return new Promise<StartedProcess>((resolve, reject) => {
    const exit = exitSignal();
    native.spawn(
      argv[0],
      argv,
      // null: the addon passes `environ`, which process.env writes through to.
      env === undefined ? null : Object.entries(env).map(([k, v]) => `${k}=${v}`),
      // An empty directory is this one, as for Node's spawn and Go's os/exec.
      cwd || null,
      (error, pid, outFd, errFd) => {
        if (error !== 0) {
          const code = errnoName(error);
          reject(Object.assign(new Error(`spawn ${argv[0]} ${code}`), { code, errno: error }));
          return;
        }
        resolve({
          pid,
          stdout: new Socket({ fd: outFd, readable: true, writable: false }),
          stderr: new Socket({ fd: errFd, readable: true, writable: false }),
          pipeFds: [outFd, errFd],
          onExit: exit.listen,
        });
      },
      (code, signal) =>
        exit.fire(signal === 0 ? { code, signal: null, signalNumber: null } : { code: null, signal: signalName(signal), signalNumber: signal }),
      cgroupProcs ?? null,
    );
  });
}

/** An exit that listeners may ask for before or after it happened. */
function exitSignal(): { fire(exit: PrimitiveExit): void; listen(fn: (exit: PrimitiveExit) => void): void } {
  let exit: PrimitiveExit | undefined;
  const listeners: Array<(exit: PrimitiveExit) => void> = [];
  return {
    fire(value) {
      exit = value;
      for (const fn of listeners.splice(0)) fn(value);
    },
    listen(fn) {
      if (exit) fn(exit);
      else listeners.push(fn);
    },
  };
}

let signalNames: Map<number, NodeJS.Signals> | undefined;

function signalName(signal: number): NodeJS.Signals | null {
  signalNames ??= new Map(Object.entries(osConstants.signals).map(([name, n]) => [n, name as NodeJS.Signals] as const));
  return signalNames.get(signal) ?? null;
}

let errnoNames: Map<number, string> | undefined;

/** Moves `pid` into the cgroup whose `cgroup.procs` is `procs`; false when it could not. */
export function joinCgroup(procs: string, pid: number): boolean {
  try {
    writeFileSync(procs, String(pid));
    return true;
  } catch {
    return false;
  }
}

/**
 * libuv's name for a negative errno, or the system's where libuv has none (ENOEXEC: a file
 * that is not a program), instead of `Unknown system error -8`.
 */
function errnoName(error: number): string {
  const name = getSystemErrorName(error);
  if (!name.startsWith('Unknown system error')) return name;
  errnoNames ??= new Map(Object.entries(osConstants.errno).map(([key, n]) => [n, key] as const));
  return errnoNames.get(-error) ?? name;
}

/** No cgroup here: Node's spawn has no way in before the exec (see cgroup.ts). */
function startNode({ argv, env, cwd }: PrimitiveOptions): Promise<StartedProcess> {
  return new Promise<StartedProcess>((resolve, reject) => {
    const [file, ...args] = argv;
    const child = spawn(file, args, {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: env ?? process.env,
      cwd: cwd || undefined,
      windowsHide: true,
    });
    let started = false;
    const exit = exitSignal();
    // Errors after start can only come from child.kill(), which is never called; the
    // listener stays so that no 'error' event is ever unhandled.
    child.on('error', (err) => {
      if (!started) reject(err);
    });
    child.once('exit', (code, signal) => {
      exit.fire({ code, signal, signalNumber: signal === null ? null : (osConstants.signals[signal] ?? null) });
    });
    child.once('spawn', () => {
      started = true;
      if (!child.stdout || !child.stderr) throw new Error('spawn: stdio pipes missing');
      resolve({
        pid: child.pid ?? 0,
        stdout: child.stdout,
        stderr: child.stderr,
        onExit: exit.listen,
      });
    });
  });
}
