/**
 * The local container runtime: every container is a process group on this host, started
 * from the container's `command`/`args` (no image is pulled or run), with the environment
 * the kubelet would give it (see env.ts) and its output in a log file (see logs.ts).
 *
 * It reports what containerd reports, because the kubelet logic above it (restart
 * policy, back-off, `lastState`) and the user reading `kubectl`-shaped output depend on
 * it: exit code or 128 + signal, `Completed`/`Error`, and for a command that cannot be
 * started a `StartError` with exit code 128 rather than a thrown error.
 *
 * No process outlives its container or the runtime: a container's whole tree is killed
 * when its main process exits (spawn/process.ts), its exec'd commands die with it as they
 * would with its PID namespace, and `close()` kills and waits for everything.
 */
import { randomBytes } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import type { Container, Pod } from '../api/types.js';
import { realClock, type Clock } from '../util/clock.js';
import { openSpawner, spawnGroup, type ProcessExit, type ProcessGroup, type Spawner } from '../spawn/index.js';
import { baseEnvironment, expandCommandLine, podHostname, resolveContainerEnv } from './env.js';
import { execInContainer } from './exec.js';
import { containerFieldPath, runtimeInputError } from './input-error.js';
import { containerLogPath, openContainerLogAsync, type ContainerLog } from './logs.js';
import { containerEvents } from './container-events.js';
import { openContainerRecord, type ContainerRecordFile } from './process-owner.js';
import type {
  ContainerEvent,
  ContainerRuntime,
  ExecResult,
  PodSandbox,
  RuntimeContainerStatus,
} from './types.js';

export interface ProcessRuntimeOptions {
  /** Directory for container log files (created as needed). */
  runDir: string;
  /** Clock of timestamps, stop grace periods and exec timeouts. Default: real time. */
  clock?: Clock;
  /** Bytes of each container's output kept in memory for `containerLogs`. Default 64 KiB. */
  logTailBytes?: number;
  /** The node's hostname, which `hostNetwork` pods see as `HOSTNAME`. Default: this host's. */
  hostname?: string;
  /**
   * Writing a container's log file failed (a full disk): the file stops there, the container
   * runs on. Called once per log file. Default: nothing (the caller decides how to say it).
   */
  onLogWriteError?: (container: RuntimeContainerStatus, path: string, error: Error) => void;
  /** `probelet node`: the file recording the running containers (process-owner.ts), for the next start after a crash. */
  containerRecord?: string;
}

/** The CRI runtime name in container IDs (`probelet://<id>`), like `containerd://`. */
const RUNTIME_SCHEME = 'probelet://';

/** The pod IP of every local sandbox: pods share the host's network. */
const LOCAL_POD_IP = '127.0.0.1';

/**
 * How this runtime words a failed start, in its own words: there is no containerd task nor
 * runc here, only a host process. What follows is the reason, in Go's os/exec wording, as
 * runc gives it (`exec: "httpd": executable file not found in $PATH`). The status is the
 * CRI's (StartError, 128) and the kubelet's event reason stays `Failed`.
 */
const START_ERROR_PREFIX = 'process runtime: could not start the command on this host (no image here: commands come from the host): ';

export function createProcessRuntime(options: ProcessRuntimeOptions): ContainerRuntime {
  return new ProcessRuntime(options);
}

interface ContainerRecord {
  /** The live status; callers only ever get copies. */
  readonly status: RuntimeContainerStatus;
  readonly sandboxID: string;
  readonly env: Record<string, string>;
  readonly cwd: string | undefined;
  readonly log: ContainerLog | undefined;
  readonly group: ProcessGroup | undefined;
  /** Running exec'd commands, killed when the container exits. */
  readonly execs: Set<ProcessGroup>;
  /** Settles once the container has exited, its status says so and `exited` was emitted. */
  done: Promise<void>;
}

/** What startContainer has worked out before anything is started. */
interface LaunchPlan {
  readonly sandboxID: string;
  readonly status: RuntimeContainerStatus;
  readonly argv: string[];
  readonly env: Record<string, string>;
  readonly cwd: string | undefined;
  readonly logPath: string;
}

/** The local runtime (see the file comment); build it with {@link createProcessRuntime}. */
export class ProcessRuntime implements ContainerRuntime {
  private readonly clock: Clock;
  private readonly runDir: string;
  private readonly logTailBytes: number | undefined;
  private readonly hostname: string;
  private readonly onLogWriteError: ProcessRuntimeOptions['onLogWriteError'];
  private readonly sandboxes = new Map<string, PodSandbox>();
  private readonly containers = new Map<string, ContainerRecord>();
  private readonly events = containerEvents();
  /** Starts and execs in flight, so close() can wait for processes it cannot see yet. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly execGroups = new Set<ProcessGroup>();
  private closing: Promise<void> | undefined;
  /** Starts execs off this process's event loop; opened at the first exec. */
  private spawner: Spawner | undefined;
  private readonly record: ContainerRecordFile | undefined;

