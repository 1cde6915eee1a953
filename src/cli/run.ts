/**
 * `probelet run FILE…`: the local kubelet on Pod manifests, watched like
 * `kubectl get pods -w`, with the read-only API alongside.
 *
 * The life of a run: check every input before anything starts (exit 2 on bad input);
 * serve the API; run the pods; wait for a reason to stop (Ctrl-C/SIGTERM, every pod
 * Ready with `--exit-on-ready`, `--timeout`); then always delete the pods gracefully, as
 * a node drain would, so the user sees the shutdown their probes and grace periods give.
 * A second Ctrl-C kills everything at once. Either way no process is left behind and
 * nothing keeps the Node process alive afterwards.
 */
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import type { Pod } from '../api/types.js';
import { Kubelet } from '../kubelet/kubelet.js';
import { claimRunDirectory, releaseRunDirectory, removeOrphanedRunDirectories } from '../spawn/index.js';
import { startServer, type RunningServer } from '../server/server.js';
import type { KubeletView, ViewChange } from '../server/view.js';
import { EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE } from './exit-codes.js';
import { CliUsageError, type CliIO } from './io.js';
import { createLiveView, type OutputFormat } from './live-view.js';
import { checkCommand, formatMeasurements, measure, type MeasurementsLine } from './measurements.js';
import { parseDuration, parseListen, type ListenAddress } from './run-flags.js';
import { admitAndReport, asNewPod, loadPods, printRejected } from './run-input.js';
import { RUNTIME_NAMES, createRuntime, runsImages, type RuntimeFlags } from './run-runtime.js';
import { createStopGate, type StopGate } from './stop-gate.js';
import { processSignals, processTerminal, type SignalSource, type Terminal } from './terminal.js';

interface RunFlags extends RuntimeFlags {
  listen: string;
  output: OutputFormat;
  exitOnReady?: boolean;
  timeout?: string;
  kubeletRestart?: boolean;
  logDir?: string;
  keepLogs?: boolean;
}

/** The process around the command; tests drive it in-process with their own. */
export interface RunEnvironment {
  terminal: Terminal;
  signals: SignalSource;
}

/**
 * The Warning event of a container log that could not be written. probelet's own: the
 * kubelet leaves log files to the runtime, and containerd says nothing of a full disk.
 */
export const LOG_WRITE_FAILED = 'FailedToWriteLog';

/** After a forced stop (second Ctrl-C) or an error, how long the kubelet may take to wind down once its processes are dead. */
const FORCED_STOP_WAIT_MS = 5000;

export function registerRunCommand(
  program: Command,
  io: CliIO,
  setExit: (code: number) => void,
  env: RunEnvironment = { terminal: processTerminal, signals: processSignals },
): void {
  program
    .command('run')
    .description('Run Pod manifests locally, one process per container, probes included; watch them like `kubectl get pods -w`.')
    .argument('<file...>', 'manifests (YAML or JSON) holding Pods, PodLists or Lists of Pods')
    .option('--listen <host:port>', 'address of the read-only API (/healthz, /pods, /events, /probes, /metrics/probes) and of the dashboard (/); port 0 picks a free port', '127.0.0.1:10255')
    .addOption(new Option('-o, --output <format>', 'live view, or one JSON object per line').choices(['table', 'json']).default('table'))
    .option('--exit-on-ready', 'stop (gracefully) and exit 0 once every pod is Ready; exit 1 if --timeout passes first')
    .option('--timeout <duration>', 'stop (gracefully) after this long: 30s, 2m, 1m30s or plain seconds')
    .option('--kubelet-restart', 'behave like a kubelet that has just restarted (jittered first probes) instead of one running for a while')
    .addOption(new Option('--runtime <name>', 'container runtime: host processes, or a CRI runtime (containerd, CRI-O) running the images').choices(RUNTIME_NAMES).default('process'))
    .option('--cri-endpoint <endpoint>', 'CRI socket for --runtime cri (default: $CONTAINER_RUNTIME_ENDPOINT, else unix:///run/containerd/containerd.sock)')
    .option('--log-dir <dir>', 'write container logs to this directory (created if needed) and keep them')
    .option('--keep-logs', 'keep the temporary log directory at exit (by default it is removed unless the run failed)')
    .action(async (files: string[], flags: RunFlags) => {
      setExit(await runPods(files, flags, io, env));
    });
}

