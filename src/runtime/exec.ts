/**
 * CRI `ExecSync` for local containers: the command runs as a process group of its own
 * with the container's environment and working directory.
 *
 * It is not `LocalCommandRunner` because the runtime needs the process group: in a real
 * container an exec'd process lives in the container's PID namespace and dies with it, so
 * the runtime kills running execs when their container exits and when it closes. The
 * result and the timeout error are the ones `LocalCommandRunner` gives.
 */
import {
  commandTimedOut,
  DEFAULT_MAX_OUTPUT_BYTES,
  endedByTimeout,
  spawnGroup,
  type ProcessGroup,
  type SpawnGroupOptions,
} from '../spawn/index.js';
import type { Clock } from '../util/clock.js';
import { execOutput } from './exec-output.js';
import type { ExecResult } from './types.js';

export interface ExecContext {
  /** The container's complete environment. */
  env: Record<string, string>;
  cwd: string | undefined;
  /** Clock of the timeout. */
  clock: Clock;
  /** Sees the started process group, so the caller can kill it with its container. */
  onSpawn: (group: ProcessGroup) => void;
  /** What starts the command: a spawner's spawnGroup (see spawn/spawner.ts), or process.ts's. */
  spawn?: (options: SpawnGroupOptions) => Promise<ProcessGroup>;
}

/**
 * Runs `cmd` to completion: stdout then stderr, capped like a CRI ExecSync reply (the exec
 * probe then keeps its own 10 KiB), and
 * the exit code. Rejects with an {@link ExecTimeoutError} (name `TimeoutError`) once the
 * whole tree was killed after `timeoutMs`, or with the Go-worded start error (carrying an
 * empty `output`) when the command could not be started.
 */
export async function execInContainer(context: ExecContext, cmd: readonly string[], timeoutMs: number): Promise<ExecResult> {
  const group = await (context.spawn ?? spawnGroup)({
    argv: cmd,
    env: context.env,
    cwd: context.cwd,
    maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES,
    clock: context.clock,
  }).catch((err: unknown) => {
    throw Object.assign(err instanceof Error ? err : new Error(String(err)), { output: '' });
  });
  context.onSpawn(group);
  // From here, not from the call: a busy machine delays the start, it must not eat the timeout.
  // A timeout of 0 is none, as CRI's ExecSync has it (a lifecycle hook's exec).
  let timedOut = false;
  const timer =
    timeoutMs > 0
      ? context.clock.setTimeout(() => {
          if (!group.running) return;
          timedOut = true;
          group.kill('SIGKILL');
        }, timeoutMs)
      : undefined;
  const exit = await group.exited.finally(() => {
    if (timer !== undefined) context.clock.clearTimeout(timer);
  });
  const output = execOutput(exit.stdout, exit.stderr);
  if (endedByTimeout(timedOut, exit)) {
    throw commandTimedOut(cmd, timeoutMs, output);
  }
  return { output, exitCode: exit.exitCode };
}
