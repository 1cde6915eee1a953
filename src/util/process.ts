/**
 * The one place that starts processes (exec probes now, the local container runtime
 * later), so that every caller gets the same guarantees a container runtime gives:
 *
 * - A process runs in a process group (and session) of its own, so it can be killed
 *   with everything it started. Descendants that moved to another group or session are
 *   found through /proc (parent links, and the session id they keep) and killed too.
 * - When the group leader exits, whatever is left of its tree is killed, like the kernel
 *   tears down a container's PID namespace when its init dies. Nothing outlives a run.
 * - stdout and stderr are read as they stream; only the first `maxOutputBytes` of each
 *   are kept and the rest is read and dropped, so a flood costs neither memory nor a
 *   child blocked on a full pipe.
 * - Failure to start (ENOENT, EACCES, bad cwd) is a rejected promise with a Go-worded
 *   message (users compare it with what the kubelet prints), never an unhandled event.
 * - Exit code is the code, or 128 + signal number when a signal ended the process
 *   (SIGKILL → 137, SIGTERM → 143), as container runtimes report it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import type { Readable } from 'node:stream';
import { realClock, type Clock } from './clock.js';

/** Default bytes kept of each stream when the caller does not say. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

/**
 * How long pipes may stay open after the leader exited and its tree was killed. Only a
 * descendant that escaped beyond /proc's reach (double fork into a new session after
 * its parent died) can hold them that long; we stop waiting for it then, like Go's
 * `exec.Cmd.WaitDelay`.
 */
export const PIPE_DRAIN_GRACE_MS = 1000;

export type OutputStream = 'stdout' | 'stderr';

export interface SpawnGroupOptions {
  /** Program and arguments; no shell is involved unless the program is one. */
  argv: readonly string[];
  /** The complete environment of the child (not merged). Default: this process's. */
  env?: Readonly<Record<string, string>>;
  /** Working directory. Default: this process's. */
  cwd?: string;
  /** Bytes of stdout and, separately, of stderr kept in the result. Default 1 MiB. */
  maxOutputBytes?: number;
  /** Sees every chunk (kept or not), e.g. to write container logs. Must not throw. */
  onOutput?: (stream: OutputStream, chunk: Buffer) => void;
  /** Clock for the pipe drain grace (and, in runProcess, the timeout). */
  clock?: Clock;
}

export interface ProcessExit {
  /** Exit code, or 128 + signal number when a signal ended the leader. */
  exitCode: number;
  /** The signal that ended the leader, if any. */
  signal: NodeJS.Signals | null;
  /** First `maxOutputBytes` of stdout. */
  stdout: Buffer;
  /** First `maxOutputBytes` of stderr. */
  stderr: Buffer;
}

/** A started process and its group. */
export interface ProcessGroup {
  /** PID of the leader, which is also the process group and session id. */
  readonly pid: number;
  /** True until the leader has exited. */
  readonly running: boolean;
  /**
   * Settles (never rejects) once the leader exited, the rest of its tree was killed
   * and the pipes are closed: from then on nothing of this run is left.
   */
  readonly exited: Promise<ProcessExit>;
  /** Sends `signal` (default SIGKILL) to the whole tree; a no-op once the leader exited. */
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM to the whole tree, SIGKILL after `graceMs` if the leader is still running. */
  terminate(graceMs: number): Promise<ProcessExit>;
}

export interface RunProcessOptions extends SpawnGroupOptions {
  /** Kill the whole tree with SIGKILL after this long. Default: no timeout. */
  timeoutMs?: number;
}

export interface ProcessResult extends ProcessExit {
  /** True when the run was killed because it outlived `timeoutMs`. */
  timedOut: boolean;
}

/** An error starting a process; `code` is Node's errno code (`ENOENT`, `EACCES`, ...). */
export interface SpawnError extends Error {
  code: string;
}

/**
 * Runs a command to completion (or to its timeout) and returns its exit and output.
 * Rejects only when the command could not be started (a {@link SpawnError}).
 */
export async function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  const clock = options.clock ?? realClock;
  const group = await spawnGroup(options);
  let timedOut = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : clock.setTimeout(() => {
          if (!group.running) return;
          timedOut = true;
          group.kill('SIGKILL');
        }, options.timeoutMs);
  try {
    const exit = await group.exited;
    return { ...exit, timedOut };
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
  }
}

