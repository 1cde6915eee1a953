/**
 * The one place that starts processes (exec probes now, the local container runtime
 * later), so that every caller gets the same guarantees a container runtime gives:
 *
 * - A process runs in a process group (and session) of its own, so it can be killed
 *   with everything it started. Descendants that moved to another group or session are
 *   found through /proc (parent links, and the session id they keep) and killed too.
 * - With the native primitive and a writable cgroup v2 hierarchy, it also runs in a cgroup
 *   of its own (cgroup.ts), which it joins before its exec: killing the command kills the
 *   cgroup, which reaches what detached itself from every link below (setsid, orphaned, no
 *   pipe kept), as a container runtime's cgroup does.
 * - When the group leader exits, whatever is left of its tree is killed, like the kernel
 *   tears down a container's PID namespace when its init dies. Nothing outlives a run:
 *   with the native primitive, a process that escaped the tree (setsid'd, then orphaned) but
 *   still holds the command's stdout or stderr is found through the pipe and killed too.
 * - stdout and stderr are read as they stream; only the first `maxOutputBytes` of each
 *   are kept and the rest is read and dropped, so a flood costs neither memory nor a
 *   child blocked on a full pipe.
 * - Failure to start (ENOENT, EACCES, bad cwd) is a rejected promise with a Go-worded
 *   message (users compare it with what the kubelet prints), never an unhandled event.
 * - Exit code is the code, or 128 + signal number when a signal ended the process
 *   (SIGKILL → 137, SIGTERM → 143), as container runtimes report it.
 */
import {
  closeSync,
  constants as fsConstants,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  statSync,
} from 'node:fs';
import type { Readable } from 'node:stream';
import { getSystemErrorMap } from 'node:util';
import { realClock, type Clock } from '../util/clock.js';
import { NO_NATIVE_CGROUP, openCommandCgroup, type CommandCgroup } from './cgroup.js';
import { currentPrimitive, joinCgroup, startProcess, type StartedProcess } from './spawn-primitive.js';

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
  /**
   * Set when probelet lost track of the command (its spawner died while it ran): it was
   * killed, but what it would have answered is unknown. {@link runProcess} rejects with it, so
   * an exec probe *errors* (retried, never counted) instead of failing a healthy container.
   */
  lost?: Error;
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
  /**
   * Kill the whole tree with SIGKILL after this long, counted from when the command
   * started (not from the call). Default: no timeout.
   */
  timeoutMs?: number;
  /** What starts the group: {@link spawnGroup} by default, or a spawner's (see spawner.ts). */
  spawn?: (options: SpawnGroupOptions) => Promise<ProcessGroup>;
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
 * Rejects only when the command could not be started (a {@link SpawnError}), or when its
 * outcome was lost with the spawner that ran it (`ProcessExit.lost`).
 */
export async function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  const clock = options.clock ?? realClock;
  const group = await (options.spawn ?? spawnGroup)(options);
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
    if (exit.lost) throw exit.lost;
    return { ...exit, timedOut: endedByTimeout(timedOut, exit) };
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
  }
}

/**
 * Whether a run whose timeout fired (`fired`) was really ended by it: only if the leader
 * died of the SIGKILL sent then. When the machine (or the spawner) is busy, a leader may
 * have exited in time and its exit not been seen yet when the timer fired; killing a zombie
 * changes nothing, so it keeps its own exit status and is not a timeout. A probe must never
 * fail because probelet was slow to notice it succeeded.
 */
export function endedByTimeout(fired: boolean, exit: ProcessExit): boolean {
  return fired && exit.signal === 'SIGKILL';
}

/**
 * Starts a long-running process in its own process group and session. Resolves once it
 * has started; rejects with a {@link SpawnError} when it could not be started.
 */
