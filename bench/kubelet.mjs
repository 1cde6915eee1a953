#!/usr/bin/env node
/**
 * `npm run bench -- --scenario kubelet` (issue 19 §4, issue 27): the real kubelet as probelet's
 * performance anchor. The same pods — N with an HTTP or TCP readiness probe aimed at a server
 * in this process on 127.0.0.1 (a path or a port per pod, so each probe's arrival is logged
 * per pod; a server set per agent), M with an exec readiness probe — run under the kubelet of
 * `npm run cluster:up` (on its containerd instance `kubelet`) and under `probelet run
 * --runtime cri` on a containerd instance of its own (`cri-up --name bench`), **at once**: both
 * agents are measured over the same windows, so a load that changes during the run (other
 * work on a shared machine) weighs on both alike. For each agent: its process's CPU
 * (utime+stime+cutime+cstime of /proc/<pid>/stat) over a window with one pod without probes
 * (idle) and over a window with all pods (loaded), RSS, the probes its server got, their
 * intervals against the period, and each window's load average. Bounded: every wait has a
 * limit, probelet runs with --timeout, every pod is deleted at the end (and on INT/TERM/HUP).
 * See docs/performance-kubelet.md.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { takeClusterLock } from '../cluster/lock.mjs';
import { monotonicUs } from './lib/measure.mjs';
import { KUBELET_USAGE, jsonLine, kubeletReport, latenessOf, parseKubeletOptions, round } from './lib/kubelet-report.mjs';

/** @typedef {import('./lib/kubelet-report.mjs').KubeletBenchOptions} KubeletBenchOptions */
/** @typedef {import('./lib/kubelet-report.mjs').AgentFigures} AgentFigures */

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const NAMESPACE = 'probelet-bench';
const IMAGE = 'probelet.local/busybox:test';
const CRI_INSTANCE = 'bench';
/** How long pods may take to start and get probed, and to go away. */
const START_LIMIT_MS = 240_000;
const DELETE_LIMIT_MS = 120_000;
/** How long to wait for others' pods to leave the kubelet's node before measuring anyway. */
const OTHERS_LIMIT_MS = 180_000;
/** After every target got its second probe: let start-up work (PLEG, status updates) settle. */
const SETTLE_MS = 10_000;
const CLOCK_TICKS = 100;

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** Cleanups run on exit, by a signal too. @type {(() => Promise<void>)[]} */
const cleanups = [];
let cleaning = false;
async function cleanUp() {
  if (cleaning) return;
  cleaning = true;
  for (const c of cleanups.reverse()) await c().catch((err) => process.stderr.write(`bench: cleanup: ${String(err)}\n`));
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']) {
  process.once(signal, () => {
    process.stderr.write(`bench: ${signal}: cleaning up\n`);
    void cleanUp().then(() => process.exit(130));
  });
}

/**
 * utime+stime+cutime+cstime of a process in seconds, and its RSS in MB.
 * @param {number} pid
 */
function procSample(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(f[14 - 3]) + Number(f[15 - 3]) + Number(f[16 - 3]) + Number(f[17 - 3]);
  const rssKiB = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1] ?? NaN);
  return { cpuS: ticks / CLOCK_TICKS, rssMB: round(rssKiB / 1024, 1) };
}

/**
 * The pid in a pid file when that process is alive and is the one the file names: the file
 * holds "PID STARTTIME" (cluster/up.sh, the start time of /proc/PID/stat, which holds from the
 * fork on) or, as containerd's do, a pid alone, then checked by its command line holding `needle`.
 * @param {string} file
 * @param {string} needle
 */
