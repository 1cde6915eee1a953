/**
 * Harness of the tests against a real control plane: the cluster comes only from the
 * environment (`KUBECONFIG`, which `eval "$(npm run -s cluster:env)"` sets). Without one the
 * suites are skipped with that reason in their name; with PROBELET_REQUIRE_CLUSTER=1 they
 * fail instead.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { AppsV1Api, KubeConfig, type V1Namespace, type V1Pod } from '@kubernetes/client-node';
import type { Event, Pod } from '../../src/api/types.js';
import type { Kubelet } from '../../src/kubelet/kubelet.js';
import { startNodeAgent, type NodeAgent, type NodeAgentOptions } from '../../src/node/agent.js';
import { NODE_LEASE_NAMESPACE } from '../../src/node/lease/controller.js';
import { kubeClientsFrom, loadKubeClients, plain, type KubeClients } from '../../src/node/kube.js';
import { detectNodeAddress } from '../../src/node/node-object.js';
import { createProcessRuntime } from '../../src/runtime/process-runtime.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Why the cluster tests cannot run here, or undefined when they can. */
export function clusterUnavailable(): string | undefined {
  const path = process.env.KUBECONFIG;
  if (!path) return 'no KUBECONFIG (run `npm run cluster:up`, then eval "$(npm run -s cluster:env)")';
  const first = path.split(':')[0] ?? '';
  if (!existsSync(first)) return `KUBECONFIG ${first} does not exist`;
  return undefined;
}

/**
 * `describe` when the cluster (and whatever else `needs` says is missing, e.g. a containerd or
 * a built dist/) is there; else skipped with the reason in its name, or failing under
 * PROBELET_REQUIRE_CLUSTER=1.
 */
export function describeCluster(name: string, body: () => void, needs: () => string | undefined = () => undefined): void {
  const reason = clusterUnavailable() ?? needs();
  if (reason === undefined) describe(name, body);
  else if (process.env.PROBELET_REQUIRE_CLUSTER === '1') {
    describe(name, () => {
      it(`needs a cluster: ${reason}`, () => {
        throw new Error(`PROBELET_REQUIRE_CLUSTER=1 but ${reason}`);
      });
    });
  } else describe.skip(`${name} — skipped: ${reason}`, body);
}

export function clusterClients(): KubeClients {
  return loadKubeClients(process.env.KUBECONFIG?.split(':')[0]);
}

/** Polls `check` until it returns a value (not undefined) or `timeoutMs` passes; the error says what was awaited and the last value seen. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Whether the pod's Ready condition is True. */
export const isReady = (p: Pod | undefined): boolean => p?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** A test namespace through the admin client: made in beforeAll, its pods listed and awaited by the suites. */
export function testNamespace(clients: KubeClients, namespace: string) {
  const self = {
    name: namespace,
    create: async (): Promise<void> => void (await clients.core.createNamespace({ body: { metadata: { name: namespace } } as V1Namespace })),
    delete: async (): Promise<void> => void (await clients.core.deleteNamespace({ name: namespace }).catch(() => undefined)),
    /** Its pods; those being deleted (a deletionTimestamp) only with `deleting`. */
    async pods(options: { deleting?: boolean } = {}): Promise<Pod[]> {
      const items = plain<{ items: Pod[] }>(await clients.core.listNamespacedPod({ namespace })).items;
      return options.deleting === true ? items : items.filter((p) => !p.metadata?.deletionTimestamp);
    },
    /** Exactly `count` pods, all Ready and on `node`; undefined otherwise (for {@link until}). */
    async readyOn(node: string, count: number): Promise<Pod[] | undefined> {
      const ps = await self.pods();
      return ps.length === count && ps.every((p) => isReady(p) && p.spec?.nodeName === node) ? ps : undefined;
    },
    /** Waits until every named pod is Ready. */
    readyPods: (names: string[], timeoutMs = 30_000): Promise<Pod[]> =>
      until(`${names.join(', ')} Ready`, async () => {
        const ps = await self.pods({ deleting: true });
        const found = names.map((n) => ps.find((p) => p.metadata?.name === n));
        return found.every(isReady) ? (found as Pod[]) : undefined;
      }, timeoutMs),
    /** A pod bound to `node` that sleeps, with an exec readiness probe `true` every second. */
    async createSleepPod(name: string, node: string): Promise<void> {
      const pod = {
        metadata: { name, namespace },
        spec: {
          nodeName: node,
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'app', image: 'probelet.local/busybox:test', command: ['sleep', '3600'], readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 } }],
        },
      } as unknown as V1Pod;
      await clients.core.createNamespacedPod({ namespace, body: pod });
    },
    /** Deletes the Deployment `name` and waits up to `timeoutMs` for the namespace's pods to be gone; never throws (afterAll). */
    async deleteDeployment(name: string, timeoutMs = 60_000): Promise<void> {
      await clients.config.makeApiClient(AppsV1Api).deleteNamespacedDeployment({ name, namespace }).catch(() => undefined);
      await until(`the pods of ${namespace} to be gone`, async () => ((await self.pods()).length === 0 ? true : undefined), timeoutMs).catch(() => undefined);
    },
  };
  return self;
}

