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
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { detectNodeAddress } from '../../src/node/node-object.js';
import { NODE_LABEL } from '../../src/runtime/cri/pod-config.js';
import { describeCluster, distUnavailable, isReady, kubectl, nodeAgentFixture, nodePodManifest, servingUnavailable, until } from '../node/helpers.js';
import { DOCKER_HOST, dockerClient, dockerUnavailable, leftInDaemon } from './helpers.js';

const NODE = `docker-node-${randomBytes(3).toString('hex')}`;
const ADDRESS = detectNodeAddress();

function unavailable(): string | undefined {
  return servingUnavailable(ADDRESS) ?? dockerUnavailable() ?? distUnavailable();
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

describeCluster(`probelet node --runtime docker: pods, kubectl logs, adoption after a restart (${DOCKER_HOST})`, () => {
  const f = nodeAgentFixture({ node: NODE, runtimeArgs: ['--runtime', 'docker', '--docker-host', DOCKER_HOST], serving: { address: ADDRESS ?? '' } });
  const { namespace } = f;
  const podManifest = (name: string, command: string[], probes: Record<string, unknown> = {}) => nodePodManifest(NODE, name, namespace, command, probes);

  it('runs the pods, kubectl logs shows their output; kill -9 and restart adopts the running container, cleans up a deleted pod; SIGTERM leaves nothing', async () => {
    await f.start();
    await f.clients.core.createNamespacedPod({
      namespace,
      body: podManifest('keep', ['sh', '-c', 'echo hello from keep; echo oops >&2; mkdir -p /www && echo ok > /www/ready && exec httpd -f -p 8080 -h /www'], {
        // A probe that merely answers late must not fail: under load an exec through the Engine
        // took over 1 s (the default timeout), and with failureThreshold 1 that restarted the
        // container just before the kill -9 (so there was nothing to adopt). /tmp/die still fails
        // the liveness probe at once: `test` answers in no time.
        readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 2, failureThreshold: 1, timeoutSeconds: 10 },
        livenessProbe: { exec: { command: ['sh', '-c', 'test ! -e /tmp/die'] }, periodSeconds: 1, failureThreshold: 1, timeoutSeconds: 10 },
      }),
    });
    await f.clients.core.createNamespacedPod({ namespace, body: podManifest('gone', ['sleep', '3600']) });
    const before = await until('both pods Running and Ready', async () => {
      const [keep, gone] = await Promise.all([f.getPod('keep'), f.getPod('gone')]);
      return isReady(keep) && isReady(gone) ? { keep, gone } : undefined;
    }, 60_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; the agent's output:\n${f.agent?.output() ?? ''}`);
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

    await f.stop('SIGKILL');
    await f.clients.core.deleteNamespacedPod({ name: 'gone', namespace, gracePeriodSeconds: 0 });
    const id = (s: string | undefined): string => (s ?? '').replace(/^docker:\/\//, '');
    expect((await runningByPod()).get(before.keep.metadata?.uid ?? '')).toEqual([id(keepBefore?.containerID)]);

    const agent = await f.start();
    await until("the deleted pod's container to be removed", async () => ((await runningByPod()).has(before.gone.metadata?.uid ?? '') ? undefined : true), 30_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; the agent's output:\n${agent.output()}`);
    });
    expect(agent.output()).toContain(`node ${NODE}: found 2 pod(s) an earlier run left in the runtime`);
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const keepNow = await f.getPod('keep');
    const keepAfter = keepNow.status?.containerStatuses?.[0];
    const story = `the agent's output:\n${agent.output()}\nkeep's events:\n${(await f.events('keep')).map((e) => `${e.type ?? ''} ${e.reason ?? ''} x${e.count ?? 1}: ${e.message ?? ''}`).join('\n')}\nits status: ${JSON.stringify(keepAfter)}`;
    expect(keepAfter?.containerID, story).toBe(keepBefore?.containerID);
    expect(keepAfter?.state?.running?.startedAt).toBe(keepBefore?.state?.running?.startedAt);
    expect(keepAfter).toMatchObject({ ready: true, started: true, restartCount: 0 });
    expect(isReady(keepNow)).toBe(true);
    expect([...(await runningByPod()).values()]).toEqual([[id(keepBefore?.containerID)]]);
    expect((await f.events('keep', 'Started')).map((e) => e.count ?? 1)).toEqual([1]);
    // Its log, read again from the daemon by the new agent, with the same times.
    expect(logs('--timestamps').split('\n').filter((l) => l !== '')).toEqual(stamped);

    // Its probes go on: a liveness failure restarts the adopted container, restartCount 1.
    await (await dockerClient().getContainer(id(keepBefore?.containerID)).exec({ Cmd: ['touch', '/tmp/die'] })).start({ Detach: true });
    const restarted = await until('the adopted container restarted by its liveness probe', async () => {
      const p = await f.getPod('keep');
      const cs = p.status?.containerStatuses?.[0];
      return cs?.restartCount === 1 && cs.containerID !== keepBefore?.containerID && isReady(p) ? cs : undefined;
    }, 60_000);
    expect(restarted.lastState?.terminated?.containerID).toBe(keepBefore?.containerID);
    expect(logs('--previous').split('\n').sort()).toEqual(['', 'hello from keep', 'oops']);

    // A stop leaves nothing of the node in the daemon, the adopted infra container included.
    await f.stop('SIGTERM');
    expect(await leftInDaemon(NODE, NODE_LABEL)).toEqual([]);
  }, 240_000);
}, unavailable);