function livePid(file, needle) {
  try {
    const [pidText, start] = readFileSync(file, 'utf8').trim().split(/\s+/);
    const pid = Number(pidText);
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    if (start !== undefined) {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return fields[0] !== 'Z' && fields[22 - 3] === start ? pid : undefined;
    }
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(needle) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The agent's and its containerd's CPU over `windowS`, RSS sampled each second.
 * @param {number} agentPid
 * @param {number | undefined} containerdPid
 * @param {number} windowS
 * @param {() => Promise<void>} [every5s]  a check run every 5 s of the window (others' pods on the node)
 */
async function measureWindow(agentPid, containerdPid, windowS, every5s = async () => undefined) {
  const c0 = containerdPid === undefined ? undefined : procSample(containerdPid).cpuS;
  const a0 = procSample(agentPid);
  let rss = a0.rssMB;
  const end = Date.now() + windowS * 1000;
  for (let tick = 1; Date.now() < end; tick++) {
    await sleep(Math.min(1000, end - Date.now()));
    rss = Math.max(rss, procSample(agentPid).rssMB);
    if (tick % 5 === 0) await every5s();
  }
  const a1 = procSample(agentPid);
  const c1 = containerdPid === undefined || c0 === undefined ? undefined : procSample(containerdPid).cpuS;
  return { cpuS: round(a1.cpuS - a0.cpuS, 2), rssMB: rss, containerdCpuS: c1 === undefined || c0 === undefined ? NaN : c1 - c0, loadAvg: loadAverage() };
}

/** The machine's 1-minute load average now. */
function loadAverage() {
  return Number(readFileSync('/proc/loadavg', 'latin1').split(' ')[0]);
}

/**
 * The probed servers: one HTTP server (a path per pod) and one TCP listener per TCP pod, each
 * logging arrival times by pod. Answers 200 and closes as a plain server would.
 * @param {KubeletBenchOptions} o
 */
async function startTargets(o) {
  /** @type {Map<string, number[]>} */
  const arrivals = new Map();
  const log = (/** @type {string} */ pod) => {
    const list = arrivals.get(pod);
    if (list !== undefined) list.push(performance.timeOrigin + performance.now());
  };
  const http = createHttpServer((req, res) => {
    log((req.url ?? '').slice(1));
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
  });
  http.keepAliveTimeout = 1000;
  await new Promise((r) => http.listen(0, '127.0.0.1', () => r(undefined)));
  const httpPort = /** @type {import('node:net').AddressInfo} */ (http.address()).port;
  /** @type {{ name: string, kind: 'http' | 'tcp' | 'exec', port: number }[]} */
  const pods = [];
  /** @type {import('node:net').Server[]} */
  const tcp = [];
  for (let i = 0; i < o.pods; i++) {
    const kind = i % 2 === 0 ? 'http' : 'tcp';
    const name = `bench-${kind}-${i}`;
    arrivals.set(name, []);
    if (kind === 'http') {
      pods.push({ name, kind, port: httpPort });
      continue;
    }
    const server = createTcpServer((socket) => {
      log(name);
      socket.on('error', () => undefined);
      socket.end();
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
    tcp.push(server);
    pods.push({ name, kind, port: /** @type {import('node:net').AddressInfo} */ (server.address()).port });
  }
  for (let i = 0; i < o.execPods; i++) pods.push({ name: `bench-exec-${i}`, kind: 'exec', port: 0 });
  return {
    pods,
    arrivals,
    reset: () => {
      for (const list of arrivals.values()) list.length = 0;
    },
    /** True when every host-probed pod got at least `n` probes. */
    allProbed: (/** @type {number} */ n) => [...arrivals.values()].every((list) => list.length >= n),
    /** Arrivals within [from, to] by pod. */
    within: (/** @type {number} */ from, /** @type {number} */ to) => [...arrivals.values()].map((list) => list.filter((t) => t >= from && t <= to)),
    close: async () => {
      http.closeAllConnections();
      await Promise.all([http, ...tcp].map((s) => new Promise((r) => s.close(() => r(undefined)))));
    },
  };
}

/**
 * @param {string} name
 * @param {'http' | 'tcp' | 'exec' | 'idle'} kind
 * @param {number} port
 * @param {KubeletBenchOptions} o
 */
function podManifest(name, kind, port, o) {
  const probe = { periodSeconds: kind === 'exec' ? o.execPeriodS : o.periodS, timeoutSeconds: 1, failureThreshold: 3 };
  /** @type {Record<string, unknown> | undefined} */
  const readinessProbe =
    kind === 'http'
      ? { httpGet: { host: '127.0.0.1', port, path: `/${name}` }, ...probe }
      : kind === 'tcp'
        ? { tcpSocket: { host: '127.0.0.1', port }, ...probe }
        : kind === 'exec'
          ? { exec: { command: ['true'] }, ...probe }
          : undefined;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      dnsPolicy: 'Default',
      terminationGracePeriodSeconds: 2,
      containers: [
        {
          name: 'app',
          image: IMAGE,
          imagePullPolicy: 'Never',
          command: ['sh', '-c', 'trap "exit 0" TERM; sleep 86400 & wait'],
          ...(readinessProbe === undefined ? {} : { readinessProbe }),
        },
      ],
    },
  };
}

/**
 * Waits for `done()` every 500 ms up to `limitMs`.
 * @param {() => boolean | Promise<boolean>} done
 * @param {number} limitMs
 * @param {string} what
 */
/** The HTTP status of a failed API call. @param {unknown} err */
function codeOf(err) {
  return err instanceof ApiException ? err.code : undefined;
}

/** What a failed API call says. @param {unknown} err */
function messageOf(err) {
  if (err instanceof ApiException) return `HTTP ${err.code} ${typeof err.body === 'string' ? err.body : JSON.stringify(err.body)}`;
  return err instanceof Error ? err.message : String(err);
}

async function waitFor(done, limitMs, what) {
  const end = Date.now() + limitMs;
  while (!(await done())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${limitMs / 1000} s`);
    await sleep(500);
  }
}

/** The cluster's kubeconfig, bin directory, kubelet pid and node name, or why there is none. */
function findCluster() {
  const how = 'bring the cluster up with `npm run cluster:up` (as root; see docs/cluster.md), then run this again';
  let env;
  try {
    env = execFileSync('bash', [`${ROOT}cluster/env.sh`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch {
    return { why: `no cluster: ${how}` };
  }
  const kubeconfig = /^export KUBECONFIG=(.*)$/m.exec(env)?.[1];
  // PATH's directories before $PATH (the Kubernetes binaries', helm's): the one holding the kubelet.
  const binDir = /^export PATH=(.*):\$PATH$/m
    .exec(env)?.[1]
    ?.split(':')
    .find((d) => existsSync(join(d, 'kubelet')));
  if (kubeconfig === undefined || binDir === undefined) return { why: `cluster/env.sh printed no KUBECONFIG or PATH: ${how}` };
  const dir = process.env['PROBELET_CLUSTER_DIR'] ?? '/tmp/probelet-cluster';
  const kubeletPid = livePid(join(dir, 'run/kubelet.pid'), 'kubelet');
  if (kubeletPid === undefined) return { why: `the cluster at ${dir} has no running kubelet: ${how}` };
  return { kubeconfig, binDir, kubeletPid, node: process.env['PROBELET_KUBELET_NODE'] ?? 'probelet-kubelet' };
}

/**
 * The kubelet's side: its namespace (emptied of an interrupted earlier run's pods), pods
 * created bound to its node, and the others' pods on that node, noted.
 * @param {CoreV1Api} core  the cluster's API (@kubernetes/client-node, as `probelet node` uses)
 * @param {{ kubeletPid: number, node: string }} k
 */
async function kubeletSide(core, k) {
  const namespace = NAMESPACE;
  await core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } }).catch((err) => {
    if (codeOf(err) !== 409) throw new Error(`creating namespace ${namespace}: ${messageOf(err)}`);
  });
  await waitFor(() => core.readNamespacedServiceAccount({ name: 'default', namespace }).then(() => true, () => false), 60_000, 'the namespace\'s default service account');
  const pods = async () => (await core.listNamespacedPod({ namespace })).items;
  const deleteAll = async () => {
    await core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 });
    await waitFor(async () => (await pods()).length === 0, DELETE_LIMIT_MS, `deleting the pods of namespace ${namespace}`);
  };
  cleanups.push(deleteAll);
  await deleteAll(); // an interrupted earlier run's
  const others = async () => (await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${k.node}` })).items.filter((p) => p.metadata?.namespace !== namespace).length;
  // Others' pods (the oracle's, say) on the node put their work in the kubelet's figures: wait a while for them to go.
  await waitFor(async () => (await others()) === 0, OTHERS_LIMIT_MS, 'other pods leaving the node').catch(() =>
    process.stderr.write(`bench: other pods still on node ${k.node}; measuring anyway (the report counts them)\n`),
  );
  let otherPods = 0;
  return {
    /** The most others' pods seen on the node so far. */
    otherPods: () => otherPods,
    noteOthers: async () => void (otherPods = Math.max(otherPods, await others())),
    /** @param {object[]} manifests */
    create: async (manifests) => {
      for (let i = 0; i < manifests.length; i += 10) {
        await Promise.all(
          manifests.slice(i, i + 10).map((manifest) => {
            const body = /** @type {any} */ ({ ...manifest, spec: { .../** @type {any} */ (manifest).spec, nodeName: k.node } });
            return core.createNamespacedPod({ namespace, body }).catch((err) => {
              throw new Error(`creating a pod: ${messageOf(err).slice(0, 300)}`);
            });
          }),
        );
      }
    },
    running: async () => (await pods()).filter((p) => p.status?.phase === 'Running').length,
    deleteAll,
  };
}

/**
 * One `probelet run --runtime cri` over `manifests`, started; `pid`, the pods it shows
 * Running, and `stop` (idempotent; the CPU profile is written on exit).
 * @param {string} endpoint
 * @param {object[]} manifests
 * @param {KubeletBenchOptions} o
 * @param {string | undefined} profilePath  run under node --cpu-prof, writing this file
 */
function startProbelet(endpoint, manifests, o, profilePath) {
  const dir = mkdtempSync(join(tmpdir(), 'probelet-bench-'));
  const file = join(dir, 'pods.yaml');
  writeFileSync(file, manifests.map((m) => yaml.dump(m)).join('---\n'));
  const flags = [];
  if (profilePath !== undefined) {
    mkdirSync(dirname(profilePath), { recursive: true });
    flags.push('--cpu-prof', `--cpu-prof-dir=${dirname(profilePath)}`, `--cpu-prof-name=${basename(profilePath)}`);
  }
  const limitS = Math.ceil((START_LIMIT_MS / 1000 + SETTLE_MS / 1000 + o.windowS + 60) * 1.5);
  // The default output (a pipe: `kubectl get pods -w`-style rows, one when a pod's row changes), as
  // probelet would run: `-o json` adds a line per probe attempt, a cost the kubelet has no match for.
  const child = spawn(process.execPath, [...flags, `${ROOT}bin/probelet.js`, 'run', '--runtime', 'cri', '--cri-endpoint', endpoint, '--timeout', `${limitS}s`, file], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((r) => child.once('exit', (code) => r(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(60_000)]);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  cleanups.push(stop);
  /** @type {Map<string, string>} */
  const phases = new Map();
  const names = new Set(manifests.map((m) => /** @type {any} */ (m).metadata.name));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s) => (stderr = (stderr + s).slice(-2000)));
  let buffer = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      // NAME READY STATUS RESTARTS AGE; event lines name their object differently.
      const [name, , status] = line.trim().split(/\s+/);
      if (name !== undefined && status !== undefined && names.has(name)) phases.set(name, status);
    }
  });
  return {
    pid: /** @type {number} */ (child.pid),
    running: () => {
      if (child.exitCode !== null) throw new Error(`probelet run exited (${child.exitCode}) early: ${stderr}`);
      return [...phases.values()].filter((p) => p === 'Running').length;
    },
    stop,
  };
}