async function runPods(files: string[], flags: RunFlags, io: CliIO, env: RunEnvironment): Promise<number> {
  const timeoutMs = flags.timeout === undefined ? undefined : parseDuration(flags.timeout, '--timeout');
  const listen = parseListen(flags.listen);

  const loaded = await loadPods(files, io);
  if (!loaded) return EXIT_USAGE;
  const admitted = admitAndReport(
    loaded.map((pod) => asNewPod(pod, Date.now())),
    io,
    { requireCommand: !runsImages(flags) },
  );
  if (admitted.pods.length === 0) return EXIT_USAGE;

  // Served before the kubelet exists: a busy port must not cost a started pod.
  const api = deferredView();
  const server = await serve(api, listen);
  try {
    const logs = await openLogDir(flags);
    if (flags.output === 'json') {
      io.stdout(`${JSON.stringify({ type: 'run', url: server.url, runDir: logs.dir })}\n`);
    } else {
      io.stdout(`Dashboard: ${server.url}/\nRead-only API: ${server.url} (/healthz, /pods, /events, /probes, /metrics/probes)\nContainer logs: ${logs.dir}\n\n`);
    }
    let code: number = EXIT_USAGE;
    try {
      code = await runKubelet({ pods: admitted.pods, files, flags, timeoutMs, runDir: logs.dir, api, io, env });
      return code;
    } finally {
      await logs.release(code === EXIT_OK, io);
    }
  } finally {
    await server.close();
  }
}

/** The temporary run directories' names: `<tmpdir>/probelet-run-XXXXXX`. */
const RUN_DIR_PREFIX = 'probelet-run-';

interface LogDir {
  dir: string;
  /** At exit: removes a temporary directory after a clean run; otherwise says where the logs are. */
  release(clean: boolean, io: CliIO): Promise<void>;
}

/**
 * Where container logs go: `--log-dir` (kept), else a fresh temporary directory that is
 * removed when the run ends cleanly — a run, and so a test run, leaves nothing behind —
 * and kept, with a note on stderr, after a failure or with `--keep-logs`.
 */
async function openLogDir(flags: RunFlags): Promise<LogDir> {
  if (flags.logDir !== undefined) {
    const dir = resolve(flags.logDir);
    try {
      await mkdir(dir, { recursive: true });
    } catch (err) {
      throw new CliUsageError(`--log-dir ${flags.logDir}: ${err instanceof Error ? err.message : String(err)}`);
    }
    return { dir, release: () => Promise.resolve() };
  }
  // What runs killed with their supervisor left (docs/reliability-signals.md).
  removeOrphanedRunDirectories(tmpdir(), RUN_DIR_PREFIX);
  const dir = await mkdtemp(join(tmpdir(), RUN_DIR_PREFIX));
  // Removed by the supervisor, or by the next run, if probelet is killed before release.
  claimRunDirectory(dir);
  return {
    dir,
    release: async (clean, io) => {
      releaseRunDirectory(dir);
      // An empty directory (the run failed before any container wrote) holds nothing worth keeping.
      const empty = (await readdir(dir).catch(() => [])).length === 0;
      if ((clean || empty) && flags.keepLogs !== true) {
        await rm(dir, { recursive: true, force: true });
        return;
      }
      io.stderr(`probelet: container logs kept in ${dir}\n`);
    },
  };
}

interface Session {
  pods: Pod[];
  /** The manifests as given, for the suggested `probelet check` line. */
  files: string[];
  flags: RunFlags;
  timeoutMs: number | undefined;
  runDir: string;
  api: DeferredView;
  io: CliIO;
  env: RunEnvironment;
}

