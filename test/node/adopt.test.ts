/**
 * `probelet node --runtime cri` killed with SIGKILL and started again adopts its running
 * containers, as the kubelet does after a restart: the pod's container keeps its ID, its
 * `startedAt` and its `restartCount`, stays Ready, no container is created or started again,
 * and its probes go on (a liveness failure after the restart restarts it with restartCount 1).
 * A pod deleted while the agent was down has its containers removed at the next start (the
 * kubelet's HandlePodCleanups), and never more than one container runs for a pod.
 *
 * The built command in a child process, with the admin kubeconfig of `cluster:env` (a node of
 * its own name, so it cannot collide with another suite's `probelet-node`), on the containerd
 * of PROBELET_NODE_CRI_ENDPOINT, else the CRI tests' endpoint. Skipped without a cluster, a
 * containerd or a built dist/ (failing instead under PROBELET_REQUIRE_CLUSTER=1).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { createCriClient } from '../../src/runtime/cri/client.js';
import { NODE_LABEL } from '../../src/runtime/cri/pod-config.js';
import { CRI_ENDPOINT, criUnavailable } from '../cri/helpers.js';
import { describeCluster, distUnavailable, isReady, nodeAgentFixture, nodePodManifest, until } from './helpers.js';

const ENDPOINT = process.env.PROBELET_NODE_CRI_ENDPOINT ?? CRI_ENDPOINT;
const SOCKET = ENDPOINT.replace(/^unix:\/\//, '');
const NODE = `h20a-adopt-${randomBytes(3).toString('hex')}`;

/** What this suite needs besides the cluster. */
function unavailable(): string | undefined {
  const cri = process.env.PROBELET_NODE_CRI_ENDPOINT === undefined ? criUnavailable() : existsSync(SOCKET) ? undefined : `no containerd at ${ENDPOINT}`;
  return cri ?? distUnavailable();
}

/** Containers of this node in containerd (found by the node label, as crictl would): pod UID → running container IDs. */
async function runningByPod(): Promise<Map<string, string[]>> {
  const client = createCriClient(ENDPOINT);
  try {
    const { containers } = await client.ListContainers({ filter: { label_selector: { [NODE_LABEL]: NODE } } });
    const byPod = new Map<string, string[]>();
    for (const c of containers.filter((x) => x.state === 'CONTAINER_RUNNING')) {
      const uid = c.labels['io.kubernetes.pod.uid'] ?? '';
      byPod.set(uid, [...(byPod.get(uid) ?? []), c.id]);
    }
    return byPod;
  } finally {
    client.close();
  }
}

/** Every sandbox and container of this node in containerd, running or not. */
async function leftOfNode(): Promise<string[]> {
  const client = createCriClient(ENDPOINT);
  try {
    const selector = { label_selector: { [NODE_LABEL]: NODE } };
    const { items } = await client.ListPodSandbox({ filter: selector });
    const { containers } = await client.ListContainers({ filter: selector });
    return [...items.map((x) => `sandbox ${x.id}`), ...containers.map((x) => `container ${x.id}`)];
  } finally {
    client.close();
  }
}

