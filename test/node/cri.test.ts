/**
 * `probelet node --runtime cri` as a user runs it: the built command in a child process, with
 * the `system:node:probelet-node` kubeconfig `cluster:up` issues (Node authorizer and
 * NodeRestriction apply), on a containerd of its own (PROBELET_NODE_CRI_ENDPOINT, else the CRI
 * tests' endpoint). examples/cluster/web.yaml, pinned to the node, must turn Ready there, be
 * listed by its Service's EndpointSlice, and show the kubelet's events in `kubectl describe
 * pod`. Then the agent is killed with SIGKILL and started again: it must not run any pod twice.
 *
 * Skipped, with the reason in the suite's name, without a cluster, a containerd, the node
 * kubeconfig or a built dist/; under PROBELET_REQUIRE_CLUSTER=1 each of those fails instead.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppsV1Api, DiscoveryV1Api, type V1Deployment, type V1Service } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Event, Pod } from '../../src/api/types.js';
import { plain, type KubeClients } from '../../src/node/kube.js';
import { createCriClient } from '../../src/runtime/cri/client.js';
import { NODE_LABEL } from '../../src/runtime/cri/pod-config.js';
import { CRI_ENDPOINT, criUnavailable } from '../cri/helpers.js';
import { aliveWithMarker, killMarked, markerEnv } from '../helpers/processes.js';
import { clusterClients, describeCluster, spawnAgent, stopAgent, testNamespace, until, type AgentChild } from './helpers.js';
import { cgroupHome } from '../../src/spawn/cgroup.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE = 'probelet-node';
const ENDPOINT = process.env.PROBELET_NODE_CRI_ENDPOINT ?? CRI_ENDPOINT;
const SOCKET = ENDPOINT.replace(/^unix:\/\//, '');

function nodeKubeconfig(): string {
  return process.env.PROBELET_NODE_KUBECONFIG ?? join(dirname(process.env.KUBECONFIG?.split(':')[0] ?? '.'), 'probelet-node.kubeconfig');
}

/** What the process suite needs beside the cluster: the node kubeconfig and a built dist/. */
function processNeeds(): string | undefined {
  if (!existsSync(nodeKubeconfig())) return `no node kubeconfig at ${nodeKubeconfig()} (cluster:up writes it; or set PROBELET_NODE_KUBECONFIG)`;
  if (!existsSync(join(ROOT, 'dist/cli/main.js'))) return 'dist/ is not built (npm run build)';
  return undefined;
}

/** What the CRI suite needs beside the cluster: a containerd, and what the process suite needs. */
function criNeeds(): string | undefined {
  const cri = process.env.PROBELET_NODE_CRI_ENDPOINT === undefined ? criUnavailable() : existsSync(SOCKET) ? undefined : `no containerd at ${ENDPOINT}`;
  if (cri) return `${cri} (or set PROBELET_NODE_CRI_ENDPOINT to a \`npm run cri:up -- --name node\` instance)`;
  return processNeeds();
}

/**
 * The API server refuses link-local addresses (169.254.0.0/16) in EndpointSlices, and the
 * default CRI instance's pod subnet is 169.254.213.0/24: then the Service's slice cannot list
 * the pods whatever the node does, and the test checks the controller's refusal instead.
 */
function instanceSubnet(): string | undefined {
  const env = join(dirname(SOCKET), 'instance.env');
  if (!existsSync(env)) return undefined;
  return /^SUBNET=(.+)$/m.exec(readFileSync(env, 'utf8'))?.[1];
}
const SUBNET = instanceSubnet();
const LINK_LOCAL = SUBNET?.startsWith('169.254.') ?? false;


/** The agents' TMPDIR: an agent killed with SIGKILL cannot remove its run directory. */
const AGENT_TMP = mkdtempSync(join(tmpdir(), 'probelet-node-cri-agent-'));

afterAll(() => rmSync(AGENT_TMP, { recursive: true, force: true }));

function startAgent(runtime: 'cri' | 'process' = 'cri'): AgentChild {
  return spawnAgent(['--kubeconfig', nodeKubeconfig(), '--name', NODE, '--runtime', runtime, ...(runtime === 'cri' ? ['--cri-endpoint', ENDPOINT] : []), '--listen', '127.0.0.1:0'], AGENT_TMP);
}


/** Running containers of this node's pods in containerd, by pod UID (found by the node label, as crictl would). */
async function runningContainersByPod(namespace: string): Promise<Map<string, number>> {
  const client = createCriClient(ENDPOINT);
  try {
    const { containers } = await client.ListContainers({ filter: { label_selector: { [NODE_LABEL]: NODE } } });
    const byPod = new Map<string, number>();
    for (const c of containers.filter((x) => x.state === 'CONTAINER_RUNNING' && x.labels['io.kubernetes.pod.namespace'] === namespace)) {
      const uid = c.labels['io.kubernetes.pod.uid'] ?? '';
      byPod.set(uid, (byPod.get(uid) ?? 0) + 1);
    }
    return byPod;
  } finally {
    client.close();
  }
}

