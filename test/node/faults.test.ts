/**
 * Faults between a probelet node and a real API server, injected by a TCP proxy the node talks
 * through: every connection cut (a dropped watch), and the API server unreachable for a while
 * (as during its restart) while pods are created and deleted. No pod may be lost, run twice,
 * or left undeleted.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import type { NodeAgent } from '../../src/node/agent.js';
import { plain, type KubeClients } from '../../src/node/kube.js';
import { adminClientsVia, adminServer, clusterClients, deleteNodeObjects, describeCluster, startProcessNode, runningPods, testNamespace, until } from './helpers.js';

interface Proxy {
  port: number;
  /** Destroys every open connection; new ones are still accepted. */
  cut(): void;
  /** Cuts every connection and refuses new ones until {@link Proxy.resume}. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Cuts every connection; new ones are accepted and then never answered (a server hung or a network black hole). */
  blackhole(): void;
  close(): Promise<void>;
}

async function startProxy(host: string, port: number): Promise<Proxy> {
  const sockets = new Set<Socket>();
  let holding = false;
  const track = (s: Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    if (holding) return;
    const upstream = connect(port, host);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (p: number): Promise<number> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(p, '127.0.0.1', () => {
        server.off('error', reject);
        const a = server.address();
        resolve(typeof a === 'object' && a ? a.port : 0);
      });
    });
  const own = await listen(0);
  const cut = (): void => {
    for (const s of sockets) s.destroy();
  };
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      server.close(() => resolve());
      cut();
    });
  return {
    port: own,
    cut,
    pause: stop,
    resume: async () => void (await listen(own)),
    blackhole: () => {
      holding = true;
      cut();
    },
    close: stop,
  };
}

describeCluster('probelet node through faults between it and a real API server', () => {
  const suffix = randomBytes(3).toString('hex');
  const nodeName = `probelet-fault-${suffix}`;
  const namespace = `probelet-fault-${suffix}`;
  let admin: KubeClients;
  let ns: ReturnType<typeof testNamespace>;
  let proxy: Proxy;
  let agent: NodeAgent;
  let runDir: string;
  const logs: string[] = [];

  beforeAll(async () => {
    admin = clusterClients();
    const url = adminServer();
    proxy = await startProxy(url.hostname, Number(url.port || 443));
    runDir = mkdtempSync(join(tmpdir(), 'probelet-fault-run-'));
    ns = testNamespace(admin, namespace);
    await ns.create();
    agent = await startProcessNode({ clients: adminClientsVia(proxy.port), name: nodeName, runDir, logs });
  }, 60_000);

  afterAll(async () => {
    try {
      await agent?.close();
      await admin.core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
    } finally {
      await proxy?.close();
      await ns?.delete();
      await deleteNodeObjects(admin, nodeName);
      rmSync(runDir, { recursive: true, force: true });
    }
  }, 90_000);

  const listPods = (): Promise<Pod[]> => ns.pods({ deleting: true });
  const createPod = (name: string): Promise<void> => ns.createSleepPod(name, nodeName);
  const readyPods = (names: string[]): Promise<Pod[]> => ns.readyPods(names);
  const running = (): string[] => runningPods(agent.kubelet);

  it('a cut watch resumes: a pod created afterwards runs, none runs twice', async () => {
    await createPod('a');
    await createPod('b');
    await readyPods(['a', 'b']);
    proxy.cut();
    await createPod('c');
    await readyPods(['c']);
    expect(running()).toEqual(['a', 'b', 'c']);
  }, 60_000);

  it('an API server out of reach for a while (a restart): pods created and deleted meanwhile are caught up, none lost or doubled', async () => {
    const before = (await listPods()).find((p) => p.metadata?.name === 'b');
    await proxy.pause();
    await createPod('d');
    await admin.core.deleteNamespacedPod({ name: 'a', namespace });
    await new Promise((resolve) => setTimeout(resolve, 4000));
    // The node kept running what it had.
    expect(running()).toEqual(['a', 'b', 'c']);
    await proxy.resume();
    await readyPods(['d']);
    await until('pod a terminated and deleted by the node', async () => ((await listPods()).some((p) => p.metadata?.name === 'a') ? undefined : true));
    await until('the node to run b, c and d', async () => (running().join() === 'b,c,d' ? true : undefined));
    const after = (await listPods()).find((p) => p.metadata?.name === 'b');
    // b was never restarted nor started again.
    expect(after?.status?.containerStatuses?.[0]?.containerID).toBe(before?.status?.containerStatuses?.[0]?.containerID);
    expect(after?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    expect(logs.some((l) => l.includes('of pods failed'))).toBe(true);
  }, 60_000);

  it('a pod the runtime cannot run (no command, env from a Secret) waits in CreateContainerConfigError with the reason, and the others run on', async () => {
    const bad = {
      metadata: { name: 'bad', namespace },
      spec: {
        nodeName,
        terminationGracePeriodSeconds: 1,
        containers: [
          { name: 'no-command', image: 'probelet.local/busybox:test' },
          { name: 'secret-env', image: 'probelet.local/busybox:test', command: ['sleep', '3600'], env: [{ name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] },
        ],
      },
    } as unknown as V1Pod;
    await admin.core.createNamespacedPod({ namespace, body: bad });
    await createPod('e');
    const statuses = await until('both containers of the bad pod to wait in CreateContainerConfigError', async () => {
      const p = (await listPods()).find((x) => x.metadata?.name === 'bad');
      const cs = p?.status?.containerStatuses ?? [];
      return cs.length === 2 && cs.every((c) => c.state?.waiting?.reason === 'CreateContainerConfigError') ? cs : undefined;
    });
    expect(statuses.find((c) => c.name === 'no-command')?.state?.waiting?.message).toContain('spec.containers[0].command');
    expect(statuses.find((c) => c.name === 'secret-env')?.state?.waiting?.message).toContain('spec.containers[1].env[0].valueFrom.secretKeyRef');
    await readyPods(['e']);
    const events = plain<{ items: Array<{ reason?: string; type?: string; message?: string }> }>(
      await admin.core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=bad' }),
    ).items;
    expect(events.some((e) => e.type === 'Warning' && e.reason === 'Failed' && e.message?.startsWith('Error: ') === true)).toBe(true);
  }, 60_000);

  it('stopping while the API server never answers: every container stops, and the node stops after at most 5 s more for its last writes', async () => {
    proxy.blackhole();
    const started = Date.now();
    await agent.close();
    const took = Date.now() - started;
    // The last status writes hang: the node gives them 5 s (CLOSE_FLUSH_LIMIT_MS), not for ever.
    expect(took).toBeGreaterThanOrEqual(4_900);
    expect(took).toBeLessThan(9_000);
    expect(agent.kubelet.listPods().every((p) => p.status?.phase !== 'Running')).toBe(true);
  }, 30_000);
});
