/**
 * `probelet node --kubeconfig K`: joins a cluster as a node. The agent (src/node/) registers
 * the Node and its Lease and runs the pods bound to it through the same Kubelet as `probelet
 * run`; this command picks the runtime, serves the read-only API the Node's
 * `daemonEndpoints` names, logs to stderr, and stops cleanly on INT, TERM, HUP or QUIT:
 * running pods are stopped with their grace periods (their API objects stay; the node
 * lifecycle controller deals with a node that went away), nothing is left running.
 *
 * `--runtime simulated [--nodes N]`: kwok-like nodes from one process, each with its own
 * Lease, tainted `probelet.dev/simulated=true:NoSchedule`; containers play the behaviour
 * scripts of their pod's annotation in real time, and pods turn Ready when their probes pass.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { isIP } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Command, Option } from 'commander';
import type { Taint } from 'kubernetes-types/core/v1.js';
import { admitExistingPods } from '../api/admit.js';
import type { Pod } from '../api/types.js';
// Types only: the agent and @kubernetes/client-node (seconds to load) are imported when `node` runs, not by every command.
import type { NodeAgent, NodeAgentOptions } from '../node/agent.js';
import type { KubeClients } from '../node/kube.js';
import { startKubeletServer, type KubeletServer } from '../node/kubelet-server.js';
import { detectNodeAddress } from '../node/node-object.js';
import { DEFAULT_EVICTION_HARD, parseEvictionHard, type Threshold } from '../node/eviction.js';
import { readMachineStats } from '../node/machine-stats.js';
import { Prober } from '../prober/prober.js';
import type { ContainerRuntime } from '../runtime/types.js';
import { startServer, type RunningServer } from '../server/server.js';
import { DEFAULT_BEHAVIOUR_ANNOTATION, parseBehaviourAnnotation } from '../simulate/annotation.js';
import type { Behaviours } from '../simulate/behaviour.js';
import { PLEG_RELIST_PERIOD_MS } from '../prober/start-latency.js';
import { simulatedHandlers } from '../simulate/handlers.js';
import { simulatedHandlerRunner } from '../simulate/hooks.js';
import { NODE_ID_SPAN } from '../simulate/nodes.js';
import { SimRuntime } from '../simulate/runtime.js';
import { realClock } from '../util/clock.js';
import { EXIT_OK } from './exit-codes.js';
import { CliUsageError, type CliIO } from './io.js';
import { parseListen } from './run/flags.js';
import { deferredView } from './run/run.js';
import { containerRecordPath, removeRecordedLeftovers } from '../runtime/process-owner.js';
import { requireReadable } from './inputs.js';
import { createRuntime, type RuntimeFlags } from './run/runtime.js';
import { packageVersion } from './version.js';
import { setLongTimeout } from '../util/timer.js';

const NODE_RUNTIMES = ['process', 'cri', 'docker', 'simulated'] as const;

interface NodeFlags {
  kubeconfig?: string;
  name?: string;
  runtime: (typeof NODE_RUNTIMES)[number];
  criEndpoint?: string;
  dockerHost?: string;
  listen: string;
  nodeIp?: string;
  nodes?: string;
  behaviourAnnotation: string;
  evictionHard: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  clientCaFile?: string;
  port: string;
}

/** The signals that stop a node (a daemon is also stopped by HUP and QUIT). */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

/** RFC 1123 subdomain, what a Node's name must be. */
const NODE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The taint of simulated nodes (as kwok taints its own): only pods that tolerate it land there. */
export const SIMULATED_TAINT: Taint = { key: 'probelet.dev/simulated', value: 'true', effect: 'NoSchedule' };

export interface NodeEnvironment {
  /** Resolves with the first stop signal's name; tests pass their own. */
  stopped: () => Promise<string>;
  /**
   * Called once the node has stopped and cleaned up. The command's own process uses it so
   * that a request the API server never answers (a black hole: the node gave up waiting for
   * it) cannot keep the process alive.
   */
  afterStop?: () => void;
}

/** How long the process may linger after the node stopped before it exits anyway. */
const LINGER_MS = 2_000;

export const processStop: NodeEnvironment = {
  afterStop: () => {
    // Unref'd: it ends nothing that would end by itself, only what still hangs.
    setLongTimeout(() => process.exit(), LINGER_MS, { ref: false });
  },
  stopped: () =>
    new Promise((resolve) => {
      const on = (signal: NodeJS.Signals): void => {
        for (const s of STOP_SIGNALS) process.off(s, on);
        resolve(signal);
      };
      for (const s of STOP_SIGNALS) process.on(s, on);
    }),
};

