/**
 * Starts commands through a small long-lived spawner process (spawner-main.ts) instead of
 * from this process.
 *
 * Why: `fork` costs in proportion to the forking process's memory, and Node's `spawn`
 * forks synchronously on the event loop. From an engine with 100+ MB of heap, 100 execs
 * per second took 14–18 ms of CPU each and stalled the loop for over a second, so healthy
 * `/bin/true` probes timed out. The spawner is a bare Node process: the fork, the exec and
 * the /proc scans after each command happen there, and this process only writes and reads
 * one line of JSON per event.
 *
 * What stays the same: every command goes through process.ts's `spawnGroup` in the
 * spawner, so it keeps all of its guarantees; the returned {@link ProcessGroup} behaves
 * like a local one (kill, terminate, exited). Timers (timeouts, terminate's grace) run on
 * the caller's clock, starting when the spawner reports the command *started*: a busy
 * machine delays the start, never eats into the command's timeout (as Docker measures
 * exec start latency apart from the command).
 *
 * When the native spawn primitive is available (spawn-primitive.ts: `posix_spawn`, whose cost
 * does not grow with this process's memory and which blocks only until the exec), there is
 * no spawner process: every command is started directly, which measured cheaper than the
 * spawner's own JSON round trip. The spawner is the fallback for when the addon is not built.
 *
 * Failure handling: if the spawner dies, the trees it was running are killed from here
 * (found through /proc like any tree) and reported as killed (137); commands not started
 * yet go to a new spawner. After {@link MAX_DEATHS} deaths within {@link DEATH_WINDOW_MS}
 * (or if it cannot be started at all) commands are spawned directly from this process.
 * Commands that stream output (`onOutput`, container logs) are always spawned directly, and so
 * are those asked for while the spawner is still starting (≈ 0.1 s; seconds on a loaded
 * machine), so that the first probes of a kubelet are not delayed by it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { realClock } from '../util/clock.js';
import {
  DEFAULT_MAX_OUTPUT_BYTES,
  killProcessTree,
  spawnGroup as spawnDirect,
  type ProcessExit,
  type ProcessGroup,
  type SpawnGroupOptions,
  spawnError,
} from './process.js';
import { moduleEntry } from '../util/module-entry.js';
import { currentPrimitive } from './spawn-primitive.js';
import type { SpawnerReply, SpawnerRequest } from './spawner-protocol.js';

/** Starts process groups; `close()` kills what still runs and stops the spawner process. */
export interface Spawner {
  /** Same contract as process.ts's `spawnGroup`. */
  spawnGroup(options: SpawnGroupOptions): Promise<ProcessGroup>;
  /**
   * Starts the spawner process if need be; true once it serves commands, false when commands
   * are spawned directly (closed, or the spawner kept dying).
   */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

/** This many spawner deaths within DEATH_WINDOW_MS and we spawn directly from then on. */
export const MAX_DEATHS = 3;
export const DEATH_WINDOW_MS = 60_000;

interface Run {
  readonly options: SpawnGroupOptions;
  readonly resolve: (group: ProcessGroup) => void;
  readonly reject: (err: Error) => void;
  /** 0 until started. */
  pid: number;
  running: boolean;
  finish: ((exit: ProcessExit) => void) | undefined;
}

const EMPTY = Buffer.alloc(0);

/** One spawner process at a time, restarted when it dies; see the file comment. */
class HelperSpawner implements Spawner {
  private child: ChildProcess | undefined;
  /** The current child said it is ready. */
  private ready_ = false;
  private readonly readyWaiters: Array<(ready: boolean) => void> = [];
  private readonly runs = new Map<number, Run>();
  private nextId = 1;
  private deaths: number[] = [];
  private direct = false;
  private closing: Promise<void> | undefined;

  spawnGroup(options: SpawnGroupOptions): Promise<ProcessGroup> {
    if (this.closing) return Promise.reject(spawnError('exec: spawner is closed', 'ECANCELED'));
    if (this.direct || currentPrimitive() === 'native' || options.onOutput !== undefined || !options.argv[0]) {
      return spawnDirect(options);
    }
    return new Promise<ProcessGroup>((resolve, reject) => {
      this.dispatch({ options, resolve, reject, pid: 0, running: false, finish: undefined });
    });
  }

  ready(): Promise<boolean> {
    if (this.direct || this.closing || currentPrimitive() === 'native') return Promise.resolve(false);
    if (this.ready_) return Promise.resolve(true);
    refAll(this.child ?? this.start(), true);
    return new Promise<boolean>((resolve) => this.readyWaiters.push(resolve));
  }

  close(): Promise<void> {
    this.closing ??= this.stop();
    this.wakeWaiters(false);
    return this.closing;
  }

  private wakeWaiters(ready: boolean): void {
    for (const resolve of this.readyWaiters.splice(0)) resolve(ready);
    if (this.child !== undefined && this.runs.size === 0 && this.closing === undefined) refAll(this.child, false);
  }

  private async stop(): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    refAll(child, true);
    // The spawner kills whatever still runs when its stdin ends, then exits.
    child.stdin?.end();
    await exited;
  }

  private dispatch(run: Run): void {
    if (this.direct) {
      spawnDirect(run.options).then(run.resolve, run.reject);
      return;
    }
    const child = this.child ?? this.start();
    if (!this.ready_) {
      spawnDirect(run.options).then(run.resolve, run.reject);
      return;
    }
    const id = this.nextId++;
    this.runs.set(id, run);
    refAll(child, true);
    const { argv, env, cwd, maxOutputBytes } = run.options;
    const request: SpawnerRequest = {
      t: 'run',
      id,
      argv,
      // The child sees this process's environment as it is now, as with a direct spawn.
      env: env ?? currentEnv(),
      cwd,
      max: Math.max(0, maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES),
    };
    child.stdin?.write(`${JSON.stringify(request)}\n`);
  }