export function spawnGroup(options: SpawnGroupOptions): Promise<ProcessGroup> {
  const [file, ...args] = options.argv;
  if (file === undefined || file === '') return Promise.reject(spawnError('exec: no command', 'ENOENT'));
  // Callers from JavaScript: a wrong type is named here, not as whatever it breaks later.
  const notString = options.argv.findIndex((part) => typeof part !== 'string');
  if (notString >= 0) return Promise.reject(new TypeError(`argv[${notString}] must be a string, got ${typeof options.argv[notString]}`));
  if (options.maxOutputBytes !== undefined && (typeof options.maxOutputBytes !== 'number' || Number.isNaN(options.maxOutputBytes))) {
    return Promise.reject(new TypeError(`maxOutputBytes must be a number of bytes, got ${String(options.maxOutputBytes)}`));
  }
  // Before the start, so that the leader and all it will start come after this mark.
  const mark = turnPidMark();
  // Its own cgroup: what ends it ends also what it detached (see cgroup.ts).
  const cgroup = openCommandCgroup(currentPrimitive() === 'native' ? undefined : NO_NATIVE_CGROUP);
  let starting: Promise<StartedProcess>;
  try {
    starting = startProcess({ argv: [file, ...args], env: options.env, cwd: options.cwd, cgroupProcs: cgroup?.procs });
  } catch (err) {
    cgroup?.release();
    return Promise.reject(describeSpawnError(err, file, options.cwd));
  }
  return starting.then(
    (child) => {
      // Again from here: an addon built before it took a cgroup ignores it (a no-op otherwise).
      if (cgroup) joinCgroup(cgroup.procs, child.pid);
      return watchChild(child, options, mark, cgroup);
    },
    (err: unknown) => {
      cgroup?.release();
      throw describeSpawnError(err, file, options.cwd);
    },
  );
}

function watchChild(child: StartedProcess, options: SpawnGroupOptions, mark: PidMark | undefined, cgroup: CommandCgroup | undefined): ProcessGroup {
  const clock = options.clock ?? realClock;
  const limit = Math.max(0, options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES);
  const stdout = capture(child.stdout, 'stdout', limit, options.onOutput);
  const stderr = capture(child.stderr, 'stderr', limit, options.onOutput);
  const pid = child.pid;
  let running = true;
  let exitCode = 0;
  let exitSignal: NodeJS.Signals | null = null;
  let drainTimer: unknown;

  let resolveSwept: (swept: Promise<void>) => void = () => undefined;
  const swept = new Promise<void>((resolve) => (resolveSwept = resolve));
  // Settles once the leader was reaped, what was left of its tree killed, and both pipes are
  // closed (at their end, or by the drain grace).
  const exited = Promise.all([swept, stdout.closed, stderr.closed]).then(
    (): ProcessExit => {
      if (drainTimer !== undefined) clock.clearTimeout(drainTimer);
      return { exitCode, signal: exitSignal, stdout: stdout.kept(), stderr: stderr.kept() };
    },
  );

  child.onExit(({ code, signal, signalNumber }) => {
    running = false;
    exitSignal = signal;
    exitCode = code ?? 128 + (signalNumber ?? 0);
    // The leader is gone: end the rest of its tree, as a PID namespace would. Usually
    // nothing is left, which a few cheap reads can prove (see treeMayRemain); the full
    // freeze-scan-kill reads all of /proc, several milliseconds with the event loop blocked.
    resolveSwept(killLeftoversAfterTurn(pid, mark));
    // And what detached itself from every link the sweep follows: the whole cgroup.
    cgroup?.release();
    drainTimer = clock.setTimeout(() => {
      drainTimer = undefined;
      // Still open: a process that left the tree before it was killed (setsid'd, then
      // orphaned) holds them. The pipe still names it, in /proc/<pid>/fd.
      const [outFd, errFd] = child.pipeFds ?? [];
      const open = [stdout.isOpen() ? outFd : undefined, stderr.isOpen() ? errFd : undefined];
      killPipeHolders(open.filter((fd) => fd !== undefined));
      child.stdout.destroy();
      child.stderr.destroy();
    }, PIPE_DRAIN_GRACE_MS);
  });

  return {
    pid,
    get running() {
      return running;
    },
    exited,
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (!running) return;
      killWhole(pid, signal, cgroup);
    },
    terminate(graceMs: number) {
      if (!running) return exited;
      killProcessTree(pid, 'SIGTERM');
      const timer = clock.setTimeout(() => {
        if (running) killWhole(pid, 'SIGKILL', cgroup);
      }, graceMs);
      return exited.finally(() => clock.clearTimeout(timer));
    },
  };
}