export function registerNodeCommand(program: Command, io: CliIO, setExit: (code: number) => void, env: NodeEnvironment = processStop): void {
  program
    .command('node')
    .description('Join a Kubernetes cluster as a node: register a Node and its Lease, run the pods bound to it, write their status and events.')
    .option('--kubeconfig <file>', 'credentials and API server (default: $KUBECONFIG, else ~/.kube/config)')
    .option('--name <name>', "the Node's name (default: this machine's hostname, lower-cased); with --nodes, the prefix of <name>-0, <name>-1, …")
    .addOption(
      new Option('--runtime <name>', 'host processes; a CRI runtime (containerd, CRI-O) or a Docker Engine / Podman service running the images; or simulated containers playing behaviour scripts')
        .choices(NODE_RUNTIMES)
        .default('process'),
    )
    .option('--cri-endpoint <endpoint>', 'CRI socket for --runtime cri (default: $CONTAINER_RUNTIME_ENDPOINT, else unix:///run/containerd/containerd.sock)')
    .option('--docker-host <url>', 'the Docker Engine API for --runtime docker (default: $DOCKER_HOST, else unix:///var/run/docker.sock)')
    .option('--nodes <n>', 'with --runtime simulated: register this many nodes from one process')
    .option('--behaviour-annotation <key>', 'with --runtime simulated: the pod annotation holding CONTAINER[.PROBE]=SCRIPT behaviours', DEFAULT_BEHAVIOUR_ANNOTATION)
    .option('--node-ip <address>', "the Node's InternalIP, also its pods' IP (they share the host's network); default: this machine's first non-loopback IPv4 address")
    .option(
      '--eviction-hard <thresholds>',
      "the kubelet's hard eviction thresholds, which put the node's MemoryPressure, DiskPressure and PIDPressure conditions to True (nothing is evicted); '' for none",
      DEFAULT_EVICTION_HARD,
    )
    .option('--tls-cert-file <file>', "with --tls-private-key-file and --client-ca-file: serve the kubelet's authenticated API (kubectl logs) on --node-ip:--port with this certificate, named by the Node's daemonEndpoints")
    .option('--tls-private-key-file <file>', 'the key of --tls-cert-file')
    .option('--client-ca-file <file>', "the CA whose certificates may call the authenticated API (the API server's kubelet client certificate)")
    .option('--port <port>', 'the port of the authenticated API (0: any free one)', '10250')
    .option('--listen <host:port>', "the read-only API the Node's daemonEndpoints names (/healthz, /pods, /events, /metrics/probes); loopback only; port 0 picks one (always, with --nodes)", '127.0.0.1:10255')
    .action(async (flags: NodeFlags) => {
      setExit(await runNode(flags, io, env));
    });
}

/**
 * The authenticated API's files and port: all three files or none (one node only: the API
 * server reaches a node at its address and daemonEndpoints port). A file that cannot be read
 * is a usage error naming its flag.
 */