/**
 * Starts a long-running process in its own process group and session. Resolves once it
 * has started; rejects with a {@link SpawnError} when it could not be started.
 */
export function spawnGroup(options: SpawnGroupOptions): Promise<ProcessGroup> {
  return new Promise<ProcessGroup>((resolve, reject) => {
    const [file, ...args] = options.argv;
    if (file === undefined || file === '') {
      reject(spawnError('exec: no command', 'ENOENT'));
      return;
    }
    let child: ChildProcess;
    try {
      child = spawn(file, args, {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: options.env ?? process.env,
        cwd: options.cwd,
        windowsHide: true,
      });
    } catch (err) {
      reject(describeSpawnError(err, file, options.cwd));
      return;
    }
    watchChild(child, file, options, resolve, reject);
  });
}

function watchChild(
  child: ChildProcess,
  file: string,
  options: SpawnGroupOptions,
  resolve: (group: ProcessGroup) => void,
  reject: (err: Error) => void,
): void {
  const clock = options.clock ?? realClock;
  const limit = Math.max(0, options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES);
  const stdout = capture(child.stdout, 'stdout', limit, options.onOutput);
  const stderr = capture(child.stderr, 'stderr', limit, options.onOutput);
  let started = false;
  let running = false;
  let pid = 0;
  let exitCode = 0;
  let exitSignal: NodeJS.Signals | null = null;
  let drainTimer: unknown;

  const exited = new Promise<ProcessExit>((resolveExit) => {
    child.once('close', () => {
      if (!started) return;
      if (drainTimer !== undefined) clock.clearTimeout(drainTimer);
      resolveExit({ exitCode, signal: exitSignal, stdout: stdout.kept(), stderr: stderr.kept() });
    });
  });

  // Errors after start can only come from child.kill(), which we never call; the
  // listener stays so that no 'error' event is ever unhandled.
  child.on('error', (err) => {
    if (!started) reject(describeSpawnError(err, file, options.cwd));
  });

  child.once('spawn', () => {
    started = true;
    running = true;
    pid = child.pid ?? 0;
    resolve({
      get pid() {
        return pid;
      },
      get running() {
        return running;
      },
      exited,
      kill(signal: NodeJS.Signals = 'SIGKILL') {
        if (running) killProcessTree(pid, signal);
      },
      terminate(graceMs: number) {
        if (!running) return exited;
        killProcessTree(pid, 'SIGTERM');
        const timer = clock.setTimeout(() => {
          if (running) killProcessTree(pid, 'SIGKILL');
        }, graceMs);
        return exited.finally(() => clock.clearTimeout(timer));
      },
    });
  });

  child.once('exit', (code, signal) => {
    if (!started) return;
    running = false;
    exitSignal = signal;
    exitCode = code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0);
    // The leader is gone: end the rest of its tree, as a PID namespace would.
    killProcessTree(pid, 'SIGKILL');
    drainTimer = clock.setTimeout(() => {
      drainTimer = undefined;
      child.stdout?.destroy();
      child.stderr?.destroy();
    }, PIPE_DRAIN_GRACE_MS);
  });
}

interface Capture {
  kept(): Buffer;
}

/** Reads a stream to its end, keeping its first `limit` bytes and dropping the rest. */
function capture(
  stream: Readable | null,
  name: OutputStream,
  limit: number,
  onOutput: SpawnGroupOptions['onOutput'],
): Capture {
  const chunks: Buffer[] = [];
  let size = 0;
  stream?.on('data', (chunk: Buffer) => {
    onOutput?.(name, chunk);
    if (size >= limit) return;
    const room = limit - size;
    // Copy a partial chunk so the dropped tail's memory is not retained.
    const part = chunk.length <= room ? chunk : Buffer.from(chunk.subarray(0, room));
    chunks.push(part);
    size += part.length;
  });
  // A destroyed pipe (drain grace) may report an error; it changes nothing we keep.
  stream?.on('error', () => undefined);
  return { kept: () => Buffer.concat(chunks, size) };
}

