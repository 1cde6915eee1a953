/**
 * `probelet node --kubeconfig K`: joins a cluster as a node. The agent (src/node/) registers
 * the Node and its Lease and runs the pods bound to it through the same Kubelet as `probelet
 * run`; this command picks the runtime, serves the read-only API the Node's
 * `daemonEndpoints` names, logs to stderr, and stops cleanly on INT, TERM, HUP or QUIT:
 * running pods are stopped with their grace periods (their API objects stay; the node
 * lifecycle controller deals with a node that went away), nothing is left running.
 *
 * `--runtime simulated [--nodes N | --fleet fleet.yaml] [--shard I/N]`: kwok-like nodes from
 * one process, each with its own Lease, tainted `probelet.dev/simulated=true:NoSchedule` (or
 * as the fleet file's pools say); containers play the behaviour scripts the fleet's selectors
 * and their pod's annotation give them in real time, and pods turn Ready when their probes
 * pass. `--shard` runs one slice of the nodes, so that several processes hold one fleet.
 */
import { addImagePullOptions, imagePullOptions, type ImagePullFlags } from './image-pulls.js';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { isIP } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Command, Option } from 'commander';
import { admitExistingPods } from '../api/admit.js';
import type { Pod } from '../api/types.js';
// Types only: the agent and @kubernetes/client-node (seconds to load) are imported when `node` runs, not by every command.
import type { NodeAgent, NodeAgentOptions } from '../node/agent.js';
import type { KubeClients } from '../node/kube.js';
import { startKubeletServer, type KubeletServer } from '../node/kubelet-server.js';
import { detectNodeAddress } from '../node/node-object.js';
import { DEFAULT_EVICTION_HARD, parseEvictionHard, type Threshold } from '../node/eviction.js';
import { readMachineStats } from '../node/machine-stats.js';
import type { ContainerRuntime } from '../runtime/types.js';
import { startServer, type RunningServer } from '../server/server.js';
import { DEFAULT_BEHAVIOUR_ANNOTATION } from '../simulate/annotation.js';
import { podBehaviours } from '../node/fleet/behaviours.js';
import { FleetError, fleetNodes, loadFleet, SIMULATED_TAINT, type Fleet, type FleetBehaviour, type FleetPool } from '../node/fleet/fleet-file.js';
import { parseShard, shardOf, type Shard } from '../node/fleet/shard.js';
import { simulatedParts } from '../node/fleet/simulated-node.js';
import { PLEG_RELIST_PERIOD_MS } from '../prober/start-latency.js';
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

interface NodeFlags extends ImagePullFlags {
  kubeconfig?: string;
  name?: string;
  runtime: (typeof NODE_RUNTIMES)[number];
  criEndpoint?: string;
  dockerHost?: string;
  listen: string;
  nodeIp?: string;
  nodes?: string;
  fleet?: string;
  shard?: string;
  behaviourAnnotation: string;
  leanWrites?: boolean;
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
  const command = program
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
    .option('--fleet <file>', 'with --runtime simulated: the nodes (pools <pool>-0, <pool>-1, …) and behaviours by selector of a fleet file (docs/node.md#fleet-files)')
    .option('--shard <I/N>', 'with --nodes or --fleet: run only the I-th of N slices of the nodes (node k goes to slice k mod N + 1), so that N processes hold one fleet')
    .option(
      '--lean-writes',
      'with --runtime simulated: fewer API writes than a kubelet (no Pulled/Created/Started events; a starting pod\'s statuses written once, when Ready or after 10 s); docs/differences.md',
    )
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
    .option('--listen <host:port>', "the read-only API the Node's daemonEndpoints names (/healthz, /pods, /events, /metrics/probes); loopback only; port 0 picks one (always, with --nodes or --fleet)", '127.0.0.1:10255');
  addImagePullOptions(command)
    .action(async (flags: NodeFlags) => {
      setExit(await runNode(flags, io, env));
    });
}

/**
 * The authenticated API's files and port: all three files or none (one node only: the API
 * server reaches a node at its address and daemonEndpoints port). A file that cannot be read
 * is a usage error naming its flag.
 */