/** Runs the admitted pods until a reason to stop, then deletes them; returns the exit code. */
async function runKubelet({ pods, files, flags, timeoutMs, runDir, api, io, env }: Session): Promise<number> {
  // A log that could not be written (a full disk): said at once, the run goes on, exit 1 at the end.
  let logsLost = false;
  const attached: { kubelet?: Kubelet } = {};
  const runtime = await createRuntime(flags, runDir, {
    onLogWriteError: (container, path, error) => {
      logsLost = true;
      const pod = attached.kubelet?.listPods().find((p) => p.metadata?.uid === container.podUID);
      const message = `Writing the container log ${path} failed: ${error.message}; the rest of this container's output is lost (it keeps running)`;
      if (pod) attached.kubelet?.recorder.event({ pod, containerName: container.name }, 'Warning', LOG_WRITE_FAILED, message);
      io.stderr(`probelet: ${pod?.metadata?.name ?? container.podUID}/${container.name}: ${message}; probelet will exit ${EXIT_FAILED}\n`);
    },
  });
  const kubelet = new Kubelet({ runtime, kubeletRestart: flags.kubeletRestart === true });
  attached.kubelet = kubelet;
  api.attach(kubelet);
  let outputLost = false;
  const out: CliIO = { stdout: (text) => void (outputLost || io.stdout(text)), stderr: (text) => io.stderr(text) };
  const view = createLiveView({ output: flags.output, io: out, terminal: env.terminal, podNames: pods.map((p) => p.metadata?.name ?? '') });
  const stop = createStopGate();
  const watching = pods.map((p) => p.metadata?.uid ?? '');
  const latest = new Map<string, Pod>();
  const offStatus = kubelet.onPodStatus((pod) => {
    latest.set(pod.metadata?.uid ?? '', pod);
    view.pod(pod);
    if (flags.exitOnReady) judgeReadiness(watching, latest, stop);
  });
  const offEvents = kubelet.recorder.subscribe((event) => view.event(event));
  // `{"type":"probe",…}`: every recorded attempt and transition, as the flight recorder saw it.
  const offProbes =
    flags.output === 'json'
      ? kubelet.probeManager.flightRecorder?.subscribe((entry) => {
          const { pod, namespace, container, probeType } = entry.ring;
          const what = entry.kind === 'attempt' ? { attempt: entry.attempt } : { transition: entry.transition };
          out.stdout(`${JSON.stringify({ type: 'probe', pod, namespace, container, probeType, ...what })}\n`);
        })
      : undefined;
  const startedAt = Date.now();
  const offSignals = env.signals.listen((signal) => {
    if (signal === 'SIGPIPE') outputLost = true;
    const why = signal === 'SIGPIPE' ? 'the output was closed' : `${signal} received`;
    if (!stop.request({ code: EXIT_OK, why })) stop.force();
  });
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          const why = `--timeout ${flags.timeout ?? ''} reached`;
          stop.request(flags.exitOnReady ? { code: EXIT_FAILED, why: `${why} before every pod was Ready` } : { code: EXIT_OK, why });
        }, timeoutMs);

  let closing: Promise<void> | undefined;
  try {
    printRejected(kubelet.addPods(pods), out);
    const outcome = await stop.requested;
    view.notice(`probelet: ${outcome.why}: deleting every pod gracefully (Ctrl-C again kills them at once)`);
    closing = kubelet.close();
    // Deletion is a change a watcher sees (Terminating) before any container has stopped.
    for (const pod of kubelet.listPods()) view.pod(pod);
    const forced = await Promise.race([closing.then(() => false), stop.forced.then(() => true)]);
    if (!forced) return logsLost && outcome.code === EXIT_OK ? EXIT_FAILED : outcome.code;
    view.notice('probelet: killing every container now');
    return EXIT_INTERRUPTED;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    // Normally a no-op (the kubelet closed it); after a forced stop or an error, the kill.
    await runtime.close();
    await withinMs(closing ?? kubelet.close(), FORCED_STOP_WAIT_MS);
    offStatus();
    offEvents();
    offProbes?.();
    view.close();
    offSignals();
    reportMeasurements(kubelet, files, startedAt, flags.output, out);
  }
}

/** What the run measured, and the `probelet check` line that feeds it to `check`. */
function reportMeasurements(kubelet: Kubelet, files: string[], startedAt: number, output: OutputFormat, out: CliIO): void {
  const containers = measure(kubelet.listProbes(), startedAt);
  const check = checkCommand(files, containers);
  if (output === 'json') {
    const line: MeasurementsLine = { type: 'measurements', since: new Date(startedAt).toISOString(), containers, check };
    out.stdout(`${JSON.stringify(line)}\n`);
  } else {
    out.stdout(`\n${formatMeasurements(containers, check)}`);
  }
}

/** The read-only API on the requested address; a refused address is bad input. */
async function serve(view: KubeletView, listen: ListenAddress): Promise<RunningServer> {
  try {
    return await startServer(view, listen);
  } catch (err) {
    throw new CliUsageError(`--listen ${listen.host}:${listen.port}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

interface DeferredView extends KubeletView {
  attach(target: KubeletView): void;
}

/** Serves nothing (no pods, no events) until the kubelet is attached. */
function deferredView(): DeferredView {
  let target: KubeletView | undefined;
  /** Stream listeners that came before the kubelet: handed over when it is attached. */
  const early = new Map<(change: ViewChange) => void, () => void>();
  return {
    listPods: () => target?.listPods() ?? [],
    listEvents: (filter) => target?.listEvents(filter) ?? [],
    probeMetrics: () => target?.probeMetrics() ?? Promise.resolve(''),
    listProbes: (query) => target?.listProbes?.(query) ?? [],
    watch: (listener) => {
      if (target?.watch) return target.watch(listener);
      early.set(listener, () => undefined);
      return () => {
        early.get(listener)?.();
        early.delete(listener);
      };
    },
    attach: (k) => {
      target = k;
      for (const listener of early.keys()) early.set(listener, k.watch?.(listener) ?? (() => undefined));
    },
  };
}

/** `--exit-on-ready`: yes once every pod is Ready; a definite no when a pod finished without being Ready. */
function judgeReadiness(uids: readonly string[], latest: ReadonlyMap<string, Pod>, stop: StopGate): void {
  const pods = uids.map((uid) => latest.get(uid));
  if (pods.every((p) => p !== undefined && isReady(p))) {
    stop.request({ code: EXIT_OK, why: 'every pod is Ready' });
    return;
  }
  const finished = pods.find((p) => p?.status?.phase === 'Succeeded' || p?.status?.phase === 'Failed');
  if (finished) {
    stop.request({ code: EXIT_FAILED, why: `pod ${finished.metadata?.name ?? ''} is ${finished.status?.phase ?? ''} and will never be Ready` });
  }
}

function isReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Waits for `work`, but no longer than `ms` (a timer that does not keep the process alive). */
async function withinMs(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([work.then(() => undefined, () => undefined), timeout]);
  clearTimeout(timer);
}