/**
 * Both agents over one window at once: their CPU, RSS and containerd's, and the load average
 * at its end (the same for both, which is the point).
 * @param {number} kubeletPid
 * @param {ReturnType<typeof startProbelet>} probelet
 * @param {KubeletBenchOptions} o
 * @param {() => Promise<void>} noteOthers
 */
async function measureBoth(kubeletPid, probelet, o, noteOthers) {
  await noteOthers();
  const [kubelet, mine] = await Promise.all([
    measureWindow(kubeletPid, livePid('/tmp/probelet-cri-kubelet/containerd.pid', 'containerd'), o.windowS, noteOthers),
    measureWindow(probelet.pid, livePid(`/tmp/probelet-cri-${CRI_INSTANCE}/containerd.pid`, 'containerd'), o.windowS),
  ]);
  return { kubelet, probelet: mine };
}

/**
 * The two agents side by side: an idle window (one pod without probes on each), then a
 * loaded one (that pod and every probed pod on each), each window measuring both at once.
 * @param {CoreV1Api} core
 * @param {{ kubeletPid: number, node: string, version: string }} k
 * @param {{ endpoint: string, version: string }} p
 * @param {KubeletBenchOptions} o
 * @returns {Promise<{ kubelet: AgentFigures, probelet: AgentFigures }>}
 */