/**
 * SIGKILL to a command in a cgroup: `cgroup.kill` reaches every member at once, and nothing
 * can fork past it, so the freeze-and-scan of /proc (every process of the host read, per
 * kill: n² when n containers are killed together) is not needed. Without one, the tree kill.
 */
function killWhole(pid: number, signal: NodeJS.Signals, cgroup: CommandCgroup | undefined): void {
  if (signal !== 'SIGKILL' || cgroup?.kill() !== true) killProcessTree(pid, signal);
}

interface Capture {
  kept(): Buffer;
  /** Resolves once the stream closed (its end read, or destroyed). */
  closed: Promise<void>;
  /** Until closed: its descriptor is still ours (not closed, so not re-used either). */
  isOpen(): boolean;
}

/** Reads a stream to its end, keeping its first `limit` bytes and dropping the rest. */
function capture(
  stream: Readable,
  name: OutputStream,
  limit: number,
  onOutput: SpawnGroupOptions['onOutput'],
): Capture {
  const chunks: Buffer[] = [];
  let size = 0;
  let open = true;
  const closed = new Promise<void>((resolve) =>
    stream.once('close', () => {
      open = false;
      resolve();
    }),
  );
  stream.on('data', (chunk: Buffer) => {
    onOutput?.(name, chunk);
    if (size >= limit) return;
    const room = limit - size;
    // Copy a partial chunk so the dropped tail's memory is not retained.
    const part = chunk.length <= room ? chunk : Buffer.from(chunk.subarray(0, room));
    chunks.push(part);
    size += part.length;
  });
  // A destroyed pipe (drain grace) may report an error; it changes nothing we keep.
  stream.on('error', () => undefined);
  return { kept: () => Buffer.concat(chunks, size), closed, isOpen: () => open };
}

/** A start that failed, worded and coded as a {@link SpawnError}. */
export function spawnError(message: string, code: string): SpawnError {
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
  // libuv has no text for it: a file that is neither a program nor a `#!` script.
  if (code === 'ENOEXEC') return spawnError(`fork/exec ${file}: exec format error`, code);
  // libuv's strerror texts are Go's (syscall.Errno) too: "argument list too long", ...
  const errno = (err as NodeJS.ErrnoException | undefined)?.errno;
  const known = errno === undefined ? undefined : getSystemErrorMap().get(errno)?.[1];
  const message = known ?? (err instanceof Error ? err.message : String(err));
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
    const tree = scanTree(rootPid, sharedProcTable());
    sendAll(rootPid, tree, signal);
    return;
  }
  sendSignal(-rootPid, 'SIGSTOP');
  const frozen = new Map<number, ProcEntry>();
  for (let round = 0; round < 10; round++) {
    let fresh = false;
    for (const entry of scanTree(rootPid, readProcTable())) {
      if (frozen.has(entry.pid)) continue;
      frozen.set(entry.pid, entry);
      sendSignal(entry.pid, 'SIGSTOP');
      fresh = true;
    }
    if (!fresh) break;
  }
  sendAll(rootPid, [...frozen.values()], 'SIGKILL');
}

/**
 * Kills (with their trees) the processes other than this one that hold one of the pipes
 * `fds` (this process's ends) open. Called only when a command's pipes outlive its leader and
 * tree by {@link PIPE_DRAIN_GRACE_MS}: what holds them then escaped the tree — called `setsid`
 * and was orphaned before the tree was killed — and nothing else links it to the command; a
 * subreaper (process-wide) or a cgroup per command would be the other ways. Reads every
 * process's descriptor links: tens of milliseconds, only in that rare case.
 */