  private start(): ChildProcess {
    const child = spawn(process.execPath, spawnerArgs(), {
      // Its own session: a Ctrl-C at the terminal reaches the engine, which then closes us.
      detached: true,
      stdio: ['pipe', 'pipe', 'inherit'],
      windowsHide: true,
    });
    this.child = child;
    this.ready_ = false;
    child.on('error', () => this.died(child));
    child.once('exit', () => this.died(child));
    child.stdin?.on('error', () => undefined); // a dead spawner: handled on 'exit'
    if (child.stdout) createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => this.onReply(line));
    // Idle (no command of ours in it, nobody waiting for it), it keeps no one alive.
    refAll(child, false);
    return child;
  }

  private onReply(line: string): void {
    let reply: SpawnerReply;
    try {
      reply = JSON.parse(line) as SpawnerReply;
    } catch {
      return;
    }
    if (reply.t === 'ready') {
      this.ready_ = true;
      this.wakeWaiters(true);
      return;
    }
    const run = this.runs.get(reply.id);
    if (run === undefined) return;
    if (reply.t === 'started') {
      run.pid = reply.pid;
      run.running = true;
      run.resolve(this.group(reply.id, run));
      return;
    }
    this.runs.delete(reply.id);
    if (this.runs.size === 0 && this.child) refAll(this.child, false);
    if (reply.t === 'error') {
      run.reject(spawnError(reply.message, reply.code));
      return;
    }
    run.running = false;
    run.finish?.({
      exitCode: reply.code,
      signal: reply.signal,
      stdout: Buffer.from(reply.out, 'base64'),
      stderr: Buffer.from(reply.err, 'base64'),
    });
  }

  private group(id: number, run: Run): ProcessGroup {
    const clock = run.options.clock ?? realClock;
    const exited = new Promise<ProcessExit>((resolve) => {
      run.finish = resolve;
    });
    const kill = (signal: NodeJS.Signals = 'SIGKILL'): void => {
      if (!run.running || this.child === undefined) return;
      const request: SpawnerRequest = { t: 'kill', id, signal };
      this.child.stdin?.write(`${JSON.stringify(request)}\n`);
    };
    return {
      pid: run.pid,
      get running() {
        return run.running;
      },
      exited,
      kill,
      terminate(graceMs: number) {
        if (!run.running) return exited;
        kill('SIGTERM');
        const timer = clock.setTimeout(() => kill('SIGKILL'), graceMs);
        return exited.finally(() => clock.clearTimeout(timer));
      },
    };
  }

  /** The spawner is gone: kill what it ran, re-dispatch what it had not started yet. */
  private died(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = undefined;
    this.ready_ = false;
    const now = realClock.now();
    this.deaths = [...this.deaths.filter((t) => now - t < DEATH_WINDOW_MS), now];
    if (this.deaths.length >= MAX_DEATHS) this.direct = true;
    const runs = [...this.runs.values()];
    this.runs.clear();
    for (const run of runs) {
      if (run.pid === 0) {
        if (this.closing) run.reject(spawnError('exec: spawner is closed', 'ECANCELED'));
        else this.dispatch(run);
        continue;
      }
      if (run.running) killProcessTree(run.pid, 'SIGKILL');
      run.running = false;
      run.finish?.({
        exitCode: 137,
        signal: 'SIGKILL',
        stdout: EMPTY,
        stderr: EMPTY,
        lost: spawnError('exec: the spawner process died while the command ran; its outcome is unknown', 'EPIPE'),
      });
    }
    // Someone waits for a spawner: start the next one (or give up, when direct).
    if (this.readyWaiters.length === 0) return;
    if (this.direct || this.closing) this.wakeWaiters(false);
    else refAll(this.start(), true);
  }
}

/**
 * V8 flags of the spawner: a small young generation and no helper threads keep it at
 * ≈ 55 MB instead of ≈ 70 MB, and `fork` costs in proportion to the forking process's
 * memory (measured: ≈ 15 % less CPU per exec).
 */
const SPAWNER_FLAGS = ['--single-threaded', '--max-semi-space-size=1'];

/** The spawner's node arguments: the built script, or (from a source checkout) the .ts through TypeScript. */
function spawnerArgs(): string[] {
  const entry = moduleEntry(import.meta.url, 'spawner-main');
  return [...SPAWNER_FLAGS, ...entry.execArgv, entry.file];
}

function currentEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return env;
}

/** While commands run, the spawner's pipes keep this process alive; idle, they do not. */
function refAll(child: ChildProcess, on: boolean): void {
  if (on) child.ref();
  else child.unref();
  for (const stream of [child.stdin, child.stdout]) {
    if (stream instanceof Socket) {
      if (on) stream.ref();
      else stream.unref();
    }
  }
}

let shared: HelperSpawner | undefined;
let leases = 0;

/**
 * A lease on the process-wide spawner (one spawner process serves every runner and
 * runtime of this process; it starts on the first command). `close()` ends the lease; the
 * last one to close stops the spawner, killing whatever it still runs. A spawner left
 * open never keeps this process alive when idle, and exits by itself with this process.
 */
export function openSpawner(): Spawner {
  const core = (shared ??= new HelperSpawner());
  leases++;
  let open = true;
  return {
    spawnGroup: (options) =>
      open ? core.spawnGroup(options) : Promise.reject(spawnError('exec: spawner is closed', 'ECANCELED')),
    ready: () => (open ? core.ready() : Promise.resolve(false)),
    async close() {
      if (!open) return;
      open = false;
      leases--;
      if (leases > 0 || shared !== core) return;
      shared = undefined;
      await core.close();
    },
  };
}