function tlsFiles(flags: NodeFlags, count: number | undefined): { pem: { cert: Buffer; key: Buffer; clientCA: Buffer }; port: number } | undefined {
  const given = { '--tls-cert-file': flags.tlsCertFile, '--tls-private-key-file': flags.tlsPrivateKeyFile, '--client-ca-file': flags.clientCaFile };
  const set = Object.entries(given).filter(([, v]) => v !== undefined);
  if (set.length === 0) return undefined;
  if (set.length < 3) {
    const missing = Object.entries(given).filter(([, v]) => v === undefined).map(([k]) => k);
    throw new CliUsageError(`${set.map(([k]) => k).join(' and ')} also need ${missing.join(' and ')} (the authenticated API needs a certificate, its key and the client CA)`);
  }
  if (count !== undefined) throw new CliUsageError('--tls-cert-file: not with --nodes (the API server reaches each node at its own address)');
  const port = Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliUsageError(`--port ${JSON.stringify(flags.port)}: expected a port from 0 to 65535`);
  const read = (flag: string, path: string | undefined): Buffer => {
    try {
      return readFileSync(path ?? '');
    } catch (err) {
      throw new CliUsageError(`${flag} ${path ?? ''}: cannot read: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  return {
    pem: { cert: read('--tls-cert-file', flags.tlsCertFile), key: read('--tls-private-key-file', flags.tlsPrivateKeyFile), clientCA: read('--client-ca-file', flags.clientCaFile) },
    port,
  };
}

function nodeCount(flags: NodeFlags): number | undefined {
  if (flags.nodes === undefined) return undefined;
  const n = Number(flags.nodes);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new CliUsageError(`--nodes ${JSON.stringify(flags.nodes)}: expected a whole number from 1 to 10000`);
  if (flags.runtime !== 'simulated') throw new CliUsageError('--nodes needs --runtime simulated (one process runs one real node)');
  return n;
}

interface RunningNode {
  server: RunningServer;
  secure?: KubeletServer;
  runtime?: ContainerRuntime;
  agent?: NodeAgent;
}

/** What every node of the process shares, before its runtime is chosen. */
type CommonOptions = Omit<NodeAgentOptions, 'runtime'>;

async function runNode(flags: NodeFlags, io: CliIO, env: NodeEnvironment): Promise<number> {
  // The input rule (docs/commands.md): a kubeconfig path typed on the command line that cannot be read stops everything.
  if (flags.kubeconfig !== undefined) await requireReadable([flags.kubeconfig]);
  const base = flags.name ?? hostname().toLowerCase();
  const count = nodeCount(flags);
  const names = count === undefined ? [base] : Array.from({ length: count }, (_, i) => `${base}-${i}`);
  for (const name of names) {
    if (!NODE_NAME.test(name) || name.length > 253) {
      throw new CliUsageError(`--name ${JSON.stringify(base)}: a Node's name must be lower-case letters, digits, '-' and '.', starting and ending with a letter or digit`);
    }
  }
  const listen = parseListen(flags.listen);
  const tls = tlsFiles(flags, count);
  let evictionHard: Threshold[];
  try {
    evictionHard = parseEvictionHard(flags.evictionHard);
  } catch (err) {
    throw new CliUsageError(err instanceof Error ? err.message : String(err));
  }
  const address = flags.nodeIp ?? detectNodeAddress();
  if (address === undefined) {
    throw new CliUsageError('--node-ip: this machine has no non-loopback IPv4 address; give the address the cluster reaches it at (the API server refuses loopback pod IPs in EndpointSlices)');
  }
  if (isIP(address) === 0) throw new CliUsageError(`--node-ip ${JSON.stringify(address)}: not an IP address`);
  const { loadKubeClients } = await import('../node/kube.js');
  const { startNodeAgent } = await import('../node/agent.js');
  let clients: KubeClients;
  try {
    clients = loadKubeClients(flags.kubeconfig);
  } catch (err) {
    throw new CliUsageError(`--kubeconfig: ${err instanceof Error ? err.message : String(err)}`);
  }
  const stopped = env.stopped();
  // A stop before every node registered (an API server out of reach) gives up the retries.
  const registering = new AbortController();
  let signalName: string | undefined;
  void stopped.then((signal) => {
    signalName = signal;
    registering.abort();
  });
  const log = (line: string): void => io.stderr(`${new Date().toISOString()} ${line}\n`);
  const runDir = await mkdtemp(join(tmpdir(), 'probelet-node-'));
  const nodes: RunningNode[] = [];
  const version = packageVersion();
  try {
    for (const [i, name] of names.entries()) {
      const view = deferredView();
      let server: RunningServer;
      try {
        server = await startServer(view, { host: listen.host, port: count === undefined ? listen.port : 0 });
      } catch (err) {
        throw new CliUsageError(`--listen ${listen.host}:${listen.port}: ${err instanceof Error ? err.message : String(err)}`);
      }
      const node: RunningNode = { server };
      nodes.push(node);
      const common: CommonOptions = {
        clients,
        name,
        runtimeVersion: `probelet-${flags.runtime}://${version}`,
        probeletVersion: version,
        port: server.address.port,
        address,
        log,
        evictionHard,
        // The PLEG's relist instants of this node, every second from now (as `run` has them):
        // the Kubelet's syncs and the CRI runtime's relist share them (docs/timing-model.md §3).
        relistPhaseMs: Date.now() % PLEG_RELIST_PERIOD_MS,
      };
      const options = flags.runtime === 'simulated' ? simulatedNode(common, i, flags.behaviourAnnotation, count !== undefined) : await realNode(common, flags, join(runDir, name));
      node.runtime = options.runtime;
      if (tls) {
        const runtime = options.runtime;
        try {
          node.secure = await startKubeletServer({ host: address, port: tls.port, ...tls.pem, pods: () => node.agent?.kubelet.listPods() ?? [], runtime, clock: realClock });
        } catch (err) {
          throw new CliUsageError(`--port ${tls.port} on --node-ip ${address}: ${err instanceof Error ? err.message : String(err)}`);
        }
        // daemonEndpoints names the authenticated port, as a kubelet's names its 10250.
        options.port = node.secure.port;
      }
      try {
        node.agent = await startNodeAgent({ ...options, signal: registering.signal });
      } catch (err) {
        if (!registering.signal.aborted) throw err;
        log(`${signalName ?? 'a signal'} received before node ${name} registered: stopping`);
        return EXIT_OK;
      }
      view.attach(node.agent.kubelet);
      log(`node ${name} registered with ${clients.server}; read-only API ${server.url}${node.secure ? `; authenticated API (kubectl logs) https://${address}:${node.secure.port}` : ''}`);
    }
    const signal = await stopped;
    log(`${signal} received: stopping the pods of ${names.length === 1 ? `node ${base}` : `${names.length} nodes`} (their API objects stay)`);
    return EXIT_OK;
  } finally {
    await Promise.all(
      nodes.map(async (n) => {
        await n.agent?.close();
        await n.secure?.close();
        await n.runtime?.close();
        await n.server.close();
      }),
    );
    await rm(runDir, { recursive: true, force: true });
    clients.close();
    const writes = nodes.reduce((sum, n) => ({ status: sum.status + (n.agent?.writes().status ?? 0), events: sum.events + (n.agent?.writes().events ?? 0) }), { status: 0, events: 0 });
    const renewals = nodes.map((n) => n.agent?.leaseRenewals() ?? { count: 0, longestGapMs: 0 });
    const leases = renewals.reduce((sum, r) => sum + r.count, 0);
    const longestGapS = Math.max(0, ...renewals.map((r) => r.longestGapMs)) / 1000;
    // The API writes of the whole run (bench/fleet.mjs reads this line).
    log(`stopped: ${writes.status} pod status writes, ${writes.events} event writes, ${leases} Lease renewals (longest gap between two of a node: ${longestGapS.toFixed(1)} s)`);
    env.afterStop?.();
  }
}

async function realNode(common: CommonOptions, flags: NodeFlags, runDir: string): Promise<NodeAgentOptions> {
  const runtimeFlags: RuntimeFlags = {
    runtime: flags.runtime === 'simulated' ? 'process' : flags.runtime,
    ...(flags.criEndpoint !== undefined ? { criEndpoint: flags.criEndpoint } : {}),
    ...(flags.dockerHost !== undefined ? { dockerHost: flags.dockerHost } : {}),
  };
  if (runtimeFlags.runtime === 'process') {
    // Containers a killed earlier run of this node left running go first: a process cannot be
    // re-parented, so they cannot be adopted (the CRI and Docker runtimes adopt their containers instead).
    const killed = removeRecordedLeftovers(containerRecordPath(common.name));
    if (killed > 0) common.log(`node ${common.name}: stopped ${killed} container(s) an earlier run left running; their pods start again`);
  }
  const runtime = await createRuntime(runtimeFlags, runDir, { node: common.name, ...(common.relistPhaseMs !== undefined ? { relistPhaseMs: common.relistPhaseMs } : {}) });
  const left = runtime.leftPods?.().length ?? 0;
  if (left > 0) common.log(`node ${common.name}: found ${left} pod(s) an earlier run left in the runtime; those still bound to this node are adopted, the others removed`);
  // The node filesystem is the one of its run directory (pod logs); the image filesystem is taken to be the same.
  return { ...common, runtime, machineStats: () => readMachineStats({ nodeDir: dirname(runDir) }) };
}

/**
 * A simulated node: the simulator's runtime and probe handlers on the real clock, behaviours
 * from each pod's annotation (a pod without one is `up`), the simulated taint, and no
 * command needed. A fleet keeps no flight recorder (nobody reads 5,000 pods' rings).
 */
function simulatedNode(common: CommonOptions, index: number, annotation: string, fleet: boolean): NodeAgentOptions {
  const behavioursOf = (pod: Pod): { behaviours?: Behaviours; error?: string } => {
    const text = pod.metadata?.annotations?.[annotation];
    if (text === undefined) return {};
    const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name);
    try {
      return { behaviours: parseBehaviourAnnotation(text, containers) };
    } catch (err) {
      return { error: `annotation ${annotation}: ${err instanceof Error ? err.message : String(err)}; its containers play "up"` };
    }
  };
  const runtime = new SimRuntime({ clock: realClock, behaviours: new Map(), idBase: index * NODE_ID_SPAN, behavioursFor: (pod) => behavioursOf(pod).behaviours });
  return {
    ...common,
    runtime,
    taints: [SIMULATED_TAINT],
    admit: admitExistingPods,
    prober: (recorder) =>
      new Prober({
        runner: { runInContainer: (id, cmd, ms) => runtime.execSync(id, cmd, ms) },
        recorder,
        clock: realClock,
        handlers: simulatedHandlers(runtime, realClock),
        httpHandlerReadsOnly: true,
      }),
    lifecycleHandlers: simulatedHandlerRunner(realClock),
    podWarnings: (pod) => {
      const error = behavioursOf(pod).error;
      return error === undefined ? [] : [{ reason: 'FailedBehaviour', message: error }];
    },
    ...(fleet ? { flightRecorder: false } : {}),
  };
}