function killPipeHolders(fds: readonly number[]): void {
  const wanted = new Set<string>();
  for (const fd of fds) {
    try {
      wanted.add(`pipe:[${fstatSync(fd).ino}]`);
    } catch {
      // Not open after all: nothing to look for.
    }
  }
  if (wanted.size === 0) return;
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let links: string[];
    try {
      links = readdirSync(`/proc/${name}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const link of links) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${name}/fd/${link}`);
      } catch {
        continue;
      }
      if (wanted.has(target)) {
        killProcessTree(Number(name), 'SIGKILL');
        break;
      }
    }
  }
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

/**
 * Where pid allocation stood at one moment: the last pid handed out in this pid namespace,
 * the number of tasks (threads) in the system and how many have ever been created.
 */
interface PidMark {
  lastPid: number;
  tasks: number;
  forks: number;
  pidMax: number;
}

let markThisTurn: { mark: PidMark | undefined } | undefined;

/**
 * A {@link PidMark} taken at most once per turn of the event loop, for spawns: three /proc
 * reads per start added up when a run starts 1,000 containers at once. An earlier mark is as
 * good a "before the fork" as a fresh one; the window it opens is only wider.
 */
function turnPidMark(): PidMark | undefined {
  if (markThisTurn === undefined) {
    markThisTurn = { mark: pidMark() };
    setImmediate(() => {
      markThisTurn = undefined;
    });
  }
  return markThisTurn.mark;
}

/** The current {@link PidMark}; undefined where /proc does not tell. */
function pidMark(): PidMark | undefined {
  try {
    // "0.12 0.34 0.56 2/345 6789": running/total tasks, then the last pid (of our namespace).
    const load = readProc('/proc/loadavg').trim().split(/\s+/);
    const tasks = Number(load[3]?.split('/')[1]);
    const lastPid = Number(load[4]);
    // "processes N": tasks created since boot, threads included (every one takes a pid).
    const forks = Number(/^processes (\d+)$/m.exec(readProc('/proc/stat'))?.[1]);
    const pidMax = Number(readProc('/proc/sys/kernel/pid_max'));
    const valid = [tasks, lastPid, forks, pidMax].every((n) => Number.isSafeInteger(n) && n >= 0);
    return valid ? { lastPid, tasks, forks, pidMax } : undefined;
  } catch {
    return undefined;
  }
}

const procFds = new Map<string, number>();
let procBuffer = Buffer.alloc(16 * 1024);

/**
 * A /proc file read afresh through a descriptor kept open: `pread` at offset 0 makes the
 * kernel generate it again, at a fifth of the cost of open + fstat + read + close (two pid
 * marks per command were ≈ 0.13 ms of the ≈ 1 ms an exec probe costs).
 */
function readProc(path: string): string {
  let fd = procFds.get(path);
  if (fd === undefined) {
    fd = openSync(path, 'r');
    procFds.set(path, fd);
  }
  for (;;) {
    const n = readSync(fd, procBuffer, 0, procBuffer.length, 0);
    if (n < procBuffer.length) return procBuffer.toString('latin1', 0, n);
    procBuffer = Buffer.alloc(procBuffer.length * 2); // /proc/stat of a machine with many CPUs
  }
}