  constructor(options: ProcessRuntimeOptions) {
    this.record = options.containerRecord !== undefined ? openContainerRecord(options.containerRecord) : undefined;
    this.clock = options.clock ?? realClock;
    this.runDir = options.runDir;
    this.logTailBytes = options.logTailBytes;
    this.hostname = options.hostname ?? osHostname();
    this.onLogWriteError = options.onLogWriteError;
  }

  runPodSandbox(pod: Pod): Promise<PodSandbox> {
    if (this.closing) return Promise.reject(new Error('container runtime is closed'));
    const sandbox: PodSandbox = { id: newID(), podUID: pod.metadata?.uid ?? '', podIP: LOCAL_POD_IP };
    this.sandboxes.set(sandbox.id, sandbox);
    return Promise.resolve({ ...sandbox });
  }

  async removePodSandbox(sandboxID: string): Promise<void> {
    if (!this.sandboxes.delete(sandboxID)) return;
    const records = [...this.containers.values()].filter((r) => r.sandboxID === sandboxID);
    for (const record of records) record.group?.kill('SIGKILL');
    await Promise.all(records.map((r) => r.done));
    for (const record of records) this.containers.delete(record.status.id);
  }

  startContainer(sandboxID: string, pod: Pod, container: Container, attempt: number): Promise<RuntimeContainerStatus> {
    let plan: LaunchPlan;
    try {
      plan = this.plan(sandboxID, pod, container, attempt);
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    const launch = this.launch(plan);
    this.track(launch);
    return launch;
  }

  async stopContainer(containerID: string, gracePeriodMs: number): Promise<void> {
    const record = this.containers.get(containerID);
    if (!record) return;
    if (record.group?.running) await record.group.terminate(gracePeriodMs);
    await record.done;
  }

  /** CRI semantics: a running container is killed (SIGKILL) first; an unknown one is a no-op. */
  async removeContainer(containerID: string): Promise<void> {
    const record = this.containers.get(containerID);
    if (!record) return;
    record.group?.kill('SIGKILL');
    await record.done;
    this.containers.delete(containerID);
  }

  containerStatus(containerID: string): RuntimeContainerStatus | undefined {
    const record = this.containers.get(containerID);
    return record ? { ...record.status } : undefined;
  }

  listContainers(podUID?: string): RuntimeContainerStatus[] {
    const out: RuntimeContainerStatus[] = [];
    for (const { status } of this.containers.values()) {
      if (podUID === undefined || status.podUID === podUID) out.push({ ...status });
    }
    return out;
  }

  execSync(containerID: string, cmd: string[], timeoutMs: number): Promise<ExecResult> {
    const record = this.containers.get(containerID);
    if (this.closing) return Promise.reject(new Error('container runtime is closed'));
    if (!record) return Promise.reject(new Error(`container "${containerID}" not found`));
    if (record.status.state !== 'running') {
      return Promise.reject(new Error(`container not running: container "${containerID}" is ${record.status.state}`));
    }
    const run = execInContainer(
      {
        env: record.env,
        cwd: record.cwd,
        clock: this.clock,
        onSpawn: (group) => this.adoptExec(record, group),
        spawn: (this.spawner ??= openSpawner()).spawnGroup,
      },
      cmd,
      timeoutMs,
    );
    this.track(run);
    return run;
  }

  containerLogs(containerID: string): string {
    return this.containers.get(containerID)?.log?.tail() ?? '';
  }

  subscribe(listener: (event: ContainerEvent) => void): () => void {
    return this.events.subscribe(listener);
  }

  close(): Promise<void> {
    this.closing ??= this.killEverything();
    return this.closing;
  }

  private async killEverything(): Promise<void> {
    const killAll = (): void => {
      for (const record of this.containers.values()) record.group?.kill('SIGKILL');
      for (const group of this.execGroups) group.kill('SIGKILL');
    };
    killAll();
    // Starts and execs in flight settle now: each kills its process once it sees the runtime closed.
    await Promise.allSettled([...this.inFlight]);
    killAll();
    await Promise.all([...this.containers.values()].map((r) => r.done));
    await this.spawner?.close();
    this.record?.clear();
  }

  private assertOpen(): void {
    if (this.closing) throw new Error('container runtime is closed');
  }

  /** Everything that can be refused is refused here, before any file or process exists. */
  private plan(sandboxID: string, pod: Pod, container: Container, attempt: number): LaunchPlan {
    this.assertOpen();
    const sandbox = this.sandboxes.get(sandboxID);
    if (!sandbox) throw new Error(`pod sandbox "${sandboxID}" not found`);
    const fieldPath = containerFieldPath(pod, container);
    if (!container.command || container.command.length === 0) {
      throw runtimeInputError(
        `${fieldPath}.command`,
        'Required value: the local runtime does not run images, so there is no image ENTRYPOINT ' +
          'to fall back on; give the command explicitly',
      );
    }
    const vars = resolveContainerEnv(pod, container, { podIP: sandbox.podIP }, fieldPath);
    const meta = pod.metadata ?? {};
    const podRef = { namespace: meta.namespace ?? 'default', name: meta.name ?? '', uid: meta.uid ?? '' };
    const logPath = containerLogPath(this.runDir, podRef, container.name, attempt);
    return {
      sandboxID,
      argv: expandCommandLine(container, vars),
      env: { ...baseEnvironment(podHostname(pod, this.hostname)), ...Object.fromEntries(vars) },
      // No workingDir: the directory probelet runs in, so relative paths in commands work
      // as they do in the user's shell (a container would use the image's WorkingDir).
      cwd: container.workingDir || undefined,
      logPath,
      status: {
        id: newID(),
        podUID: sandbox.podUID,
        name: container.name,
        attempt,
        image: container.image ?? '',
        state: 'created',
        createdAt: this.clock.now(),
        logPath,
      },
    };
  }

  private async launch(plan: LaunchPlan): Promise<RuntimeContainerStatus> {
    let log: ContainerLog;
    try {
      const report = this.onLogWriteError;
      log = await openContainerLogAsync(plan.logPath, this.logTailBytes, report && ((path, error) => report({ ...plan.status }, path, error)));
    } catch (err) {
      return this.failStart(plan, undefined, `failed to create container log file: ${errorText(err)}`);
    }
    let group: ProcessGroup;
    try {
      group = await spawnGroup({
        argv: plan.argv,
        env: plan.env,
        cwd: plan.cwd,
        maxOutputBytes: 0,
        onOutput: (_stream, chunk) => log.write(chunk),
        clock: this.clock,
      });
    } catch (err) {
      log.close();
      return this.failStart(plan, log, `${START_ERROR_PREFIX}${errorText(err)}`);
    }
    plan.status.state = 'running';
    plan.status.startedAt = this.clock.now();
    const record = newRecord(plan, log, group);
    record.done = group.exited.then((exit) => {
      this.record?.remove(group.pid);
      this.finish(record, exit);
    });
    this.record?.add(group.pid);
    this.containers.set(plan.status.id, record);
    this.events.emit('started', record.status);
    // Closed or sandbox removed while the process was starting: it must not survive that.
    if (this.closing || !this.sandboxes.has(plan.sandboxID)) group.kill('SIGKILL');
    return { ...plan.status };
  }

  /** A container that could not start: exited with containerd's StartError, reported like any exit. */
  private failStart(plan: LaunchPlan, log: ContainerLog | undefined, message: string): RuntimeContainerStatus {
    Object.assign(plan.status, {
      state: 'exited',
      finishedAt: this.clock.now(),
      exitCode: 128,
      reason: 'StartError',
      message,
    } satisfies Partial<RuntimeContainerStatus>);
    const record = newRecord(plan, log, undefined);
    this.containers.set(plan.status.id, record);
    this.events.emit('exited', record.status);
    return { ...plan.status };
  }

  private finish(record: ContainerRecord, exit: ProcessExit): void {
    Object.assign(record.status, {
      state: 'exited',
      finishedAt: this.clock.now(),
      exitCode: exit.exitCode,
      reason: exit.exitCode === 0 ? 'Completed' : 'Error',
    } satisfies Partial<RuntimeContainerStatus>);
    // The container's PID namespace is gone: so is everything exec'd into it.
    for (const exec of record.execs) exec.kill('SIGKILL');
    record.log?.close();
    this.events.emit('exited', record.status);
  }

  private adoptExec(record: ContainerRecord, group: ProcessGroup): void {
    record.execs.add(group);
    this.execGroups.add(group);
    void group.exited.then(() => {
      record.execs.delete(group);
      this.execGroups.delete(group);
    });
    if (record.status.state !== 'running' || this.closing) group.kill('SIGKILL');
  }

  private track(work: Promise<unknown>): void {
    this.inFlight.add(work);
    const untrack = (): void => {
      this.inFlight.delete(work);
    };
    work.then(untrack, untrack);
  }
}

function newID(): string {
  return `${RUNTIME_SCHEME}${randomBytes(32).toString('hex')}`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function newRecord(plan: LaunchPlan, log: ContainerLog | undefined, group: ProcessGroup | undefined): ContainerRecord {
  return {
    status: plan.status,
    sandboxID: plan.sandboxID,
    env: plan.env,
    cwd: plan.cwd,
    log,
    group,
    execs: new Set(),
    done: Promise.resolve(),
  };
}