async function runBoth(core, k, p, o) {
  const kubeletTargets = await startTargets(o);
  const probeletTargets = await startTargets(o);
  cleanups.push(kubeletTargets.close, probeletTargets.close);
  const kube = await kubeletSide(core, k);
  const idlePod = podManifest('bench-idle', 'idle', 0, o);
  const both = async (/** @type {() => Promise<boolean>} */ kubeletReady, /** @type {() => boolean} */ probeletReady, /** @type {string} */ what) => {
    await Promise.all([waitFor(kubeletReady, START_LIMIT_MS, `${what} on the kubelet`), waitFor(probeletReady, START_LIMIT_MS, `${what} under probelet`)]);
    await sleep(SETTLE_MS);
  };

  await kube.create([idlePod]);
  const idleRun = startProbelet(p.endpoint, [idlePod], o, undefined);
  await both(async () => (await kube.running()) >= 1, () => idleRun.running() >= 1, 'the idle pod running');
  process.stderr.write(`bench: idle window, both agents at once (${o.windowS} s)\n`);
  const idle = await measureBoth(k.kubeletPid, idleRun, o, kube.noteOthers);
  await idleRun.stop();

  kubeletTargets.reset();
  probeletTargets.reset();
  const all = (/** @type {typeof kubeletTargets} */ targets) => targets.pods.map((t) => podManifest(t.name, t.kind, t.port, o));
  await kube.create(all(kubeletTargets));
  const probeletAll = [idlePod, ...all(probeletTargets)];
  const profilePath = o.cpuProf ? `${ROOT}bench/profiles/probelet-kubelet-scenario-${Date.now()}.cpuprofile` : undefined;
  const loadedRun = startProbelet(p.endpoint, probeletAll, o, profilePath);
  await both(
    async () => kubeletTargets.allProbed(2) && (await kube.running()) >= probeletAll.length,
    () => loadedRun.running() >= probeletAll.length && probeletTargets.allProbed(2),
    `${probeletAll.length} pods started and probed`,
  );
  process.stderr.write(`bench: loaded window, both agents at once (${o.windowS} s)\n`);
  const from = Date.now();
  const us0 = monotonicUs();
  const loaded = await measureBoth(k.kubeletPid, loadedRun, o, kube.noteOthers);
  const window = [us0, monotonicUs()];
  const to = Date.now();
  await loadedRun.stop(); // the profile is written on exit
  // CLOCK_MONOTONIC is the machine's, the profile's clock too: profile-summary.mjs counts only the window.
  if (profilePath !== undefined) {
    writeFileSync(profilePath, JSON.stringify({ ...JSON.parse(readFileSync(profilePath, 'utf8')), benchWindowUs: window }));
    process.stderr.write(`bench: probelet profile (loaded window marked): node bench/profile-summary.mjs ${profilePath}\n`);
  }
  await kube.deleteAll();
  return {
    kubelet: figures('kubelet', k.version, idle.kubelet, loaded.kubelet, kubeletTargets.within(from, to), kube.otherPods(), o),
    probelet: figures('probelet', p.version, idle.probelet, loaded.probelet, probeletTargets.within(from, to), 0, o),
  };
}

