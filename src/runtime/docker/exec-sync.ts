/**
 * ExecSync over the Engine API (`POST /containers/{id}/exec`, `POST /exec/{id}/start`, `GET
 * /exec/{id}/json`) with the CRI's timeout semantics — the kubelet's, as containerd keeps them:
 * the timeout bounds the command's own run, from the moment its process started until the
 * daemon reports it ended.
 *
 * Why not a timer on the attached stream: the daemon answers the start (the hijacked stream)
 * before it has made the process — Docker Engine then has containerd exec it, Podman tells
 * conmon to run `runc exec` — and `runc init` runs in the container's cgroup. On a loaded machine,
 * or in a container with little CPU, that start alone is seconds (5–7 s in a container limited to
 * 0.5% of a CPU; around a second on Podman's service at load 10–15), and a 1 s probe of `cat`
 * timed out: the Podman suite's missed startup probes (docs/runtimes.md). So the timer starts once
 * the daemon reports the process's PID (Podman answers the inspect once the process started —
 * the session's lock is held until then — and Docker Engine is asked again until it has one).
 *
 * The end of the stream is not the end of the command either (a process may close its output
 * and run on): the exit code is the daemon's once it reports the process is no longer running,
 * asked again until then, within the timeout.
 *
 * The whole call has the CRI runtime's deadline (timeout + EXEC_DEADLINE_SLACK_MS), past which it
 * is a timeout, as the kubelet's client makes it: a daemon that never reports the start does not
 * hold a probe worker for ever. The Engine cannot kill an exec (nor could dockershim): a command
 * that timed out is left to end in the container.
 */
import { Writable } from 'node:stream';
import type Dockerode from 'dockerode';
import { commandTimedOut, DEFAULT_MAX_OUTPUT_BYTES } from '../../spawn/index.js';
import { execOutput } from '../exec-output.js';
import type { Clock } from '../../util/clock.js';
import { goStatusErrorText } from '../../util/go-status.js';
import { EXEC_DEADLINE_SLACK_MS } from '../exec-deadline.js';
import type { ExecResult } from '../types.js';
import { apiMessage, CODE_UNKNOWN } from './api-errors.js';

/** The first wait between two exec inspects that did not show what is waited for; doubled each time up to a ceiling. */
const POLL_FIRST_MS = 20;
/**
 * The ceiling while waiting for the process's start: the timeout counts from the inspect that
 * shows it, so the wait between two inspects is how late the timer may start (containerd's
 * starts as the process does).
 */
const POLL_START_MAX_MS = 50;
/** The ceiling while waiting for the exit code of a command that runs on. */
const POLL_EXIT_MAX_MS = 1_000;

type Hijacked = NodeJS.ReadableStream & { destroy?: () => void };

/** The call ran out of time (the command's timeout, or the whole call's deadline). */
const TIMED_OUT = Symbol('timed out');

/** The process exists (it has a PID) or ended: Podman's ended session has PID 0, both daemons then say CanRemove. */
export function execStarted(info: Pick<Dockerode.ExecInspectInfo, 'Pid' | 'CanRemove'>): boolean {
  return info.Pid > 0 || info.CanRemove;
}

/** The exit code, once the daemon reports the process no longer running (Docker Engine may still say Running just after the stream ended; its ExitCode is null until it is not). */
export function execExitCode(info: Pick<Dockerode.ExecInspectInfo, 'Running' | 'ExitCode'>): number | undefined {
  return info.Running || info.ExitCode === null ? undefined : info.ExitCode;
}

/**
 * Runs `cmd` in the container: stdout then stderr (each capped at DEFAULT_MAX_OUTPUT_BYTES) and
 * the exit code. Rejects with the kubelet's timeout error (`command timed out: …`) past
 * `timeoutMs` of the command's run (0: no timeout), with the daemon's words as a gRPC `Unknown`
 * when the exec cannot be made or started.
 */