describeCluster(`probelet node --runtime cri on a real control plane (${ENDPOINT})`, () => {
  const namespace = `probelet-node-cri-${randomBytes(3).toString('hex')}`;
  let clients: KubeClients;
  let ns: ReturnType<typeof testNamespace>;
  let apps: AppsV1Api;
  let discovery: DiscoveryV1Api;
  let agent: AgentChild | undefined;

  beforeAll(async () => {
    clients = clusterClients();
    apps = clients.config.makeApiClient(AppsV1Api);
    discovery = clients.config.makeApiClient(DiscoveryV1Api);
    ns = testNamespace(clients, namespace);
    await ns.create();
    agent = startAgent();
    await until('the node to register', async () => (/node probelet-node registered/.test(agent?.output() ?? '') ? true : undefined), 30_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; its output:\n${agent?.output() ?? ''}`);
    });
  }, 60_000);

  afterAll(async () => {
    try {
      await ns?.deleteDeployment('web');
    } finally {
      await stopAgent(agent, 'SIGTERM');
      await ns?.delete();
    }
  }, 120_000);

  const threeReady = (): Promise<Pod[] | undefined> => ns.readyOn(NODE, 3);

  async function readyEndpoints(): Promise<string[]> {
    const slices = await discovery.listNamespacedEndpointSlice({ namespace, labelSelector: 'kubernetes.io/service-name=web' });
    return slices.items
      .flatMap((s) => s.endpoints ?? [])
      .filter((e) => e.conditions?.ready === true)
      .map((e) => e.targetRef?.name ?? '')
      .sort();
  }

  it(`examples/cluster/web.yaml: 3 replicas Ready on the node, ${LINK_LOCAL ? `the EndpointSlice refused by the API (the instance's subnet ${SUBNET ?? ''} is link-local)` : 'listed by the EndpointSlice'}, the kubelet's events in kubectl describe`, async () => {
    const docs = loadAll(readFileSync(join(ROOT, 'examples/cluster/web.yaml'), 'utf8')) as Array<V1Deployment | V1Service>;
    const deployment = docs.find((d) => d.kind === 'Deployment') as V1Deployment;
    const service = docs.find((d) => d.kind === 'Service') as V1Service;
    // Pinned to the probelet node: the cluster's own kubelet node would take some otherwise.
    const podSpec = deployment.spec?.template.spec;
    if (podSpec) podSpec.nodeSelector = { 'kubernetes.io/hostname': NODE };
    await clients.core.createNamespacedService({ namespace, body: service });
    await apps.createNamespacedDeployment({ namespace, body: deployment });

    const pods = await until('3 Ready pods on the probelet node', threeReady, 60_000);
    const names = pods.map((p) => p.metadata?.name ?? '').sort();
    for (const p of pods) {
      expect(p.status?.phase).toBe('Running');
      expect(p.status?.podIP).toMatch(new RegExp(`^${(SUBNET ?? '').replace(/\.0\/24$/, '').replace(/\./g, '\\.')}\\.\\d+$`));
      expect(p.status?.containerStatuses?.[0]).toMatchObject({ name: 'httpd', ready: true, started: true, restartCount: 0 });
      expect(p.status?.containerStatuses?.[0]?.containerID).toMatch(/^containerd:\/\//);
    }
    if (!LINK_LOCAL) {
      expect(await until('the EndpointSlice to list the 3 pods as ready', async () => ((await readyEndpoints()).length === 3 ? readyEndpoints() : undefined))).toEqual(names);
    } else {
      const refused = await until('the EndpointSlice controller to name the link-local addresses', async () => {
        const list = await clients.core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.kind=Service,involvedObject.name=web' });
        return plain<{ items: Event[] }>(list).items.find((e) => e.reason === 'FailedToUpdateEndpointSlices');
      });
      expect(refused.message).toContain('may not be in the link-local range');
    }

    // `kubectl describe pod`: the kubelet 1.35 words, from "kubelet".
    const first = names[0] ?? '';
    const describe = await until(
      'the Started event in kubectl describe',
      async () => {
        const out = execFileSync('kubectl', ['--kubeconfig', process.env.KUBECONFIG?.split(':')[0] ?? '', '-n', namespace, 'describe', 'pod', first], { encoding: 'utf8' });
        return /Normal\s+Started\s/.test(out) ? out : undefined;
      },
      20_000,
    );
    const events = describe.slice(describe.indexOf('Events:'));
    expect(events).toMatch(/Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned .* to probelet-node/);
    // kubectl puts the event's fieldPath before its message, for the kubelet's events as for these.
    expect(events).toMatch(/Normal\s+Pulled\s+\S+\s+kubelet\s+spec\.containers\{httpd\}: Container image "probelet\.local\/busybox:test" already present on machine and can be accessed by the pod\n/);
    expect(events).toMatch(/Normal\s+Created\s+\S+\s+kubelet\s+spec\.containers\{httpd\}: Container created\n/);
    expect(events).toMatch(/Normal\s+Started\s+\S+\s+kubelet\s+spec\.containers\{httpd\}: Container started\n/);
    expect(events).toMatch(/Warning\s+VolumesNotMounted\s+\S+\s+kubelet\s+/);
    expect(events).not.toMatch(/Warning\s+(Failed|Unhealthy|BackOff)\s/);
  }, 120_000);

  it('killed with SIGKILL and started again: its containers are found by the node label, no pod runs twice, all Ready again', async () => {
    const before = (await threeReady()) ?? [];
    expect(before).toHaveLength(3);
    const byPod = await runningContainersByPod(namespace);
    expect([...byPod.values()]).toEqual([1, 1, 1]);
    await stopAgent(agent, 'SIGKILL');
    // The containers outlive the agent, as a kubelet's do.
    expect([...(await runningContainersByPod(namespace)).values()]).toEqual([1, 1, 1]);
    agent = startAgent();
    await until('the node to register again', async () => (/node probelet-node registered/.test(agent?.output() ?? '') ? true : undefined), 30_000);
    const after = await until(
      'the 3 pods Ready again, one running container each',
      async () => {
        const ps = await threeReady();
        const running = await runningContainersByPod(namespace);
        return ps && ps.every((p) => running.get(p.metadata?.uid ?? '') === 1) && running.size === 3 ? ps : undefined;
      },
      60_000,
    ).catch(async (err: unknown) => {
      throw new Error(`${String(err)}; running containers by pod: ${JSON.stringify([...(await runningContainersByPod(namespace))])}; the agent's output:\n${agent?.output() ?? ''}`);
    });
    // The same pods (no replacement by the ReplicaSet), on the node.
    expect(after.map((p) => p.metadata?.uid).sort()).toEqual(before.map((p) => p.metadata?.uid).sort());
    for (const p of after) expect(p.status?.containerStatuses?.[0]?.ready).toBe(true);
  }, 120_000);
}, criNeeds);

// In this file, after the CRI suite: both act as the one node the `system:node:probelet-node` certificate allows.
describeCluster('probelet node --runtime process killed with SIGKILL and started again', () => {
  const namespace = `probelet-node-proc-${randomBytes(3).toString('hex')}`;
  const { marker } = markerEnv();
  let clients: KubeClients;
  let ns: ReturnType<typeof testNamespace>;
  let apps: AppsV1Api;
  let agent: AgentChild | undefined;

  beforeAll(async () => {
    clients = clusterClients();
    apps = clients.config.makeApiClient(AppsV1Api);
    ns = testNamespace(clients, namespace);
    await ns.create();
  });

  afterAll(async () => {
    try {
      await ns?.deleteDeployment('web');
    } finally {
      await stopAgent(agent, 'SIGTERM');
      killMarked(marker);
      await ns?.delete();
    }
  }, 120_000);

  const threeReady = (): Promise<Pod[] | undefined> => ns.readyOn(NODE, 3);
  /** The containers' processes (their `sleep`), by the marker in their environment. */
  const containers = (): number => aliveWithMarker(marker).filter((p) => p.cmdline.startsWith('sleep')).length;

  it('the containers it left are stopped and its pods run again: never two copies, the same pod objects Ready', async () => {
    agent = startAgent('process');
    await until('the node to register', async () => (/node probelet-node registered/.test(agent?.output() ?? '') ? true : undefined), 30_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; its output:\n${agent?.output() ?? ''}`);
    });
    const deployment = {
      metadata: { name: 'web', namespace },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            nodeSelector: { 'kubernetes.io/hostname': NODE },
            terminationGracePeriodSeconds: 2,
            containers: [
              {
                name: 'app',
                image: 'probelet.local/busybox:test',
                command: ['sleep', '3600'],
                env: [{ name: 'PROBELET_TEST_MARKER', value: marker }],
                readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
              },
            ],
          },
        },
      },
    } as unknown as V1Deployment;
    await apps.createNamespacedDeployment({ namespace, body: deployment });
    const before = await until('3 Ready pods', threeReady, 60_000);
    expect(containers()).toBe(3);
    await stopAgent(agent, 'SIGKILL');
    // Nothing keeps running unseen: where cgroups are usable the supervisor ends the agent's
    // containers with it (docs/reliability-signals.md); elsewhere they outlive it and the
    // container record lets the next start stop them.
    const supervised = !('unavailable' in cgroupHome());
    if (supervised) await until('the supervisor to end the containers', async () => (containers() === 0 ? true : undefined), 10_000);
    else expect(containers()).toBe(3);
    agent = startAgent('process');
    await until('the node to register again', async () => (/node probelet-node registered/.test(agent?.output() ?? '') ? true : undefined), 30_000);
    if (!supervised) expect(agent.output()).toContain('node probelet-node: stopped 3 container(s) an earlier run left running; their pods start again');
    const after = await until('the 3 pods Ready again with one container each', async () => {
      const ps = await threeReady();
      return ps && containers() === 3 ? ps : undefined;
    }, 60_000);
    expect(after.map((p) => p.metadata?.uid).sort()).toEqual(before.map((p) => p.metadata?.uid).sort());
    // Never more than one copy of each while they came back.
    expect(containers()).toBe(3);
  }, 150_000);
}, processNeeds);
