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
import { access, constants, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import type { Pod } from '../../api/types.js';
import { Kubelet } from '../../kubelet/kubelet.js';
import type { ProbeClose } from '../../probe/types.js';
import { claimRunDirectory, releaseRunDirectory, removeOrphanedRunDirectories } from '../../spawn/index.js';
import { startServer, type RunningServer } from '../../server/server.js';
import type { KubeletView, ViewChange } from '../../server/view.js';
import { EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE } from '../exit-codes.js';
import { addExamples, filenameOption, inputPaths, outputOption } from '../flags.js';
import { requireReadable } from '../inputs.js';
import { boundedWriter } from './bounded-output.js';
import { createRunJsonView } from './json-lines.js';
import { CliUsageError, type CliIO } from '../io.js';
import { createLiveView, type OutputFormat } from '../view/live-view.js';
import { watchCrashes, type CrashNote } from '../view/crash-notes.js';
import { checkCommand, containerStartsOf, formatMeasurements, measure, type MeasurementsLine } from './measurements.js';
import { parseDuration, parseListen, type ListenAddress } from './flags.js';
import { admitAndReport, asNewPod, loadPods, printRejected } from './input.js';
import { PLEG_RELIST_PERIOD_MS } from '../../prober/start-latency.js';
import { RUNTIME_NAMES, createRuntime, criEndpoint, runsImages, type RuntimeFlags } from './runtime.js';
import { runtimeUnreachable } from '../../runtime/cri/grpc-error.js';
import { criEndpointAnswers, hostRuntimeNotice, refuseHostCommands, refuseVolumeMounts } from './host-runtime.js';
import { configObjectsOf, refuseUnsupportedVolumes, type VolumePolicy } from '../../runtime/docker/volumes.js';
import { withIdentity } from '../../kubelet/admission.js';
import { watchSpamFilter } from './spam-notice.js';
import { probeCloseOption } from '../probe/close-flag.js';
import { createStopGate, type StopGate } from './stop-gate.js';
import { processSignals, processTerminal, type SignalSource, type Terminal } from '../view/terminal.js';
import { clearLongTimeout, setLongTimeout } from '../../util/timer.js';
import { fdShortfall, fdShortfallMessage, outOfFdsRejection } from './fds.js';
import { makeDirs } from '../../util/make-dirs.js';
import { addImagePullOptions, imagePullOptions, type ImagePullFlags } from '../image-pulls.js';
import { manifestSecretGetter } from './pull-secrets.js';
import type { SecretGetter } from '../../kubelet/pull-secrets.js';
import type { ImagePullerOptions } from '../../kubelet/image-puller.js';

interface RunFlags extends RuntimeFlags, ImagePullFlags {
  listen: string;
  output: OutputFormat;
  exitOnReady?: boolean;
  timeout?: string;
  kubeletRestart?: boolean;
  logDir?: string;
  keepLogs?: boolean;
  probeClose: ProbeClose;
  hostWrites?: boolean;
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
  const command = program
    .command('run')
    .description(
      'Run pods locally, probes included, and watch them like `kubectl get pods -w`. Takes Pods, workloads (Deployment, StatefulSet, Job…: one pod per template), Lists, and - for standard input. With the default runtime each container is a host process running its command.',
    )
    .argument('[files...]', 'manifests (YAML or JSON): files, folders, or - for standard input')
    .addOption(filenameOption())
    .option('--listen <host:port>', 'address of the read-only API (/healthz, /pods, /events, /probes, /metrics/probes) and of the dashboard (/); port 0 picks a free port', '127.0.0.1:10255')
    .addOption(outputOption(['text', 'json'] as const, 'live view, or one JSON object per line'))
    .option('--exit-on-ready', 'stop (gracefully) and exit 0 once every pod is Ready; exit 1 if --timeout passes first')
    .option('--timeout <duration>', 'stop (gracefully) after this long: 30s, 2m, 1m30s or plain seconds')
    .option('--kubelet-restart', 'behave like a kubelet that has just restarted (jittered first probes) instead of one running for a while')
    .addOption(new Option('--runtime <name>', 'container runtime: host processes, a CRI runtime (containerd, CRI-O), or a Docker Engine / Podman service, the last two running the images').choices(RUNTIME_NAMES).default('process'))
    .option('--cri-endpoint <endpoint>', 'CRI socket for --runtime cri (default: $CONTAINER_RUNTIME_ENDPOINT, else unix:///run/containerd/containerd.sock)')
    .option('--docker-host <host>', 'Docker Engine API for --runtime docker: unix:///path or tcp://host:port (default: $DOCKER_HOST, else unix:///var/run/docker.sock)')
    .option('--allow-host-path', 'with --runtime docker: mount hostPath volumes (paths of this machine); without it such pods are refused')
    .option('--host-writes', 'process runtime: run pods whose commands write to host paths outside /tmp (refused otherwise)')
    .option('--log-dir <dir>', 'write container logs to this directory (created if needed) and keep them')
    .option('--keep-logs', 'keep the temporary log directory at exit (by default it is removed unless the run failed or a container crashed)')
    .addOption(probeCloseOption());
  addImagePullOptions(command)
    .action(async (files: string[], flags: RunFlags & { filename?: string[] }, cmd: Command) => {
      setExit(await runPods(inputPaths(files, flags.filename), flags, io, env, cmd.getOptionValueSource('runtime') === 'cli'));
    });
  addExamples(command, [
    'probelet run pod.yaml',
    'probelet run -f deploy.yaml --exit-on-ready --timeout 2m',
    'kubectl get pod web -o yaml | probelet run -',
  ]);
}

async function runPods(files: string[], flags: RunFlags, io: CliIO, env: RunEnvironment, runtimeGiven: boolean): Promise<number> {
  const timeoutMs = flags.timeout === undefined ? undefined : parseDuration(flags.timeout, '--timeout');
  const listen = parseListen(flags.listen);
  const imagePulls = imagePullOptions(flags);
  if (files.length === 0) throw new CliUsageError('run: give at least one manifest (FILE, -f FILE, or - for standard input)');
  await requireReadable(files);

  const loaded = await loadPods(files, io);
  if (!loaded.pods) return EXIT_USAGE;
  // Named now (generateName completed), so that a refusal below names the pod it refuses.
  let pods = loaded.pods.map(withIdentity);
  if (!runsImages(flags)) {
    pods = await onTheHost(pods, flags, io, runtimeGiven);
    if (pods.length === 0) return EXIT_USAGE;
  }
  // The docker runtime's volumes: configMap/secret from the manifests' own documents.
  const volumes = { allowHostPath: flags.allowHostPath === true, objects: configObjectsOf(loaded.configs) };
  if (flags.runtime === 'docker') {
    pods = refuseUnsupportedVolumes(pods, volumes, (text) => io.stderr(text));
    if (pods.length === 0) return EXIT_USAGE;
  }
  const refused = loaded.pods.length - pods.length;
  const admitted = admitAndReport(
    pods.map((pod) => asNewPod(pod, Date.now())),
    io,
    { requireCommand: !runsImages(flags) },
  );
  if (admitted.pods.length === 0) return EXIT_USAGE;
  // The process runtime holds every container's descriptors in probelet itself.
  const shortfall = runsImages(flags) ? undefined : fdShortfall(admitted.pods);
  let outOfFds = 0;
  if (shortfall) {
    io.stderr(`${fdShortfallMessage(shortfall, admitted.pods.length)}\n`);
    // Never start what cannot run (issue 33: the rest crash-looped on EMFILE): the pods that
    // fit run, the others are rejected as a kubelet rejects a pod over its node's capacity.
    const rejected = admitted.pods.splice(shortfall.podsThatFit);
    outOfFds = rejected.length;
    for (const pod of rejected) io.stderr(`probelet: ${outOfFdsRejection(pod, shortfall)}\n`);
    if (admitted.pods.length === 0) return EXIT_USAGE;
  }

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
    const crashed = new Map<string, CrashNote>();
    try {
      const secrets = manifestSecretGetter(files, { configs: loaded.configs, problems: loaded.loadProblems }, (line) => io.stderr(`probelet: ${line}\n`));
      code = await runKubelet({ pods: admitted.pods, files, flags, timeoutMs, runDir: logs.dir, api, io, env, crashed, volumes, images: { ...imagePulls, getSecret: secrets } });
    } finally {
      // The logs are about the run: a dropped document does not make them worth keeping,
      // a container that crashed does, whatever the exit code.
      await logs.release(code === EXIT_OK && crashed.size === 0, io, [...crashed.values()]);
    }
    // Documents or pods left out ran no container: a clean stop still says so in its code.
    const dropped = loaded.problems + refused + admitted.errors.length + outOfFds;
    if (dropped > 0 && code === EXIT_OK) {
      io.stderr(`probelet: ${dropped} problem${dropped === 1 ? '' : 's'} in the input (above): the other pods ran\n`);
      return EXIT_USAGE;
    }
    return code;
  } finally {
    await server.close();
  }
}

