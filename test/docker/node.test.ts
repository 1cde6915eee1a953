/**
 * `probelet node --runtime docker` on the real control plane and a real Docker daemon: pods
 * bound to the node run as containers of the daemon; `kubectl logs` (through the API server
 * to the node's authenticated API) shows what they wrote, with `--timestamps` and `--previous`;
 * killed with SIGKILL and started again, the node adopts its running container (same ID,
 * `startedAt` and `restartCount`, still Ready, nothing created or started again, its logs read
 * again from the daemon, its probes going on) and removes what a pod deleted meanwhile left;
 * a SIGTERM then leaves nothing of the node in the daemon.
 *
 * The built command in a child process, with the admin kubeconfig of `cluster:env`, a node of
 * its own name and the daemon of the Docker tests (helpers.ts). Skipped without a cluster, its
 * CA key, a daemon or a built dist/ (failing instead under PROBELET_REQUIRE_CLUSTER=1).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1Namespace, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Event, Pod } from '../../src/api/types.js';
import { plain, type KubeClients } from '../../src/node/kube.js';
import { detectNodeAddress } from '../../src/node/node-object.js';
import { NODE_LABEL } from '../../src/runtime/cri/pod-config.js';
import { clusterClients, describeCluster, isReady, spawnAgent, stopAgent, until, type AgentChild } from '../node/helpers.js';
import { DOCKER_HOST, dockerClient, dockerUnavailable, leftInDaemon } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE = `docker-node-${randomBytes(3).toString('hex')}`;
const KUBECONFIG = process.env.KUBECONFIG?.split(':')[0] ?? '';
const PKI = join(dirname(KUBECONFIG), 'pki');
const ADDRESS = detectNodeAddress();

function unavailable(): string | undefined {
  if (!existsSync(join(PKI, 'ca.key'))) return `no cluster CA key at ${PKI} (cluster:up makes it)`;
  const docker = dockerUnavailable();
  if (docker) return docker;
  if (ADDRESS === undefined) return 'no non-loopback IPv4 address for the node';
  if (!existsSync(join(ROOT, 'dist/cli/main.js'))) return 'dist/ is not built (npm run build)';
  return undefined;
}

/** The agents' TMPDIR: an agent killed with SIGKILL cannot remove its run directory. */
const WORK = mkdtempSync(join(tmpdir(), 'probelet-docker-node-'));
afterAll(() => rmSync(WORK, { recursive: true, force: true }));