/**
 * Whether anything the scan of {@link killProcessTree} would find may be left of the tree
 * of `rootPid`, whose leader has exited and been reaped: false only when that is proven.
 *
 * The scan starts from the processes in the leader's group or session (and follows their
 * children). (`kill(-group, 0)` is not asked first: its usual answer, ESRCH, is a thrown
 * exception in Node, ≈ 30 µs a command, and the window below finds group members too.)
 * A process can only be in the session (or the group) by descending from the leader, so it was created after
 * `mark` (taken before the leader's fork). Linux hands out pids cyclically — each new pid
 * is the next free number after the last one — so every pid created since `mark` lies
 * between `mark.lastPid` and the current last pid, going round at `pid_max`, unless the
 * counter went all the way round meanwhile. It cannot have: going round takes every number
 * free when the round began, and at least `pid_max - 300 - 3 × (tasks + created)` were
 * free (a task holds at most its pid, group and session numbers; 300 are reserved), more
 * than the `created` tasks since `mark` — checked, else the answer is yes. So only the few
 * processes with pids in that window need their /proc stat read. Yes whenever unsure.
 */
function treeMayRemain(rootPid: number, mark: PidMark | undefined, survey: ProcSurvey): boolean {
  if (!Number.isInteger(rootPid) || rootPid <= 1) return true;
  if (mark === undefined) return true;
  let now = survey.mark();
  if (now === undefined) return true;
  let candidates: readonly number[] | undefined;
  if (windowSize(mark, now) <= SMALL_WINDOW) {
    // Few pids were created since the mark: trying each costs less than listing /proc.
    candidates = windowPids(mark.lastPid, now.lastPid, now.pidMax);
  } else {
    candidates = survey.listing();
    // Taken after the listing, so that the window covers every process listed.
    now = survey.markAfterListing();
    if (candidates === undefined || now === undefined) return true;
  }
  if (now.pidMax !== mark.pidMax) return true;
  const created = now.forks - mark.forks;
  if (created < 0 || mark.pidMax - 300 - 3 * (mark.tasks + created) <= created) return true;
  const from = mark.lastPid;
  const to = now.lastPid;
  if (from === to) return true; // the leader took a pid after `mark`: this cannot be, so be safe
  const inWindow = (pid: number): boolean => (from <= to ? pid > from && pid <= to : pid > from || pid <= to);
  for (const pid of candidates) {
    if (!inWindow(pid)) continue;
    const entry = turnStat(pid);
    if (entry && (entry.sid === rootPid || entry.pgid === rootPid)) return true;
  }
  return false;
}

/**
 * What {@link treeMayRemain} reads of the whole system, read once for every leader whose exit
 * is checked together. Valid for a leader reaped before it was read: the pid mark then covers
 * every pid its tree took; and a listing of /proc then holds every member of its tree, or none
 * exists (with the leader gone, only a member alive at the listing can create another).
 */
class ProcSurvey {
  private now: PidMark | undefined | null = null;
  private listed: number[] | undefined | null = null;
  private afterListing: PidMark | undefined | null = null;

  mark(): PidMark | undefined {
    if (this.now === null) this.now = pidMark();
    return this.now;
  }

  listing(): readonly number[] | undefined {
    if (this.listed === null) {
      try {
        this.listed = readdirSync('/proc')
          .filter((name) => /^\d+$/.test(name))
          .map(Number);
      } catch {
        this.listed = undefined;
      }
      this.afterListing = pidMark();
    }
    return this.listed;
  }

  markAfterListing(): PidMark | undefined {
    this.listing();
    return this.afterListing ?? undefined;
  }
}

let exitBatch: Array<{ pid: number; mark: PidMark | undefined; done: () => void }> | undefined;

/**
 * Checks the tree of a reaped leader for leftovers (and kills them) once the exits of this
 * turn of the event loop have all been seen, with one {@link ProcSurvey} for all of them:
 * when 1,000 containers exit together, each window holds the others' pids and listing /proc
 * for every exit was 1,000 listings of ≈ 1,000 entries (≈ 0.5 s of a shutdown).
 */
function killLeftoversAfterTurn(pid: number, mark: PidMark | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    if (exitBatch === undefined) {
      exitBatch = [];
      setImmediate(checkExitBatch);
    }
    exitBatch.push({ pid, mark, done: resolve });
  });
}