/**
 * The process runtime runs commands on this host: say so, and refuse the pods that mount
 * volumes or need their image's programs unless `--runtime process` was given, and those
 * whose commands write to host paths unless `--host-writes` was (see host-runtime.ts).
 * Returns the pods to run.
 */
async function onTheHost(pods: Pod[], flags: RunFlags, io: CliIO, runtimeGiven: boolean): Promise<Pod[]> {
  let endpoint: string | undefined;
  try {
    endpoint = criEndpoint(flags.criEndpoint);
  } catch {
    endpoint = undefined; // a malformed endpoint is --runtime cri's to report
  }
  const answering = endpoint !== undefined && (await criEndpointAnswers(endpoint)) ? endpoint : undefined;
  io.stderr(hostRuntimeNotice(answering));
  const stderr = (text: string): void => io.stderr(text);
  const mounting = runtimeGiven ? pods : refuseVolumeMounts(pods, stderr);
  return refuseHostCommands(mounting, { runtimeGiven, hostWrites: flags.hostWrites === true }, stderr);
}

/** The temporary run directories' names: `<tmpdir>/probelet-run-XXXXXX`. */
const RUN_DIR_PREFIX = 'probelet-run-';

interface LogDir {
  dir: string;
  /** At exit: removes a temporary directory after a clean run; otherwise says where the logs are, naming those of crashed containers. */
  release(clean: boolean, io: CliIO, crashed: readonly CrashNote[]): Promise<void>;
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
      await makeDirs(dir);
      await access(dir, constants.W_OK);
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
    release: async (clean, io, crashed) => {
      releaseRunDirectory(dir);
      // An empty directory (the run failed before any container wrote) holds nothing worth keeping.
      const empty = (await readdir(dir).catch(() => [])).length === 0;
      if ((clean || empty) && flags.keepLogs !== true) {
        await rm(dir, { recursive: true, force: true });
        return;
      }
      io.stderr(`probelet: container logs kept in ${dir}\n`);
      for (const c of crashed) if (c.logPath) io.stderr(`probelet:   ${c.pod}/${c.container} exited with code ${c.exitCode}: ${c.logPath}\n`);
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
  /** The latest crash of each container seen before the stop was requested (to keep their logs); one entry a container, so it stays bounded. */
  crashed: Map<string, CrashNote>;
  /** The docker runtime's volume policy and the manifests' ConfigMaps and Secrets. */
  volumes: VolumePolicy;
  /** The Kubelet's image pull settings and the pods' pull Secrets (from the manifests). */
  images: ImagePullerOptions & { getSecret: SecretGetter };
}

/** Runs the admitted pods until a reason to stop, then deletes them; returns the exit code. */
async function runKubelet({ pods, files, flags, timeoutMs, runDir, api, io, env, crashed, volumes, images }: Session): Promise<number> {
  // A log that could not be written (a full disk): said at once, the run goes on, exit 1 at the end.
  let logsLost = false;
  const attached: { kubelet?: Kubelet } = {};
  // The PLEG's relist instants, from now on every second: a start shows in the status, and to
  // the probe workers, at the first relist after the sync that did it (docs/timing-model.md §3).
  const relistPhaseMs = Date.now() % PLEG_RELIST_PERIOD_MS;
  const runtime = await createRuntime(flags, runDir, {
    relistPhaseMs,
    volumes,
    onLogWriteError: (container, path, error) => {
      logsLost = true;
      const pod = attached.kubelet?.listPods().find((p) => p.metadata?.uid === container.podUID);
      const message = `Writing the container log ${path} failed: ${error.message}; the rest of this container's output is lost (it keeps running)`;
      if (pod) attached.kubelet?.recorder.event({ pod, containerName: container.name }, 'Warning', LOG_WRITE_FAILED, message);
      io.stderr(`probelet: ${pod?.metadata?.name ?? container.podUID}/${container.name}: ${message}; probelet will exit ${EXIT_FAILED}\n`);
    },
  });
  const kubelet = new Kubelet({ runtime, kubeletRestart: flags.kubeletRestart === true, probeClose: flags.probeClose, relistPhaseMs, ...images });
  attached.kubelet = kubelet;
  api.attach(kubelet);
  let outputLost = false;
  // A stdout nobody reads holds at most STDOUT_BACKLOG_BYTES: the view's lines past it are dropped.
  const backlog = io.stdoutBacklog;
  const write = backlog
    ? boundedWriter((text) => io.stdout(text), backlog, (text) => io.stderr(`probelet: ${text}\n`))
    : (text: string): void => io.stdout(text);
  const out: CliIO = { stdout: (text) => void (outputLost || write(text)), stderr: (text) => io.stderr(text) };
  // JSON: a pod line when the pod changes, a containerStatus line when one container does (json-lines.ts).
  const view =
    flags.output === 'json'
      ? createRunJsonView(out, env.terminal)
      : createLiveView({ output: flags.output, io: out, terminal: env.terminal, podNames: pods.map((p) => p.metadata?.name ?? '') });
  const stop = createStopGate();
  const watching = pods.map((p) => p.metadata?.uid ?? '');
  const latest = new Map<string, Pod>();
  const offStatus = kubelet.onPodStatus((pod) => {
    latest.set(pod.metadata?.uid ?? '', pod);
    view.pod(pod);
    if (flags.exitOnReady) judgeReadiness(watching, latest, stop);
  });
  const offEvents = kubelet.recorder.subscribe((event) => view.event(event));
  const offSpam = watchSpamFilter(kubelet.recorder, (text) => view.notice(text));
  let stopping = false;
  const names = new Map(pods.map((p) => [p.metadata?.uid ?? '', p.metadata?.name ?? '']));
  const offCrashes = watchCrashes(
    runtime,
    (uid) => names.get(uid) ?? uid,
    () => stopping,
    (note) => {
      crashed.set(`${note.podUID}/${note.container}`, note);
      view.crash(note);
    },
  );
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
      : setLongTimeout(() => {
          const why = `--timeout ${flags.timeout ?? ''} reached`;
          stop.request(flags.exitOnReady ? { code: EXIT_FAILED, why: `${why} before every pod was Ready` } : { code: EXIT_OK, why });
        }, timeoutMs);

  let closing: Promise<void> | undefined;
  try {
    printRejected(kubelet.addPods(pods), out);
    const outcome = await stop.requested;
    stopping = true;
    view.notice(`probelet: ${outcome.why}: deleting every pod gracefully (Ctrl-C again kills them at once)`);
    closing = kubelet.close();
    // Deletion is a change a watcher sees (Terminating) before any container has stopped.
    for (const pod of kubelet.listPods()) view.pod(pod);
    const failure = closing.then(
      () => undefined,
      (err: unknown) => ({ err }),
    );
    const forced = await Promise.race([failure.then(() => false), stop.forced.then(() => true)]);
    if (!forced) {
      const failed = await failure;
      if (failed !== undefined) return deletionFailed(failed.err);
      return logsLost && outcome.code === EXIT_OK ? EXIT_FAILED : outcome.code;
    }
    view.notice('probelet: killing every container now');
    return EXIT_INTERRUPTED;
  } finally {
    if (timer !== undefined) clearLongTimeout(timer);
    // Normally a no-op (the kubelet closed it); after a forced stop or an error, the kill.
    await runtime.close();
    await withinMs(closing ?? kubelet.close(), FORCED_STOP_WAIT_MS);
    offStatus();
    offEvents();
    offSpam();
    offCrashes();
    offProbes?.();
    view.close();
    offSignals();
    reportMeasurements(kubelet, files, startedAt, flags.output, out);
  }
}

/**
 * The graceful deletion failed. A container runtime that stopped answering (containerd
 * gone, a Ctrl-C while it is down) has already said, in one line, what it left and the
 * `crictl` line that removes it (`leftBehind`): its raw gRPC error would only repeat that
 * less clearly, so the run ends with exit 2 ("errored") and no more words. Anything else
 * is an error of its own, printed as such.
 */
function deletionFailed(err: unknown): number {
  if (runtimeUnreachable(err)) return EXIT_USAGE;
  throw err;
}

/** What the run measured, and the `probelet check` line that feeds it to `check`. */
function reportMeasurements(kubelet: Kubelet, files: string[], startedAt: number, output: OutputFormat, out: CliIO): void {
  const containers = measure(kubelet.listProbes(), startedAt, containerStartsOf(kubelet.listPods()));
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

export interface DeferredView extends KubeletView {
  attach(target: KubeletView): void;
}

/** Serves nothing (no pods, no events) until the kubelet is attached. */
export function deferredView(): DeferredView {
  let target: KubeletView | undefined;
  /** Stream listeners that came before the kubelet: handed over when it is attached. */
  const early = new Map<(change: ViewChange) => void, () => void>();
  return {
    listPods: () => target?.listPods() ?? [],
    listEvents: (filter) => target?.listEvents(filter) ?? [],
    probeMetrics: () => target?.probeMetrics() ?? Promise.resolve(''),
    listProbes: (query) => target?.listProbes?.(query) ?? [],
    eachProbeHistory: (query) => target?.eachProbeHistory?.(query) ?? target?.listProbes?.(query) ?? [],
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
  let timer: unknown;
  const timeout = new Promise<void>((resolve) => {
    timer = setLongTimeout(resolve, ms, { ref: false });
  });
  await Promise.race([work.then(() => undefined, () => undefined), timeout]);
  clearLongTimeout(timer);
}
