/**
 * `probelet node` against a real control plane (etcd, kube-apiserver, controller manager and
 * scheduler built from source): the real Deployment, ReplicaSet and EndpointSlice controllers
 * act on the readiness probelet reports. The node runs in-process on the process runtime
 * (real child processes); its pods are pinned to it by `kubernetes.io/hostname`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api, DiscoveryV1Api, type V1Deployment, type V1Service } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Event, Pod } from '../../src/api/types.js';
import type { NodeAgent } from '../../src/node/agent.js';
import { NODE_LEASE_NAMESPACE } from '../../src/node/lease/controller.js';
import { plain, type KubeClients } from '../../src/node/kube.js';
import { detectNodeAddress } from '../../src/node/node-object.js';
import { clusterClients, deleteNodeObjects, describeCluster, startProcessNode, isReady, testNamespace, until } from './helpers.js';

describeCluster('probelet node on a real control plane', () => {
  const suffix = randomBytes(3).toString('hex');
  const nodeName = `probelet-test-${suffix}`;
  const namespace = `probelet-node-${suffix}`;
  let clients: KubeClients;
  let ns: ReturnType<typeof testNamespace>;
  let apps: AppsV1Api;
  let discovery: DiscoveryV1Api;
  let agent: NodeAgent;
  let runDir: string;
  let markDir: string;
  const logs: string[] = [];
  const nodeAddress = detectNodeAddress() ?? '10.255.255.1';

  beforeAll(async () => {
    clients = clusterClients();
    apps = clients.config.makeApiClient(AppsV1Api);
    discovery = clients.config.makeApiClient(DiscoveryV1Api);
    runDir = mkdtempSync(join(tmpdir(), 'probelet-node-run-'));
    markDir = mkdtempSync(join(tmpdir(), 'probelet-node-marks-'));
    ns = testNamespace(clients, namespace);
    await ns.create();
    agent = await startProcessNode({ clients: clients, name: nodeName, runDir, logs, port: 10255, address: nodeAddress });
  }, 60_000);

  afterAll(async () => {
    try {
      await ns?.deleteDeployment('web');
    } finally {
      await agent?.close();
      await ns?.delete();
      await deleteNodeObjects(clients, nodeName);
      rmSync(runDir, { recursive: true, force: true });
      rmSync(markDir, { recursive: true, force: true });
    }
  }, 120_000);

  const listPods = (): Promise<Pod[]> => ns.pods();

  async function podEvents(pod: string): Promise<Event[]> {
    const list = await clients.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${pod}` });
    return plain<{ items: Event[] }>(list).items;
  }

  /** Names of the pods the Service's EndpointSlices list as ready. */
  async function readyEndpoints(): Promise<string[]> {
    const slices = await discovery.listNamespacedEndpointSlice({ namespace, labelSelector: 'kubernetes.io/service-name=web' });
    return slices.items
      .flatMap((s) => s.endpoints)
      .filter((e) => e.conditions?.ready === true)
      .map((e) => e.targetRef?.name ?? '')
      .sort();
  }

  function deployment(readinessCommand: string[], version: string): V1Deployment {
    const mark = (kind: string): string[] => ['sh', '-c', `test ! -e "$MARK_DIR/$HOSTNAME.${kind}"`];
    return {
      metadata: { name: 'web', namespace },
      spec: {
        replicas: 3,
        progressDeadlineSeconds: 30,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' }, annotations: { version } },
          spec: {
            nodeSelector: { 'kubernetes.io/hostname': nodeName },
            terminationGracePeriodSeconds: 2,
            containers: [
              {
                name: 'app',
                image: 'probelet.local/busybox:test',
                // A restarted container starts healthy again: it removes its liveness mark.
                command: ['sh', '-c', 'rm -f "$MARK_DIR/$HOSTNAME.dead"; exec sleep 3600'],
                env: [{ name: 'MARK_DIR', value: markDir }],
                readinessProbe: { exec: { command: readinessCommand }, periodSeconds: 1, failureThreshold: 1 },
                livenessProbe: { exec: { command: mark('dead') }, periodSeconds: 1, failureThreshold: 1 },
              },
            ],
          },
        },
      },
    } as unknown as V1Deployment;
  }

  it('registers a Ready Node with the kubelet’s labels, conditions and version, and renews its Lease', async () => {
    const node = plain<{ metadata: { labels: Record<string, string> }; status: { conditions: Array<{ type: string; status: string; reason: string; message: string }>; nodeInfo: { kubeletVersion: string }; daemonEndpoints: { kubeletEndpoint: { Port: number } } } }>(
      await clients.core.readNode({ name: nodeName }),
    );
    expect(node.metadata.labels['kubernetes.io/hostname']).toBe(nodeName);
    expect(node.metadata.labels['kubernetes.io/os']).toBe('linux');
    expect(node.status.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' });
    expect(node.status.nodeInfo.kubeletVersion).toBe('v1.35.0-probelet.test');
    expect(node.status.daemonEndpoints.kubeletEndpoint.Port).toBe(10255);
    const lease = plain<{ spec: { holderIdentity: string; leaseDurationSeconds: number; renewTime: string } }>(
      await clients.coordination.readNamespacedLease({ name: nodeName, namespace: NODE_LEASE_NAMESPACE }),
    );
    expect(lease.spec).toMatchObject({ holderIdentity: nodeName, leaseDurationSeconds: 40 });
    const renewed = await until(
      'the Lease to be renewed',
      async () => {
        const now = plain<{ spec: { renewTime: string } }>(await clients.coordination.readNamespacedLease({ name: nodeName, namespace: NODE_LEASE_NAMESPACE }));
        return now.spec.renewTime !== lease.spec.renewTime ? now.spec.renewTime : undefined;
      },
      15_000,
    );
    expect(Date.parse(renewed) - Date.parse(lease.spec.renewTime)).toBeGreaterThanOrEqual(9_000);
  }, 30_000);

  it('runs a Deployment: its pods turn Ready on the node and the EndpointSlice lists them; a failing readiness probe takes one out and back', async () => {
    const service = {
      metadata: { name: 'web', namespace },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    } as unknown as V1Service;
    await clients.core.createNamespacedService({ namespace, body: service });
    await apps.createNamespacedDeployment({ namespace, body: deployment(['sh', '-c', 'test ! -e "$MARK_DIR/$HOSTNAME.unready"'], 'v1') });

    const pods = await until('3 Ready pods on the node', () => ns.readyOn(nodeName, 3));
    const names = pods.map((p) => p.metadata?.name ?? '').sort();
    for (const p of pods) {
      expect(p.status).toMatchObject({ phase: 'Running', podIP: nodeAddress, hostIP: nodeAddress, observedGeneration: 1 });
      expect(p.status?.containerStatuses?.[0]).toMatchObject({ name: 'app', ready: true, started: true, restartCount: 0 });
      expect(p.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status).toBe('True');
    }
    expect(await until('the EndpointSlice to list the 3 pods as ready', async () => {
      const ready = await readyEndpoints();
      return ready.length === 3 ? ready : undefined;
    })).toEqual(names);

    // Events through the API, as `kubectl describe pod` shows them: the kubelet's words, source kubelet on this node.
    const first = names[0] ?? '';
    const events = await until('the Started event of a pod', async () => {
      const es = await podEvents(first);
      return es.some((e) => e.reason === 'Started') ? es : undefined;
    });
    expect(events.find((e) => e.reason === 'Started')).toMatchObject({
      type: 'Normal',
      message: 'Container started',
      source: { component: 'kubelet', host: nodeName },
      involvedObject: { kind: 'Pod', name: first, namespace, fieldPath: 'spec.containers{app}' },
    });
    const volumes = events.filter((e) => e.reason === 'VolumesNotMounted');
    expect(volumes).toHaveLength(1);
    expect(volumes[0]?.type).toBe('Warning');
    expect(volumes[0]?.message).toMatch(/"kube-api-access-[a-z0-9]+"/);

    // Readiness fails on one pod: it leaves the ready endpoints, and comes back when it passes.
    writeFileSync(join(markDir, `${first}.unready`), '');
    expect(await until('the failing pod to leave the ready endpoints', async () => {
      const ready = await readyEndpoints();
      return ready.length === 2 ? ready : undefined;
    })).toEqual(names.filter((n) => n !== first));
    const notReady = (await listPods()).find((p) => p.metadata?.name === first);
    expect(notReady?.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady' });
    // Each failed readiness probe is one more of the same Event: counted, not stored anew (the correlator's aggregation).
    const unhealthy = await until('the Unhealthy event counted three times', async () => {
      const es = (await podEvents(first)).filter((e) => e.reason === 'Unhealthy');
      return es.length === 1 && (es[0]?.count ?? 0) >= 3 ? es[0] : undefined;
    });
    expect(unhealthy).toMatchObject({ type: 'Warning', message: 'Readiness probe failed: ' });
    expect(Date.parse(unhealthy?.lastTimestamp ?? '')).toBeGreaterThan(Date.parse(unhealthy?.firstTimestamp ?? ''));
    rmSync(join(markDir, `${first}.unready`));
    expect(await until('the pod to be back in the ready endpoints', async () => {
      const ready = await readyEndpoints();
      return ready.length === 3 ? ready : undefined;
    })).toEqual(names);
  }, 90_000);

  it('a liveness failure kills and restarts the container: Unhealthy and Killing events through the API, restartCount 1', async () => {
    const pods = await listPods();
    expect(pods.map((p) => p.status?.containerStatuses?.[0]?.restartCount)).toEqual([0, 0, 0]);
    const victim = pods[1]?.metadata?.name ?? '';
    writeFileSync(join(markDir, `${victim}.dead`), '');
    const restarted = await until('restartCount 1', async () => {
      const p = (await listPods()).find((x) => x.metadata?.name === victim);
      return p?.status?.containerStatuses?.[0]?.restartCount === 1 ? p : undefined;
    });
    expect(restarted.status?.containerStatuses?.[0]?.lastState?.terminated).toMatchObject({ exitCode: 143, reason: 'Error' });
    const events = await until('the Killing event', async () => {
      const es = await podEvents(victim);
      return es.some((e) => e.reason === 'Killing') ? es : undefined;
    });
    const unhealthy = events.find((e) => e.reason === 'Unhealthy');
    expect(unhealthy).toMatchObject({ type: 'Warning', source: { component: 'kubelet', host: nodeName } });
    expect(unhealthy?.message).toMatch(/^Liveness probe failed: /);
    expect(events.find((e) => e.reason === 'Killing')).toMatchObject({
      type: 'Normal',
      message: 'Container app failed liveness probe, will be restarted',
    });
    // The restarted container is Ready again.
    await until('the restarted pod to be Ready', async () => {
      const p = (await listPods()).find((x) => x.metadata?.name === victim);
      return p && isReady(p) ? p : undefined;
    });
  }, 60_000);

  it('a rolling update whose new pods never turn Ready stops at maxUnavailable and reports ProgressDeadlineExceeded', async () => {
    const old = new Set((await listPods()).map((p) => p.metadata?.name ?? ''));
    await apps.replaceNamespacedDeployment({ name: 'web', namespace, body: deployment(['false'], 'v2') });
    const condition = await until(
      'ProgressDeadlineExceeded',
      async () => {
        const d = await apps.readNamespacedDeployment({ name: 'web', namespace });
        const c = d.status?.conditions?.find((x) => x.type === 'Progressing');
        return c?.reason === 'ProgressDeadlineExceeded' ? c : undefined;
      },
      75_000,
      1000,
    );
    expect(condition.status).toBe('False');
    const pods = await listPods();
    const fresh = pods.filter((p) => !old.has(p.metadata?.name ?? ''));
    // maxSurge 0, maxUnavailable 1: one old pod went, one new pod came and is not Ready; the rollout stops there.
    expect(pods.filter((p) => old.has(p.metadata?.name ?? '') && isReady(p))).toHaveLength(2);
    expect(fresh).toHaveLength(1);
    expect(isReady(fresh[0]!)).toBe(false);
    expect((await readyEndpoints()).length).toBe(2);
    // The old pod the rollout removed was stopped with its grace period and its object deleted by the node.
    const removed = [...old].find((n) => !pods.some((p) => p.metadata?.name === n)) ?? '';
    const stopped = await podEvents(removed);
    expect(stopped.filter((e) => e.reason === 'Killing').map((e) => e.message)).toContain('Stopping container app');
    await expect(clients.core.readNamespacedPod({ name: removed, namespace })).rejects.toMatchObject({ code: 404 });
  }, 100_000);

  it('writes a pod’s status only when it changes: a steady node makes no status writes', async () => {
    const before = agent.writes().status;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(agent.writes().status).toBe(before);
  }, 10_000);
});