function spawnError(message: string, code: string): SpawnError {
  return Object.assign(new Error(message), { code });
}

/** Go's os/exec wording for a failed start: what the kubelet's users are used to. */
function describeSpawnError(err: unknown, file: string, cwd: string | undefined): SpawnError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? 'UNKNOWN';
  if (code === 'ENOENT' && cwd !== undefined && !isDirectory(cwd)) {
    return spawnError(`chdir ${cwd}: no such file or directory`, code);
  }
  if (code === 'ENOENT' && !file.includes('/')) {
    return spawnError(`exec: "${file}": executable file not found in $PATH`, code);
  }
  if (code === 'ENOENT') return spawnError(`fork/exec ${file}: no such file or directory`, code);
  if (code === 'EACCES') return spawnError(`fork/exec ${file}: permission denied`, code);
  const message = err instanceof Error ? err.message : String(err);
  return spawnError(`fork/exec ${file}: ${message}`, code);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Sends `signal` to every process of the tree rooted at `rootPid` (a group and session
 * leader started by {@link spawnGroup}): its process group, every process still in its
 * session or group (also orphans whose parent died), every descendant by parent links
 * (also those that left for a group or session of their own) and the groups those lead.
 * For SIGKILL the tree is frozen with SIGSTOP first, so nothing can fork past the scan.
 */
export function killProcessTree(rootPid: number, signal: NodeJS.Signals): void {
  if (!Number.isInteger(rootPid) || rootPid <= 1) return;
  if (signal !== 'SIGKILL') {
    const tree = scanTree(rootPid);
    sendAll(rootPid, tree, signal);
    return;
  }
  sendSignal(-rootPid, 'SIGSTOP');
  const frozen = new Map<number, ProcEntry>();
  for (let round = 0; round < 10; round++) {
    let fresh = false;
    for (const entry of scanTree(rootPid)) {
      if (frozen.has(entry.pid)) continue;
      frozen.set(entry.pid, entry);
      sendSignal(entry.pid, 'SIGSTOP');
      fresh = true;
    }
    if (!fresh) break;
  }
  sendAll(rootPid, [...frozen.values()], 'SIGKILL');
}

function sendAll(rootPid: number, tree: readonly ProcEntry[], signal: NodeJS.Signals): void {
  const pids = new Set(tree.map((e) => e.pid));
  const groups = new Set<number>([rootPid]);
  for (const entry of tree) if (pids.has(entry.pgid)) groups.add(entry.pgid);
  for (const group of groups) sendSignal(-group, signal);
  for (const pid of pids) sendSignal(pid, signal);
}

function sendSignal(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // ESRCH: already gone. EPERM: not ours. Neither is something to act on.
  }
}

interface ProcEntry {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
}

/** Every live process that belongs to the tree of `rootPid` (see killProcessTree). */
function scanTree(rootPid: number): ProcEntry[] {
  const table = readProcTable();
  const children = new Map<number, ProcEntry[]>();
  for (const entry of table) {
    const siblings = children.get(entry.ppid);
    if (siblings) siblings.push(entry);
    else children.set(entry.ppid, [entry]);
  }
  const found = new Map<number, ProcEntry>();
  const queue = table.filter((e) => e.pid === rootPid || e.pgid === rootPid || e.sid === rootPid);
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    if (found.has(next.pid) || next.pid === process.pid || next.pid <= 1) continue;
    found.set(next.pid, next);
    queue.push(...(children.get(next.pid) ?? []));
  }
  return [...found.values()];
}

/** The process table from /proc; empty where there is no /proc (then only the group is killed). */
function readProcTable(): ProcEntry[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const table: ProcEntry[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const entry = readStat(name);
    if (entry) table.push(entry);
  }
  return table;
}

/** Parses /proc/<pid>/stat; `comm` may hold spaces and parentheses, so fields start after the last `)`. */
function readStat(pid: string): ProcEntry | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields: state ppid pgrp session ...; zombies are skipped: they cannot be killed again.
  if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
  const [ppid, pgid, sid] = [fields[1], fields[2], fields[3]].map(Number);
  if (ppid === undefined || pgid === undefined || sid === undefined) return undefined;
  return { pid: Number(pid), ppid, pgid, sid };
}