export async function engineExecSync(docker: Dockerode, containerID: string, cmd: string[], timeoutMs: number, clock: Clock): Promise<ExecResult> {
  const abort = new AbortController();
  // The call's two deadlines, cleared when it ends (the polls' waits clear themselves).
  const timers: unknown[] = [];
  const after = <T>(ms: number, value: T): Promise<T> =>
    new Promise((resolve) => {
      timers.push(clock.setTimeout(() => resolve(value), ms));
    });
  const never = new Promise<never>(() => undefined);
  const callDeadline = timeoutMs > 0 ? after(timeoutMs + EXEC_DEADLINE_SLACK_MS, TIMED_OUT) : never;
  let stream: Hijacked | undefined;
  try {
    const started = startExec(docker, containerID, cmd, abort.signal);
    const attached = await Promise.race([started, callDeadline]);
    if (attached === TIMED_OUT) {
      // An answer that comes after all is not read.
      void started.then(({ stream: late }) => late.destroy?.(), () => undefined);
      throw commandTimedOut(cmd, timeoutMs, '');
    }
    const { exec } = attached;
    stream = attached.stream;
    const stdout = capped();
    const stderr = capped();
    docker.modem.demuxStream(stream, stdout.sink, stderr.sink);
    const ended = streamEnd(stream).catch((err: unknown) => Promise.reject(daemonError(err)));

    // The command's timeout counts from its start as the daemon reports it (an inspect that
    // fails here starts it at once: the stream and the exit code still tell the rest).
    const startSeen = untilInspect(exec, execStarted, POLL_START_MAX_MS, clock, abort.signal).catch(() => undefined);
    if ((await Promise.race([startSeen, ended, callDeadline])) === TIMED_OUT) throw commandTimedOut(cmd, timeoutMs, '');
    const commandDeadline = timeoutMs > 0 ? after(timeoutMs, TIMED_OUT) : never;
    if ((await Promise.race([ended, commandDeadline, callDeadline])) === TIMED_OUT) throw commandTimedOut(cmd, timeoutMs, '');
    const exited = untilInspect(exec, (info) => execExitCode(info) !== undefined, POLL_EXIT_MAX_MS, clock, abort.signal).catch((err: unknown) => Promise.reject(daemonError(err)));
    const settled = await Promise.race([exited, commandDeadline, callDeadline]);
    if (settled === TIMED_OUT) throw commandTimedOut(cmd, timeoutMs, '');
    return { output: execOutput(stdout.bytes(), stderr.bytes()), exitCode: execExitCode(settled) ?? 0 };
  } finally {
    for (const timer of timers) clock.clearTimeout(timer);
    abort.abort();
    stream?.destroy?.();
  }
}

/** Creates the exec and starts it attached; a refusal is the daemon's words as a gRPC `Unknown` (cri-dockerd's). */
async function startExec(docker: Dockerode, containerID: string, cmd: string[], signal: AbortSignal): Promise<{ exec: Dockerode.Exec; stream: Hijacked }> {
  try {
    const exec = await docker.getContainer(containerID).exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, abortSignal: signal });
    const stream = (await exec.start({ hijack: true, stdin: false, abortSignal: signal })) as Hijacked;
    return { exec, stream };
  } catch (err) {
    throw daemonError(err);
  }
}

/** A daemon's failure during an exec (refused, the session gone, the stream broken) as a gRPC `Unknown`, cri-dockerd's wording. */
function daemonError(err: unknown): Error {
  return Object.assign(new Error(goStatusErrorText(CODE_UNKNOWN, apiMessage(err))), { output: '' });
}

/** Resolves when the attached stream ended; rejects with its error. */
function streamEnd(stream: Hijacked): Promise<'ended'> {
  return new Promise((resolve, reject) => {
    stream.on('end', () => resolve('ended'));
    stream.on('close', () => resolve('ended'));
    stream.on('error', reject);
  });
}

/**
 * Inspects the exec until `done` holds, waiting POLL_FIRST_MS doubling to `maxWaitMs` between two
 * inspects; stops (never resolving) once `signal` aborts. The caller races it with its deadlines.
 */
async function untilInspect(
  exec: Dockerode.Exec,
  done: (info: Dockerode.ExecInspectInfo) => boolean,
  maxWaitMs: number,
  clock: Clock,
  signal: AbortSignal,
): Promise<Dockerode.ExecInspectInfo> {
  for (let wait = POLL_FIRST_MS; ; wait = Math.min(wait * 2, maxWaitMs)) {
    const info = await exec.inspect({ abortSignal: signal });
    if (done(info)) return info;
    await new Promise<void>((resolve) => clock.setTimeout(resolve, wait));
    if (signal.aborted) return new Promise<never>(() => undefined);
  }
}

/** A sink that keeps at most DEFAULT_MAX_OUTPUT_BYTES. */
function capped(): { sink: Writable; bytes(): Buffer } {
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    sink: new Writable({
      write(chunk: Buffer, _encoding, done) {
        if (size < DEFAULT_MAX_OUTPUT_BYTES) {
          const part = chunk.subarray(0, DEFAULT_MAX_OUTPUT_BYTES - size);
          chunks.push(part);
          size += part.length;
        }
        done();
      },
    }),
    bytes: () => Buffer.concat(chunks),
  };
}
