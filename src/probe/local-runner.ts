/**
 * A {@link CommandRunner} that runs exec probe commands as local processes: what
 * `probelet probe --exec` and the local kubelet use in place of CRI `ExecSync`.
 * Like a runtime's exec, the command runs in its own process group with the container's
 * environment and working directory, and a timeout kills all of it.
 */
import { realClock, type Clock } from '../util/clock.js';
import { commandTimedOut, openSpawner, runProcess, type Spawner } from '../spawn/index.js';
import { MAX_PROBE_OUTPUT_BYTES } from './constants.js';
import type { CommandRunner } from './types.js';

/** Where and how a container's commands run. */
export interface LocalExecContext {
  /** The complete environment (not merged with anything). */
  env?: Record<string, string>;
  /** Working directory. */
  cwd?: string;
}

export interface LocalCommandRunnerOptions extends LocalExecContext {
  /**
   * Per-container context (the local runtime knows each container's env and
   * workingDir). Fields it returns win over `env`/`cwd`; returning `undefined` means the
   * container does not exist, which errors the probe (as exec into a gone container
   * does). Without `resolve` every container ID is accepted.
   */
  resolve?: (containerID: string) => LocalExecContext | undefined;
  /** Clock for the timeout. Default: real time. */
  clock?: Clock;
  /**
   * Start commands through the process-wide spawner process (see spawn/spawner.ts), off
   * this process's event loop. Default true; false forks from this process, which suits a
   * one-shot CLI that runs a single command (starting a spawner costs more than it saves).
   */
  spawner?: boolean;
}

export class LocalCommandRunner implements CommandRunner {
  private readonly options: LocalCommandRunnerOptions;
  /** Opened at the first command (a runner that never execs starts no process). */
  private spawner: Spawner | undefined;
  private closed = false;

  constructor(options: LocalCommandRunnerOptions = {}) {
    this.options = options;
  }

  /**
   * Resolves with stdout then stderr (each read up to 10 KiB) and the exit code. Rejects
   * with an {@link ExecTimeoutError} (`name` `'TimeoutError'`) after `timeoutMs`, once the
   * whole process group is dead; with a plain error (a Go-worded start failure, or an
   * unknown container) when the command could not be run. Rejections carry the output
   * gathered so far as `output`.
   */
  async runInContainer(
    containerID: string,
    cmd: string[],
    timeoutMs: number,
  ): Promise<{ output: string; exitCode: number }> {
    const context = this.contextFor(containerID);
    if (this.closed) throw Object.assign(new Error('exec: command runner is closed'), { output: '' });
    if (this.options.spawner !== false) this.spawner ??= openSpawner();
    const run = await runProcess({
      argv: cmd,
      // No env: the child gets this process's environment as it is now (spawn reads
      // process.env itself), without a copy of it made at every probe.
      env: context.env ?? this.options.env,
      cwd: context.cwd ?? this.options.cwd,
      maxOutputBytes: MAX_PROBE_OUTPUT_BYTES,
      timeoutMs,
      clock: this.options.clock ?? realClock,
      // Forked from a small spawner process, off this process's event loop (see spawner.ts).
      spawn: this.spawner?.spawnGroup,
    }).catch((err: unknown) => {
      throw Object.assign(err instanceof Error ? err : new Error(String(err)), { output: '' });
    });
    const output = Buffer.concat([run.stdout, run.stderr]).subarray(0, MAX_PROBE_OUTPUT_BYTES).toString('utf8');
    if (run.timedOut) {
      throw commandTimedOut(cmd, timeoutMs, output);
    }
    return { output, exitCode: run.exitCode };
  }

  /**
   * Stops this runner: commands still running are killed, and the spawner process stops
   * once no other runner or runtime of this process uses it. Later commands are refused.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.spawner?.close();
  }

  private contextFor(containerID: string): LocalExecContext {
    if (!this.options.resolve) return {};
    const context = this.options.resolve(containerID);
    if (!context) throw Object.assign(new Error(`container "${containerID}" not found`), { output: '' });
    return context;
  }
}