/** The names of the pods a node's Kubelet runs (phase Running), each once per copy, sorted. */
export function runningPods(kubelet: Kubelet): string[] {
  return kubelet
    .listPods()
    .filter((p) => p.status?.phase === 'Running')
    .map((p) => p.metadata?.name ?? '')
    .sort();
}

/** Removes a test node's Node and Lease (afterAll; never throws). */
export async function deleteNodeObjects(clients: KubeClients, name: string): Promise<void> {
  await clients.coordination.deleteNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE }).catch(() => undefined);
  await clients.core.deleteNode({ name }).catch(() => undefined);
}

/** The admin kubeconfig's API server (`https://127.0.0.1:26443` for cluster:up's). */
export function adminServer(): URL {
  const config = new KubeConfig();
  config.loadFromFile(process.env.KUBECONFIG?.split(':')[0] ?? '');
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  return new URL(cluster.server);
}

/** Admin clients that reach the cluster through `127.0.0.1:port` (a proxy, a second API server) instead of its own address. */
export function adminClientsVia(port: number): KubeClients {
  const config = new KubeConfig();
  config.loadFromFile(process.env.KUBECONFIG?.split(':')[0] ?? '');
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const other = new KubeConfig();
  other.loadFromOptions({ clusters: [{ ...cluster, server: `https://127.0.0.1:${port}` }], users: config.users, contexts: config.contexts, currentContext: config.currentContext });
  return kubeClientsFrom(other);
}

/** A node agent in-process on the process runtime (real child processes), synced with its pods; `port` 0 unless given, the machine's address unless given. */
export async function startProcessNode(options: {
  clients: KubeClients;
  name: string;
  runDir: string;
  logs: string[];
  port?: number;
  address?: string;
  admit?: NodeAgentOptions['admit'];
}): Promise<NodeAgent> {
  const agent = await startNodeAgent({
    ...(options.admit ? { admit: options.admit } : {}),
    clients: options.clients,
    name: options.name,
    runtime: createProcessRuntime({ runDir: options.runDir }),
    runtimeVersion: 'probelet-process://test',
    probeletVersion: 'test',
    port: options.port ?? 0,
    address: options.address ?? detectNodeAddress() ?? '10.255.255.1',
    log: (line) => options.logs.push(line),
  });
  await agent.synced;
  return agent;
}

/** A `probelet node` child process and everything it printed so far. */
export interface AgentChild {
  child: ChildProcess;
  output: () => string;
}

/**
 * Starts the built `probelet node` with `args`, its TMPDIR set to `tmp` (an agent killed with
 * SIGKILL cannot remove its run directory: the test's afterAll does).
 */
export function spawnAgent(args: readonly string[], tmp: string): AgentChild {
  const child = spawn(process.execPath, [join(ROOT, 'bin/probelet.js'), 'node', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: tmp } });
  let text = '';
  child.stdout?.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (text += d.toString()));
  return { child, output: () => text };
}

/** Sends `signal` to an agent still running and waits for it to exit. */
export async function stopAgent(agent: AgentChild | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!agent || agent.child.exitCode !== null || agent.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => agent.child.once('exit', () => resolve()));
  agent.child.kill(signal);
  await exited;
}

/** The admin kubeconfig of `cluster:env` (its first file). */
export const KUBECONFIG = process.env.KUBECONFIG?.split(':')[0] ?? '';
/** The cluster CA `cluster:up` made, beside the kubeconfig: what signs a node's serving certificate here. */
export const CLUSTER_PKI = join(dirname(KUBECONFIG), 'pki');

/** Why a node cannot serve `kubectl logs` here (no cluster CA key, no address to serve on), or undefined. */
export function servingUnavailable(address: string | undefined): string | undefined {
  if (!existsSync(join(CLUSTER_PKI, 'ca.key'))) return `no cluster CA key at ${CLUSTER_PKI} (cluster:up makes it)`;
  if (address === undefined) return 'no non-loopback IPv4 address for the node';
  return undefined;
}

/** Why the built command cannot be run (`npm run build` first), or undefined. */
export function distUnavailable(): string | undefined {
  return existsSync(join(ROOT, 'dist/cli/main.js')) ? undefined : 'dist/ is not built (npm run build)';
}

