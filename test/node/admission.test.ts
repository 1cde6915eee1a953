/**
 * A pod the node's own admission refuses (the API server had accepted it) ends as the kubelet's
 * `rejectPod` leaves it: one Warning event, phase Failed with the reason and "Pod was rejected:
 * …", so that its controller replaces it instead of it waiting Pending for good; deleted, it
 * goes at once. Real control plane, the process runtime, an admission that refuses by name.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { admitPods } from '../../src/api/admit.js';
import type { Pod } from '../../src/api/types.js';
import type { NodeAgent } from '../../src/node/agent.js';
import { plain, type KubeClients } from '../../src/node/kube.js';
import { clusterClients, deleteNodeObjects, describeCluster, startProcessNode, testNamespace, until } from './helpers.js';

describeCluster('probelet node: a pod its admission refuses', () => {
  const suffix = randomBytes(3).toString('hex');
  const nodeName = `probelet-admit-${suffix}`;
  const namespace = `probelet-admit-${suffix}`;
  let clients: KubeClients;
  let ns: ReturnType<typeof testNamespace>;
  let agent: NodeAgent;
  let runDir: string;
  const logs: string[] = [];

  beforeAll(async () => {
    clients = clusterClients();
    runDir = mkdtempSync(join(tmpdir(), 'probelet-node-admit-'));
    ns = testNamespace(clients, namespace);
    await ns.create();
    agent = await startProcessNode({
      clients,
      name: nodeName,
      runDir,
      logs,
      admit: (pods) => {
        const refused = pods.filter((p) => p.metadata?.name?.startsWith('refused') === true);
        const ok = admitPods(pods.filter((p) => !refused.includes(p)));
        return { pods: ok.pods, errors: [...ok.errors, ...refused.map((p) => ({ pod: p.metadata?.name ?? '', message: 'test admission: refused by name', errors: [] }))] };
      },
    });
  }, 60_000);

  afterAll(async () => {
    await agent?.close();
    await ns?.delete();
    await deleteNodeObjects(clients, nodeName);
    rmSync(runDir, { recursive: true, force: true });
  }, 120_000);

  it('ends Failed with the reason and "Pod was rejected: …", one FailedAdmission event, and goes at once when deleted', async () => {
    const body = { metadata: { name: 'refused-a', namespace }, spec: { nodeName, containers: [{ name: 'app', image: 'probelet.local/busybox:test', command: ['sleep', '60'] }] } } as unknown as V1Pod;
    await clients.core.createNamespacedPod({ namespace, body });
    const failed = await until('refused-a Failed', async () => {
      const p = (await ns.pods()).find((x) => x.metadata?.name === 'refused-a');
      return p?.status?.phase === 'Failed' ? p : undefined;
    });
    expect(failed.status?.reason).toBe('FailedAdmission');
    expect(failed.status?.message).toBe('Pod was rejected: test admission: refused by name');
    const events = plain<{ items: Array<{ reason?: string; type?: string; message?: string }> }>(
      await clients.core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=refused-a' }),
    ).items;
    expect(events.filter((e) => e.reason === 'FailedAdmission').map((e) => `${e.type} ${e.message}`)).toEqual(['Warning test admission: refused by name']);
    expect(agent.kubelet.hasPod(failed.metadata?.uid ?? '')).toBe(false);
    await clients.core.deleteNamespacedPod({ namespace, name: 'refused-a' });
    await until('refused-a gone', async () => ((await ns.pods({ deleting: true })).some((p: Pod) => p.metadata?.name === 'refused-a') ? undefined : true));
  }, 60_000);
});
