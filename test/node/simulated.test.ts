/**
 * `probelet node --runtime simulated --nodes N` against a real control plane, driven through
 * the command in-process: N tainted nodes each with its own Lease; the real scheduler places a
 * Deployment's tolerating pods on them; each container plays its pod's behaviour annotation in
 * real time, and a pod turns Ready only when its (simulated) readiness probe passes.
 */
import { randomBytes } from 'node:crypto';
import { AppsV1Api, type V1Deployment } from '@kubernetes/client-node';
import { Command } from 'commander';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { registerNodeCommand } from '../../src/cli/node.js';
import { NODE_LEASE_NAMESPACE } from '../../src/node/lease/controller.js';
import { plain, type KubeClients } from '../../src/node/kube.js';
import { clusterClients, deleteNodeObjects, describeCluster, testNamespace, until } from './helpers.js';

describeCluster('probelet node --runtime simulated --nodes 2 on a real control plane', () => {
  const suffix = randomBytes(3).toString('hex');
  const prefix = `probelet-sim-${suffix}`;
  const names = [`${prefix}-0`, `${prefix}-1`];
  const namespace = `probelet-sim-${suffix}`;
  let clients: KubeClients;
  let ns: ReturnType<typeof testNamespace>;
  let apps: AppsV1Api;
  let stop: (signal: string) => void = () => undefined;
  let running: Promise<unknown> | undefined;
  const stderr: string[] = [];
  let exitCode: number | undefined;

  beforeAll(async () => {
    clients = clusterClients();
    apps = clients.config.makeApiClient(AppsV1Api);
    ns = testNamespace(clients, namespace);
    await ns.create();
    const program = new Command('probelet').exitOverride();
    const stopped = new Promise<string>((resolve) => (stop = resolve));
    registerNodeCommand(program, { stdout: () => undefined, stderr: (t) => void stderr.push(t) }, (code) => (exitCode = code), { stopped: () => stopped });
    const kubeconfig = process.env.KUBECONFIG?.split(':')[0] ?? '';
    running = program.parseAsync(['node', '--kubeconfig', kubeconfig, '--runtime', 'simulated', '--nodes', '2', '--name', prefix, '--listen', '127.0.0.1:0'], { from: 'user' });
    await until('both simulated nodes to register', async () => (stderr.filter((l) => l.includes('registered with')).length === 2 ? true : undefined));
  }, 60_000);

  afterAll(async () => {
    try {
      await ns?.deleteDeployment('sim', 30_000);
    } finally {
      stop('SIGTERM');
      await running;
      await ns?.delete();
      for (const name of names) {
        await deleteNodeObjects(clients, name);
      }
    }
    expect(exitCode).toBe(0);
  }, 90_000);

  const listPods = (): Promise<Pod[]> => ns.pods();

  it('registers each node tainted, with a Lease of its own', async () => {
    for (const name of names) {
      const node = plain<{ spec: { taints?: unknown[] } }>(await clients.core.readNode({ name }));
      expect(node.spec.taints).toContainEqual({ key: 'probelet.dev/simulated', value: 'true', effect: 'NoSchedule' });
      const lease = plain<{ spec: { holderIdentity: string } }>(await clients.coordination.readNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE }));
      expect(lease.spec.holderIdentity).toBe(name);
    }
  });

  it('pods that tolerate the taint run there and turn Ready when the annotation’s readiness script turns up, not before', async () => {
    const deployment = {
      metadata: { name: 'sim', namespace },
      spec: {
        replicas: 4,
        selector: { matchLabels: { app: 'sim' } },
        template: {
          metadata: { labels: { app: 'sim' }, annotations: { 'probelet.dev/behaviour': 'app.readiness=down:3s,up' } },
          spec: {
            tolerations: [{ key: 'probelet.dev/simulated', operator: 'Exists', effect: 'NoSchedule' }],
            affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: names }] }] } } },
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'app', image: 'example.com/app:1', readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 1 } }],
          },
        },
      },
    } as unknown as V1Deployment;
    await apps.createNamespacedDeployment({ namespace, body: deployment });
    const pods = await until('4 Ready pods', async () => {
      const ps = await listPods();
      return ps.length === 4 && ps.every((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) ? ps : undefined;
    });
    for (const p of pods) {
      expect(names).toContain(p.spec?.nodeName);
      const ready = p.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime ?? '';
      const started = p.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? '';
      expect(Date.parse(ready) - Date.parse(started)).toBeGreaterThanOrEqual(3000);
    }
    // The Deployment controller counts them (a moment after the pods say so).
    await until('the Deployment to count 4 ready replicas', async () => {
      const d = await apps.readNamespacedDeployment({ name: 'sim', namespace });
      return d.status?.readyReplicas === 4 ? true : undefined;
    });
  }, 60_000);
});
