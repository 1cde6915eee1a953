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
 *   the addon was not built or cannot load, on other systems than Linux, or when
 *   `PROBELET_NATIVE_SPAWN=0` (read at every start, so tests can run both).
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { constants as osConstants } from 'node:os';
import type { Readable } from 'node:stream';
import { getSystemErrorName } from 'node:util';

export type PrimitiveName = 'native' | 'node';

/** How the leader ended: `code` when it exited, `signal` when a signal ended it. */
export interface PrimitiveExit {
  code: number | null;
  signal: NodeJS.Signals | null;
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
  ): void;
}

let addon: SpawnAddon | null | undefined;

/** The addon, or null when it is not built or does not load (then Node's spawn serves). */
function loadAddon(): SpawnAddon | null {
  if (addon !== undefined) return addon;
  addon = null;
  if (process.platform !== 'linux') return addon;
  try {
    // src/util and dist/util are both two levels below the package root, where node-gyp builds.
    const required: unknown = createRequire(import.meta.url)('../../build/Release/probelet_spawn.node');
    if (typeof (required as Partial<SpawnAddon>).spawn === 'function') addon = required as SpawnAddon;
  } catch {
    // Not built (no compiler at install) or not loadable: the fallback is complete.
  }
  return addon;
}

/** Whether the addon was built and loads here (whatever PROBELET_NATIVE_SPAWN says). */
export function nativeAddonLoaded(): boolean {
  return loadAddon() !== null;
}

/** The primitive the next start will use. */
export function currentPrimitive(): PrimitiveName {
  return process.env.PROBELET_NATIVE_SPAWN !== '0' && loadAddon() !== null ? 'native' : 'node';
}

/** Whether starts are cheap here (native): then a spawner process is not worth having. */
export function nativeSpawnAvailable(): boolean {
  return currentPrimitive() === 'native';
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

function startNative(native: SpawnAddon, { argv, env, cwd }: PrimitiveOptions): Promise<StartedProcess> {
  return new Promise<StartedProcess>((resolve, reject) => {
    const exit = exitSignal();
    native.spawn(
      argv[0],
      argv,
      // null: the addon passes `environ`, which process.env writes through to.
      env === undefined ? null : Object.entries(env).map(([k, v]) => `${k}=${v}`),
      cwd ?? null,
      (error, pid, outFd, errFd) => {
        if (error !== 0) {
          const code = getSystemErrorName(error);
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
      (code, signal) => exit.fire(signal === 0 ? { code, signal: null } : { code: null, signal: signalName(signal) }),
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

function signalName(signal: number): NodeJS.Signals {
  signalNames ??= new Map(Object.entries(osConstants.signals).map(([name, n]) => [n, name as NodeJS.Signals] as const));
  return signalNames.get(signal) ?? 'SIGKILL';
}

function startNode({ argv, env, cwd }: PrimitiveOptions): Promise<StartedProcess> {
  return new Promise<StartedProcess>((resolve, reject) => {
    const [file, ...args] = argv;
    const child = spawn(file, args, {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: env ?? process.env,
      cwd,
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
      exit.fire({ code, signal });
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