async function execIn(containerID: string, cmd: string[]): Promise<void> {
  const client = createCriClient(ENDPOINT);
  try {
    const res = await client.ExecSync({ container_id: containerID.replace(/^[a-z]+:\/\//, ''), cmd, timeout: 5 });
    expect(res.exit_code).toBe(0);
  } finally {
    client.close();
  }
}

describeCluster(`probelet node --runtime cri adopts its running containers after a restart (${ENDPOINT})`, () => {
  const f = nodeAgentFixture({ node: NODE, runtimeArgs: ['--runtime', 'cri', '--cri-endpoint', ENDPOINT] });
  const { namespace } = f;
  const podManifest = (name: string, command: string[], probes: Record<string, unknown> = {}) => nodePodManifest(NODE, name, namespace, command, probes);

  it('kill -9 and restart: the same container (ID, startedAt, restartCount) keeps running and Ready, probes go on, a pod deleted meanwhile is cleaned up', async () => {
    await f.start();
    await f.clients.core.createNamespacedPod({
      namespace,
      body: podManifest('keep', ['sh', '-c', 'mkdir -p /www && echo ok > /www/ready && exec httpd -f -p 8080 -h /www'], {
        // A probe that merely answers late must not fail (test/docker/node.test.ts lost its
        // container to a 1 s exec timeout under load); /tmp/die still fails liveness at once.
        readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 2, failureThreshold: 1, timeoutSeconds: 10 },
        livenessProbe: { exec: { command: ['sh', '-c', 'test ! -e /tmp/die'] }, periodSeconds: 1, failureThreshold: 1, timeoutSeconds: 10 },
      }),
    });
    await f.clients.core.createNamespacedPod({ namespace, body: podManifest('gone', ['sleep', '3600']) });
    const before = await until('both pods Running and Ready', async () => {
      const [keep, gone] = await Promise.all([f.getPod('keep'), f.getPod('gone')]);
      return isReady(keep) && isReady(gone) ? { keep, gone } : undefined;
    }, 60_000);
    const keepBefore = before.keep.status?.containerStatuses?.[0];
    expect(keepBefore).toMatchObject({ ready: true, started: true, restartCount: 0 });
    const startedAt = Date.parse(keepBefore?.state?.running?.startedAt ?? '');
    // Older than the new agent by more than the kubelet-restart margin (10 s): the prober's
    // restart rules then keep its readiness until the first verdict, as upstream's do.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + 11_000 - Date.now())));

    await f.stop('SIGKILL');
    // Deleted while no agent runs: nothing on the node ends its container but the next start.
    await f.clients.core.deleteNamespacedPod({ name: 'gone', namespace, gracePeriodSeconds: 0 });
    const left = await runningByPod();
    expect(left.get(before.keep.metadata?.uid ?? '')).toEqual([keepBefore?.containerID?.replace(/^[a-z]+:\/\//, '')]);
    expect(left.get(before.gone.metadata?.uid ?? '')).toHaveLength(1);

    const agent = await f.start();
    await until('the deleted pod\'s container to be removed', async () => ((await runningByPod()).has(before.gone.metadata?.uid ?? '') ? undefined : true), 30_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; the agent's output:\n${agent.output()}`);
    });
    expect(agent.output()).toContain(`node ${NODE}: found 2 pod(s) an earlier run left in the runtime`);
    await until('the cleanup to be logged', async () => (agent.output().includes(`node ${NODE}: removed what an earlier run left running for 1 pod(s) no longer bound to this node`) ? true : undefined), 10_000);
    // Let the new agent write its status and probe a few times.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const keepAfter = (await f.getPod('keep')).status?.containerStatuses?.[0];
    expect(keepAfter?.containerID).toBe(keepBefore?.containerID);
    expect(keepAfter?.state?.running?.startedAt).toBe(keepBefore?.state?.running?.startedAt);
    expect(keepAfter).toMatchObject({ ready: true, started: true, restartCount: 0 });
    // Ready throughout: the condition did not flip (its transition time is the first run's).
    const readySince = (p: Pod): string | undefined => p.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime;
    const keepNow = await f.getPod('keep');
    expect(isReady(keepNow)).toBe(true);
    expect(readySince(keepNow), JSON.stringify(keepNow.status?.conditions)).toBe(readySince(before.keep));
    expect([...(await runningByPod()).values()]).toEqual([[keepBefore?.containerID?.replace(/^[a-z]+:\/\//, '')]]);
    // Nothing was created or started again.
    expect((await f.events('keep', 'Started')).map((e) => e.count ?? 1)).toEqual([1]);
    expect((await f.events('keep', 'Created')).map((e) => e.count ?? 1)).toEqual([1]);

    // Its probes go on: a liveness failure restarts the adopted container, restartCount 1.
    await execIn(keepBefore?.containerID ?? '', ['touch', '/tmp/die']);
    const restarted = await until('the adopted container restarted by its liveness probe', async () => {
      const p = await f.getPod('keep');
      const cs = p.status?.containerStatuses?.[0];
      return cs?.restartCount === 1 && cs.containerID !== keepBefore?.containerID && isReady(p) ? cs : undefined;
    }, 60_000);
    expect(restarted.lastState?.terminated?.containerID).toBe(keepBefore?.containerID);
    const killing = await until('the Killing event', async () => (await f.events('keep', 'Killing'))[0]);
    expect(killing.message).toBe('Container app failed liveness probe, will be restarted');
    expect([...(await runningByPod()).values()]).toEqual([[restarted.containerID?.replace(/^[a-z]+:\/\//, '')]]);

    // A stop leaves nothing of the node in the runtime, the adopted sandbox included.
    await f.stop('SIGTERM');
    expect(await leftOfNode()).toEqual([]);
  }, 180_000);
}, unavailable);