/**
 * @param {'kubelet' | 'probelet'} agent
 * @param {string} version
 * @param {{ cpuS: number, rssMB: number, containerdCpuS: number, loadAvg: number }} idle
 * @param {{ cpuS: number, rssMB: number, containerdCpuS: number, loadAvg: number }} load
 * @param {number[][]} arrivals
 * @param {number} otherPods
 * @param {KubeletBenchOptions} o
 * @returns {AgentFigures}
 */
function figures(agent, version, idle, load, arrivals, otherPods, o) {
  return {
    agent,
    version,
    windowS: o.windowS,
    idleCpuS: idle.cpuS,
    loadCpuS: load.cpuS,
    idleRssMB: idle.rssMB,
    loadRssMB: load.rssMB,
    hostProbes: arrivals.reduce((n, a) => n + a.length, 0),
    execProbes: Math.round((o.execPods * o.windowS) / o.execPeriodS),
    containerdCpuS: round(load.containerdCpuS - idle.containerdCpuS, 2),
    lateness: latenessOf(arrivals, o.periodS * 1000),
    idleLoadAvg: idle.loadAvg,
    loadAvg: load.loadAvg,
    otherPods,
  };
}

async function main() {
  let o;
  try {
    o = parseKubeletOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n${KUBELET_USAGE}\n`);
    return 2;
  }
  const cluster = findCluster();
  if ('why' in cluster) {
    process.stderr.write(`bench: --scenario kubelet needs the local cluster's real kubelet: ${cluster.why}\n`);
    return 1;
  }
  // The oracle's pods (or a second bench's) on the node would be in the kubelet's figures.
  try {
    await takeClusterLock('bench --scenario kubelet');
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const config = new KubeConfig();
  config.loadFromFile(cluster.kubeconfig);
  const core = config.makeApiClient(CoreV1Api);
  const node = await core.readNode({ name: cluster.node }).catch((err) => {
    process.stderr.write(`bench: node ${cluster.node} is missing (${messageOf(err)}): check \`npm run cluster:up\` (docs/cluster.md)\n`);
    return undefined;
  });
  if (node === undefined) return 1;
  const ready = (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  if (!ready) {
    process.stderr.write(`bench: node ${cluster.node} is not Ready: check \`npm run cluster:up\` (docs/cluster.md)\n`);
    return 1;
  }
  const kubeletBinary = execFileSync(join(cluster.binDir, 'kubelet'), ['--version'], { encoding: 'utf8' }).trim();
  const kubeletVersion = `${kubeletBinary} (node ${cluster.node} reports ${node.status?.nodeInfo?.kubeletVersion}, runtime ${node.status?.nodeInfo?.containerRuntimeVersion})`;
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8'));
  const probeletVersion = `probelet ${pkg.version} run --runtime cri on node ${process.version}, containerd instance ${CRI_INSTANCE}`;

  try {
    process.stderr.write(`bench: ${kubeletVersion}\n`);
    const wasUp = livePid(`/tmp/probelet-cri-${CRI_INSTANCE}/containerd.pid`, 'containerd') !== undefined;
    const endpoint = execFileSync('bash', [`${ROOT}scripts/cri-up.sh`, '--name', CRI_INSTANCE], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
      .trim()
      .split('\n')
      .at(-1);
    if (endpoint === undefined || endpoint === '') throw new Error('cri-up printed no endpoint');
    if (!wasUp) cleanups.unshift(async () => void execFileSync('bash', [`${ROOT}scripts/cri-down.sh`, '--name', CRI_INSTANCE], { stdio: ['ignore', 'inherit', 'inherit'] }));
    const { kubelet, probelet } = await runBoth(
      core,
      { kubeletPid: cluster.kubeletPid, node: cluster.node, version: kubeletVersion },
      { endpoint, version: probeletVersion },
      o,
    );
    process.stdout.write(`${jsonLine(kubelet)}\n${jsonLine(probelet)}\n\n${kubeletReport(kubelet, probelet, o)}\n`);
    return 0;
  } finally {
    await cleanUp();
  }
}

if (!existsSync(`${ROOT}dist/index.js`)) {
  process.stderr.write('bench: dist/ is missing: run `npm run build` first\n');
  process.exitCode = 2;
} else {
  process.exitCode = await main().catch((err) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return cleanUp().then(() => 1);
  });
}