function checkExitBatch(): void {
  const batch = exitBatch ?? [];
  exitBatch = undefined;
  // Every leader of the batch was reaped before this: one survey is valid for all.
  const survey = new ProcSurvey();
  for (const { pid, mark, done } of batch) {
    if (treeMayRemain(pid, mark, survey)) killProcessTree(pid, 'SIGKILL');
    done();
  }
}

let statsThisTurn: Map<number, ProcEntry | undefined> | undefined;

/**
 * /proc/<pid>/stat, read at most once per turn of the event loop for {@link treeMayRemain}.
 * When N containers exit together, each exit's window holds the others' pids, and reading
 * them all again for every exit was O(N²) (seconds for 1,000 pods). Re-using a read from
 * earlier in the turn is safe for that check: a process outside a session can never join
 * it (setsid only makes a new one; setpgid stays within the session), so "not in the
 * leader's session or group" stays true; processes created since are new pids, read afresh.
 */
function turnStat(pid: number): ProcEntry | undefined {
  if (statsThisTurn === undefined) {
    statsThisTurn = new Map();
    setImmediate(() => {
      statsThisTurn = undefined;
    });
  }
  if (statsThisTurn.has(pid)) return statsThisTurn.get(pid);
  const entry = readStat(String(pid));
  statsThisTurn.set(pid, entry);
  return entry;
}

/** At most this many pids are tried one by one instead of listing /proc. */
const SMALL_WINDOW = 64;

/** How many pids were handed out from `a` to `b` (less than a full round: see treeMayRemain). */
function windowSize(a: PidMark, b: PidMark): number {
  if (a.pidMax !== b.pidMax) return Infinity;
  return b.lastPid >= a.lastPid ? b.lastPid - a.lastPid : b.pidMax - a.lastPid + b.lastPid;
}

/** The pids after `from` up to `to`, going round at `pidMax`. */
function windowPids(from: number, to: number, pidMax: number): number[] {
  const pids: number[] = [];
  for (let pid = from + 1; ; pid++) {
    if (pid >= pidMax) pid = 1;
    pids.push(pid);
    if (pid === to || pids.length > pidMax) return pids;
  }
}

interface ProcEntry {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
}

/** Every live process of `table` that belongs to the tree of `rootPid` (see killProcessTree). */
function scanTree(rootPid: number, table: readonly ProcEntry[]): ProcEntry[] {
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

let sharedTable: ProcEntry[] | undefined;

/**
 * The process table, read at most once per turn of the event loop, for SIGTERM. Deleting N
 * pods terminates N trees in one turn, and a full /proc read for each was O(N²): 23 s of
 * reads for 1,000 pods. A table read earlier in the same turn is as good a picture as a
 * fresh one (either is a moment's snapshot; a process forked since is still in its group,
 * which is signalled as a whole). SIGKILL, whose freeze must see racing forks, reads afresh.
 */
function sharedProcTable(): ProcEntry[] {
  if (sharedTable === undefined) {
    sharedTable = readProcTable();
    setImmediate(() => {
      sharedTable = undefined;
    });
  }
  return sharedTable;
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

const statBuffer = Buffer.allocUnsafe(4096);

/**
 * A /proc/<pid>/stat in one read into a shared buffer: less than half the CPU of readFileSync
 * (no fstat, no buffer per call), which this is called for every pid of an exit's window.
 */
function readStatText(path: string): string {
  const fd = openSync(path, fsConstants.O_RDONLY);
  try {
    const n = readSync(fd, statBuffer, 0, statBuffer.length, 0);
    return n < statBuffer.length ? statBuffer.toString('latin1', 0, n) : readFileSync(path, 'latin1');
  } finally {
    closeSync(fd);
  }
}

/** Parses /proc/<pid>/stat; `comm` may hold spaces and parentheses, so fields start after the last `)`. */
function readStat(pid: string): ProcEntry | undefined {
  let text: string;
  try {
    text = readStatText(`/proc/${pid}/stat`);
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