/** A serving certificate for the node's address, signed by the cluster CA (as test/node/logs.test.ts makes one). */
function servingCert(): { cert: string; key: string } {
  const [key, csr, cert, ext] = ['serving.key', 'serving.csr', 'serving.crt', 'serving.ext'].map((f) => join(WORK, f)) as [string, string, string, string];
  execFileSync('openssl', ['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${NODE}`], { stdio: 'ignore' });
  writeFileSync(ext, `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:${ADDRESS ?? ''},DNS:${NODE}\n`);
  execFileSync('openssl', ['x509', '-req', '-in', csr, '-CA', join(PKI, 'ca.crt'), '-CAkey', join(PKI, 'ca.key'), '-CAcreateserial', '-CAserial', join(WORK, 'ca.srl'), '-out', cert, '-days', '1', '-extfile', ext], { stdio: 'ignore' });
  return { cert, key };
}

function kubectl(...args: string[]): string {
  return execFileSync('kubectl', ['--kubeconfig', KUBECONFIG, ...args], { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The node's running containers in the daemon (found by the node label, as `docker ps` would): pod UID → container IDs. */
async function runningByPod(): Promise<Map<string, string[]>> {
  const listed = await dockerClient().listContainers({ filters: { label: [`${NODE_LABEL}=${NODE}`, 'io.kubernetes.docker.type=container'] } });
  const byPod = new Map<string, string[]>();
  for (const c of listed) {
    const uid = c.Labels['io.kubernetes.pod.uid'] ?? '';
    byPod.set(uid, [...(byPod.get(uid) ?? []), c.Id]);
  }
  return byPod;
}

function podManifest(name: string, namespace: string, command: string[], probes: Record<string, unknown>): V1Pod {
  return {
    metadata: { name, namespace },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 2,
      containers: [{ name: 'app', image: 'probelet.local/busybox:test', imagePullPolicy: 'IfNotPresent', command, ...probes }],
    },
  } as V1Pod;
}

describeCluster(`probelet node --runtime docker: pods, kubectl logs, adoption after a restart (${DOCKER_HOST})`, () => {
  const namespace = `docker-${randomBytes(3).toString('hex')}`;
  let clients: KubeClients;
  let agent: AgentChild | undefined;
  let tls: { cert: string; key: string };

  const startAgent = (): AgentChild =>
    spawnAgent(
      ['--kubeconfig', KUBECONFIG, '--name', NODE, '--runtime', 'docker', '--docker-host', DOCKER_HOST, '--listen', '127.0.0.1:0', '--node-ip', ADDRESS ?? ''].concat(
        ['--tls-cert-file', tls.cert, '--tls-private-key-file', tls.key, '--client-ca-file', join(PKI, 'ca.crt'), '--port', '0'],
      ),
      WORK,
    );

  beforeAll(async () => {
    clients = clusterClients();
    tls = servingCert();
    await clients.core.createNamespace({ body: { metadata: { name: namespace } } as V1Namespace });
  });

  afterAll(async () => {
    try {
      await stopAgent(agent, 'SIGTERM');
    } finally {
      await clients.core.deleteNamespace({ name: namespace }).catch(() => undefined);
      await clients.core.deleteNode({ name: NODE }).catch(() => undefined);
    }
  }, 60_000);

  const getPod = async (name: string): Promise<Pod> => plain<Pod>(await clients.core.readNamespacedPod({ name, namespace }));
  const events = async (pod: string, reason: string): Promise<Event[]> =>
    plain<{ items: Event[] }>(await clients.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${pod},reason=${reason}` })).items;
  const registered = async (a: AgentChild): Promise<void> => {
    await until('the node to register', async () => (a.output().includes(`node ${NODE} registered`) ? true : undefined), 30_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; its output:\n${a.output()}`);
    });
  };

  it('runs the pods, kubectl logs shows their output; kill -9 and restart adopts the running container, cleans up a deleted pod; SIGTERM leaves nothing', async () => {
    agent = startAgent();
    await registered(agent);
    await clients.core.createNamespacedPod({
      namespace,
      body: podManifest('keep', namespace, ['sh', '-c', 'echo hello from keep; echo oops >&2; mkdir -p /www && echo ok > /www/ready && exec httpd -f -p 8080 -h /www'], {
        readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 2, failureThreshold: 1 },
        livenessProbe: { exec: { command: ['sh', '-c', 'test ! -e /tmp/die'] }, periodSeconds: 1, failureThreshold: 1 },
      }),
    });
    await clients.core.createNamespacedPod({ namespace, body: podManifest('gone', namespace, ['sleep', '3600'], {}) });
    const before = await until('both pods Running and Ready', async () => {
      const [keep, gone] = await Promise.all([getPod('keep'), getPod('gone')]);
      return isReady(keep) && isReady(gone) ? { keep, gone } : undefined;
    }, 60_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; the agent's output:\n${agent?.output() ?? ''}`);
    });
    const keepBefore = before.keep.status?.containerStatuses?.[0];
    expect(keepBefore).toMatchObject({ ready: true, started: true, restartCount: 0 });
    expect(keepBefore?.containerID).toMatch(/^docker:\/\/[0-9a-f]{64}$/);
    // The pod IP is the infra container's on the daemon's bridge.
    expect(before.keep.status?.podIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(before.keep.status?.podIP).not.toBe('127.0.0.1');

    const logs = (...args: string[]): string => kubectl('-n', namespace, 'logs', 'keep', ...args);
    await until('its output in kubectl logs', async () => (logs().split('\n').sort().join('|') === '|hello from keep|oops' ? true : undefined), 20_000);
    const stamped = logs('--timestamps').split('\n').filter((l) => l !== '');
    for (const line of stamped) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z (hello from keep|oops)$/);

    // Older than the new agent by more than the kubelet-restart margin (10 s): the prober's
    // restart rules then keep its readiness until the first verdict, as upstream's do.
    const startedAt = Date.parse(keepBefore?.state?.running?.startedAt ?? '');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + 11_000 - Date.now())));

    await stopAgent(agent, 'SIGKILL');
    await clients.core.deleteNamespacedPod({ name: 'gone', namespace, gracePeriodSeconds: 0 });
    const id = (s: string | undefined): string => (s ?? '').replace(/^docker:\/\//, '');
    expect((await runningByPod()).get(before.keep.metadata?.uid ?? '')).toEqual([id(keepBefore?.containerID)]);

    agent = startAgent();
    await registered(agent);
    await until("the deleted pod's container to be removed", async () => ((await runningByPod()).has(before.gone.metadata?.uid ?? '') ? undefined : true), 30_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; the agent's output:\n${agent?.output() ?? ''}`);
    });
    expect(agent.output()).toContain(`node ${NODE}: found 2 pod(s) an earlier run left in the runtime`);
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const keepNow = await getPod('keep');
    const keepAfter = keepNow.status?.containerStatuses?.[0];
    expect(keepAfter?.containerID, `the agent's output:\n${agent.output()}`).toBe(keepBefore?.containerID);
    expect(keepAfter?.state?.running?.startedAt).toBe(keepBefore?.state?.running?.startedAt);
    expect(keepAfter).toMatchObject({ ready: true, started: true, restartCount: 0 });
    expect(isReady(keepNow)).toBe(true);
    expect([...(await runningByPod()).values()]).toEqual([[id(keepBefore?.containerID)]]);
    expect((await events('keep', 'Started')).map((e) => e.count ?? 1)).toEqual([1]);
    // Its log, read again from the daemon by the new agent, with the same times.
    expect(logs('--timestamps').split('\n').filter((l) => l !== '')).toEqual(stamped);

    // Its probes go on: a liveness failure restarts the adopted container, restartCount 1.
    await (await dockerClient().getContainer(id(keepBefore?.containerID)).exec({ Cmd: ['touch', '/tmp/die'] })).start({ Detach: true });
    const restarted = await until('the adopted container restarted by its liveness probe', async () => {
      const p = await getPod('keep');
      const cs = p.status?.containerStatuses?.[0];
      return cs?.restartCount === 1 && cs.containerID !== keepBefore?.containerID && isReady(p) ? cs : undefined;
    }, 60_000);
    expect(restarted.lastState?.terminated?.containerID).toBe(keepBefore?.containerID);
    expect(logs('--previous').split('\n').sort()).toEqual(['', 'hello from keep', 'oops']);

    // A stop leaves nothing of the node in the daemon, the adopted infra container included.
    await stopAgent(agent, 'SIGTERM');
    expect(await leftInDaemon(NODE, NODE_LABEL)).toEqual([]);
  }, 240_000);
}, unavailable);