function tlsFiles(flags: NodeFlags, fleet: boolean): { pem: { cert: Buffer; key: Buffer; clientCA: Buffer }; port: number } | undefined {
  const given = { '--tls-cert-file': flags.tlsCertFile, '--tls-private-key-file': flags.tlsPrivateKeyFile, '--client-ca-file': flags.clientCaFile };
  const set = Object.entries(given).filter(([, v]) => v !== undefined);
  if (set.length === 0) return undefined;
  if (set.length < 3) {
    const missing = Object.entries(given).filter(([, v]) => v === undefined).map(([k]) => k);
    throw new CliUsageError(`${set.map(([k]) => k).join(' and ')} also need ${missing.join(' and ')} (the authenticated API needs a certificate, its key and the client CA)`);
  }
  if (fleet) throw new CliUsageError('--tls-cert-file: not with --nodes or --fleet (the API server reaches each node at its own address)');
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

/** One node this process runs: its name, and its pool when it comes from a fleet file. */
interface PlannedNode {
  name: string;
  /** Its place in the whole fleet (all shards): its containers' IDs are numbered from there. */
  index: number;
  pool?: FleetPool;
}

/**
 * The nodes of this process: one (`--name`), `--nodes N` of them, or a fleet file's; then
 * this process's `--shard` of them. `fleet` tells whether they are several (a fleet keeps no
 * flight recorder, each node's read-only API takes a free port).
 */
function plannedNodes(flags: NodeFlags): { nodes: PlannedNode[]; fleet: boolean; file?: Fleet; shard?: Shard } {
  const shard = flags.shard === undefined ? undefined : shardFlag(flags.shard);
  if (flags.fleet !== undefined) {
    if (flags.runtime !== 'simulated') throw new CliUsageError('--fleet needs --runtime simulated (a fleet file describes simulated nodes)');
    if (flags.nodes !== undefined || flags.name !== undefined) throw new CliUsageError('--fleet: not with --nodes or --name (the fleet file names its nodes <pool>-<i>)');
    let file: Fleet;
    try {
      file = loadFleet(flags.fleet);
    } catch (err) {
      if (!(err instanceof FleetError)) throw err;
      throw new CliUsageError(`${err.problems.join('\nprobelet: ')}\nprobelet: fix the fleet file above (docs/node.md#fleet-files)`);
    }
    return { nodes: ownedBy(fleetNodes(file).map((n, index) => ({ ...n, index })), shard), fleet: true, file, ...(shard ? { shard } : {}) };
  }
  const base = flags.name ?? hostname().toLowerCase();
  const count = nodeCount(flags);
  if (count === undefined) {
    if (shard) throw new CliUsageError('--shard needs --nodes or --fleet (one node cannot be split)');
    return { nodes: [{ name: base, index: 0 }], fleet: false };
  }
  for (const name of [`${base}-0`, `${base}-${count - 1}`]) checkNodeName(name, base);
  const all = Array.from({ length: count }, (_, index) => ({ name: `${base}-${index}`, index }));
  return { nodes: ownedBy(all, shard), fleet: true, ...(shard ? { shard } : {}) };
}

function shardFlag(text: string): Shard {
  try {
    return parseShard(text);
  } catch (err) {
    throw new CliUsageError(err instanceof Error ? err.message : String(err));
  }
}

function ownedBy(nodes: PlannedNode[], shard: Shard | undefined): PlannedNode[] {
  const owned = shardOf(nodes, shard);
  if (owned.length === 0 && shard) throw new CliUsageError(`--shard ${shard.index}/${shard.count}: the fleet has ${nodes.length} node(s), so slice ${shard.index} holds none: use at most ${nodes.length} slices`);
  return owned;
}

function checkNodeName(name: string, base: string): void {
  if (!NODE_NAME.test(name) || name.length > 253) {
    throw new CliUsageError(`--name ${JSON.stringify(base)}: a Node's name must be lower-case letters, digits, '-' and '.', starting and ending with a letter or digit`);
  }
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
  const plan = plannedNodes(flags);
  if (flags.leanWrites === true && flags.runtime !== 'simulated') throw new CliUsageError('--lean-writes needs --runtime simulated (a real node writes what the kubelet writes)');
  if (!plan.fleet) checkNodeName(plan.nodes[0]?.name ?? '', plan.nodes[0]?.name ?? '');
  const listen = parseListen(flags.listen);
  const imagePulls = imagePullOptions(flags);
  const tls = tlsFiles(flags, plan.fleet);
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
  const { LEASE_THREAD_MIN_NODES, startLeaseThread } = await import('../node/lease/thread.js');
  let clients: KubeClients;
  try {
    clients = loadKubeClients(flags.kubeconfig, plan.nodes.length);
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
  // Simulated nodes keep nothing on disk: an agent killed with SIGKILL leaves nothing behind.
  const runDir = flags.runtime === 'simulated' ? undefined : await mkdtemp(join(tmpdir(), 'probelet-node-'));
  const nodes: RunningNode[] = [];
  const version = packageVersion();
  // A fleet's Leases renewed on a thread of their own, never behind its pods' work.
  const leaseThread = plan.nodes.length >= LEASE_THREAD_MIN_NODES ? startLeaseThread(clients.config, plan.nodes.length, log) : undefined;
  try {
    if (plan.shard) log(`shard ${plan.shard.index}/${plan.shard.count}: ${plan.nodes.length} node(s) of the fleet (${plan.nodes.map((n) => n.name).join(', ')})`);
    for (const { name, pool, index } of plan.nodes) {
      const view = deferredView();
      let server: RunningServer;
      try {
        server = await startServer(view, { host: listen.host, port: plan.fleet ? 0 : listen.port });
      } catch (err) {
        throw new CliUsageError(`--listen ${listen.host}:${listen.port}: ${err instanceof Error ? err.message : String(err)}`);
      }
      const node: RunningNode = { server };
      nodes.push(node);
      const common: CommonOptions = {
        clients,
        ...(leaseThread ? { leases: leaseThread } : {}),
        name,
        runtimeVersion: `probelet-${flags.runtime}://${version}`,
        probeletVersion: version,
        port: server.address.port,
        address,
        log,
        evictionHard,
        imagePulls,
        // The PLEG's relist instants of this node, every second from now (as `run` has them):
        // the Kubelet's syncs and the CRI runtime's relist share them (docs/timing-model.md §3).
        relistPhaseMs: Date.now() % PLEG_RELIST_PERIOD_MS,
      };
      const options =
        flags.runtime === 'simulated'
          ? simulatedNode(common, { index, annotation: flags.behaviourAnnotation, fleet: plan.fleet, rules: plan.file?.behaviours ?? [], leanWrites: flags.leanWrites === true, ...(pool ? { pool } : {}) })
          : await realNode(common, flags, join(runDir ?? tmpdir(), name));
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
    log(`${signal} received: stopping the pods of ${plan.nodes.length === 1 ? `node ${plan.nodes[0]?.name ?? ''}` : `${plan.nodes.length} nodes`} (their API objects stay)`);
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
    if (runDir !== undefined) await rm(runDir, { recursive: true, force: true });
    clients.close();
    await leaseThread?.close();
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

/** Where a simulated node sits: its index in this process, its pool's labels, taints and pods, the fleet's behaviours. */
interface SimulatedPlace {
  index: number;
  /** The pod annotation holding per-pod behaviours (they override the fleet's). */
  annotation: string;
  fleet: boolean;
  rules: readonly FleetBehaviour[];
  pool?: FleetPool;
  /** `--lean-writes`. */
  leanWrites: boolean;
}

/**
 * A simulated node: the simulator's runtime and probe handlers on the real clock, behaviours
 * from the fleet's selectors and each pod's annotation (a container given none is `up`), the
 * simulated taint (or its pool's taints and labels), and no command needed. A fleet keeps no
 * flight recorder (nobody reads 5,000 pods' rings).
 */
function simulatedNode(common: CommonOptions, place: SimulatedPlace): NodeAgentOptions {
  const { index, annotation, fleet, rules, pool } = place;
  const behavioursOf = (pod: Pod): ReturnType<typeof podBehaviours> => podBehaviours(rules, annotation, pod);
  const { runtime, prober, lifecycleHandlers } = simulatedParts(realClock, index, (pod) => behavioursOf(pod).behaviours);
  return {
    ...common,
    runtime,
    taints: pool ? pool.taints : [SIMULATED_TAINT],
    ...(pool ? { labels: pool.labels, capacity: { pods: String(pool.pods) } } : {}),
    admit: admitExistingPods,
    prober,
    lifecycleHandlers,
    podWarnings: (pod) => {
      const error = behavioursOf(pod).error;
      return error === undefined ? [] : [{ reason: 'FailedBehaviour', message: error }];
    },
    ...(fleet ? { flightRecorder: false } : {}),
    ...(place.leanWrites ? { leanWrites: true } : {}),
  };
}