/** `kubectl` with the admin kubeconfig; its output (throws on a non-zero exit, with kubectl's words). */
export function kubectl(...args: string[]): string {
  return execFileSync('kubectl', ['--kubeconfig', KUBECONFIG, ...args], { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * A serving certificate for `node` at `address`, signed by the cluster CA (what cluster:up does
 * for its kubelet), written in `dir`: the API server checks it when it proxies `kubectl logs`.
 */
export function servingCertificate(dir: string, node: string, address: string): { cert: string; key: string } {
  const [key, csr, cert, ext] = ['serving.key', 'serving.csr', 'serving.crt', 'serving.ext'].map((f) => join(dir, f)) as [string, string, string, string];
  execFileSync('openssl', ['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${node}`], { stdio: 'ignore' });
  writeFileSync(ext, `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:${address},DNS:${node}\n`);
  const ca = join(CLUSTER_PKI, 'ca');
  execFileSync('openssl', ['x509', '-req', '-in', csr, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-CAserial', join(dir, 'ca.srl'), '-out', cert, '-days', '1', '-extfile', ext], { stdio: 'ignore' });
  return { cert, key };
}

/** A pod bound to `node` running `command` in the test busybox image, with these probes, a 2 s grace. */
export function nodePodManifest(node: string, name: string, namespace: string, command: string[], probes: Record<string, unknown> = {}): V1Pod {
  return {
    metadata: { name, namespace },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 2,
      containers: [{ name: 'app', image: 'probelet.local/busybox:test', imagePullPolicy: 'IfNotPresent', command, ...probes }],
    },
  } as V1Pod;
}

/** The node-agent fixture of one suite: see {@link nodeAgentFixture}. */
export interface NodeAgentFixture {
  readonly node: string;
  readonly namespace: string;
  /** The admin clients (from beforeAll on). */
  readonly clients: KubeClients;
  /** The agent started last (undefined before the first start). */
  readonly agent: AgentChild | undefined;
  /** Starts `probelet node` for this node and waits for it to register (its output in the error otherwise). */
  start(): Promise<AgentChild>;
  /** Sends `signal` to the agent and waits for it to exit. */
  stop(signal: NodeJS.Signals): Promise<void>;
  getPod(name: string): Promise<Pod>;
  /** The namespace's events of pod `pod` (with this reason only, when given). */
  events(pod: string, reason?: string): Promise<Event[]>;
}

/**
 * One `probelet node` child process at a time for a suite against the real control plane: a
 * node and a namespace of its own, the agent's TMPDIR (an agent killed with SIGKILL cannot
 * remove its run directory), with `serving` a certificate signed by the cluster CA so that
 * `kubectl logs` reaches it. Registers the suite's beforeAll and afterAll (a SIGTERM to the
 * agent, the namespace and the Node deleted, the TMPDIR removed): call it inside `describe`.
 */
export function nodeAgentFixture(options: { node: string; runtimeArgs: readonly string[]; serving?: { address: string } }): NodeAgentFixture {
  const { node } = options;
  const namespace = `${node}-ns`;
  // Made in beforeAll: a skipped suite's body still runs (to collect it), its afterAll does not.
  let tmp = '';
  let clients: KubeClients | undefined;
  let agent: AgentChild | undefined;
  let servingArgs: string[] = [];
  const admin = (): KubeClients => {
    if (!clients) throw new Error('the node-agent fixture is used before its beforeAll');
    return clients;
  };

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), `probelet-${node}-`));
    clients = clusterClients();
    if (options.serving) {
      const { cert, key } = servingCertificate(tmp, node, options.serving.address);
      const ca = join(CLUSTER_PKI, 'ca.crt');
      servingArgs = ['--node-ip', options.serving.address, '--tls-cert-file', cert, '--tls-private-key-file', key, '--client-ca-file', ca, '--port', '0'];
    }
    await clients.core.createNamespace({ body: { metadata: { name: namespace } } as V1Namespace });
  });

  afterAll(async () => {
    try {
      await stopAgent(agent, 'SIGTERM');
    } finally {
      await clients?.core.deleteNamespace({ name: namespace }).catch(() => undefined);
      await clients?.core.deleteNode({ name: node }).catch(() => undefined);
      if (tmp !== '') rmSync(tmp, { recursive: true, force: true });
    }
  }, 60_000);

  return {
    node,
    namespace,
    get clients() {
      return admin();
    },
    get agent() {
      return agent;
    },
    async start() {
      const started = spawnAgent(['--kubeconfig', KUBECONFIG, '--name', node, ...options.runtimeArgs, '--listen', '127.0.0.1:0', ...servingArgs], tmp);
      agent = started;
      await until('the node to register', async () => (started.output().includes(`node ${node} registered`) ? true : undefined), 30_000).catch((err: unknown) => {
        throw new Error(`${String(err)}; its output:\n${started.output()}`);
      });
      return started;
    },
    stop: (signal) => stopAgent(agent, signal),
    getPod: async (name) => plain<Pod>(await admin().core.readNamespacedPod({ name, namespace })),
    events: async (pod, reason) =>
      plain<{ items: Event[] }>(await admin().core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${pod}${reason === undefined ? '' : `,reason=${reason}`}` })).items,
  };
}
