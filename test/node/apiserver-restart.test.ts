/**
 * A real API server restart under a probelet node: a SECOND kube-apiserver (cluster/apiserver.sh:
 * the same binary, flags, certificates and etcd as cluster:up's) on another 127.0.0.1 port is
 * the only server the node talks to; the shared one is never touched. It is stopped mid-run
 * (SIGTERM, then SIGKILL) while pods are created and deleted through the FIRST, then started
 * again: no pod lost or run twice, statuses caught up, the Lease renewed. The second server is
 * stopped in afterAll (and dies with the test process: setpriv --pdeathsig).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import type { NodeAgent } from '../../src/node/agent.js';
import { NODE_LEASE_NAMESPACE } from '../../src/node/lease/controller.js';
import { plain, type KubeClients } from '../../src/node/kube.js';
import { adminClientsVia, clusterClients, deleteNodeObjects, describeCluster, startProcessNode, isReady, runningPods, testNamespace, until } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The cluster's state directory: the admin kubeconfig's. */
const STATE = dirname(process.env.KUBECONFIG?.split(':')[0] ?? '.');

function unavailable(): string | undefined {
  if (!existsSync(join(STATE, 'bin-dir'))) return `no ${join(STATE, 'bin-dir')} (a cluster:up cluster, whose kube-apiserver binary a second server runs)`;
  if (!existsSync(join(STATE, 'pki/apiserver.key'))) return `no ${join(STATE, 'pki/apiserver.key')} readable (root, as cluster:up)`;
  return undefined;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address ? address.port : 0;
}

/** A second API server on `port`, logging to `log`. */
interface SecondApiServer {
  start(): Promise<void>;
  /** Stops it with `signal` and waits for its exit; a no-op when it is not running. */
  stop(signal: NodeJS.Signals): Promise<void>;
  running(): boolean;
}

function secondApiServer(port: number, dir: string, ready: () => Promise<unknown>): SecondApiServer {
  let child: ChildProcess | undefined;
  const log = join(dir, 'kube-apiserver.log');
  const running = (): boolean => child !== undefined && child.exitCode === null && child.signalCode === null;
  return {
    running,
    async start() {
      const fd = openSync(log, 'a');
      try {
        child = spawn('bash', [join(ROOT, 'cluster/apiserver.sh'), '--port', String(port), '--cert-dir', join(dir, 'certs')], { stdio: ['ignore', fd, fd], env: { ...process.env, PROBELET_CLUSTER_DIR: STATE } });
      } finally {
        closeSync(fd);
      }
      const started = child;
      await until(`the second API server on 127.0.0.1:${port} to be ready`, async () => {
        if (started.exitCode !== null) throw new Error(`it exited (${started.exitCode}); its log ends: ${readFileSync(log, 'utf8').slice(-800)}`);
        await ready();
        return true;
      }, 60_000);
    },
    async stop(signal) {
      const c = child;
      if (c === undefined || !running()) return;
      const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
      c.kill(signal);
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 70_000))]);
      if (running()) {
        c.kill('SIGKILL');
        await exited;
      }
    },
  };
}

describeCluster('probelet node through a real restart of its API server (a second kube-apiserver)', () => {
  const suffix = randomBytes(3).toString('hex');
  const nodeName = `probelet-apirestart-${suffix}`;
  const namespace = `probelet-apirestart-${suffix}`;
  let admin: KubeClients;
  let ns: ReturnType<typeof testNamespace>;
  let second: SecondApiServer;
  let viaSecond: KubeClients;
  let agent: NodeAgent;
  let dir: string;
  let runDir: string;
  const logs: string[] = [];

  beforeAll(async () => {
    admin = clusterClients();
    dir = mkdtempSync(join(tmpdir(), 'probelet-apirestart-'));
    runDir = join(dir, 'run');
    const port = await freePort();
    viaSecond = adminClientsVia(port);
    second = secondApiServer(port, dir, () => viaSecond.core.readNamespace({ name: 'default' }));
    await second.start();
    ns = testNamespace(admin, namespace);
    await ns.create();
    agent = await startProcessNode({ clients: viaSecond, name: nodeName, runDir, logs });
  }, 90_000);

  afterAll(async () => {
    try {
      // The node's last writes need its API server.
      if (second && !second.running()) await second.start().catch(() => undefined);
      await agent?.close();
      await admin.core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
    } finally {
      await second?.stop('SIGTERM');
      await ns?.delete();
      await deleteNodeObjects(admin, nodeName);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);

  const listPods = (): Promise<Pod[]> => ns.pods({ deleting: true });
  const running = (): string[] => runningPods(agent.kubelet);

  async function renewTime(): Promise<number> {
    const lease = plain<{ spec: { renewTime: string } }>(await admin.coordination.readNamespacedLease({ name: nodeName, namespace: NODE_LEASE_NAMESPACE }));
    return Date.parse(lease.spec.renewTime);
  }

  /**
   * Stops the second API server with `signal`; meanwhile creates `create` and deletes `remove`
   * through the first; starts it again; then every pod is caught up.
   */
  async function restartWhile(signal: NodeJS.Signals, create: string, remove: string, keep: string[]): Promise<void> {
    const before = new Map((await listPods()).map((p) => [p.metadata?.name ?? '', p.status?.containerStatuses?.[0]?.containerID]));
    const stopping = Date.now();
    await second.stop(signal);
    const stopMs = Date.now() - stopping;
    await ns.createSleepPod(create, nodeName);
    await admin.core.deleteNamespacedPod({ name: remove, namespace });
    await new Promise((resolve) => setTimeout(resolve, 4000));
    // The node kept running what it had, and ran nothing new.
    expect(running()).toEqual([...keep, remove].sort());
    const restarted = Date.now();
    await second.start();
    await ns.readyPods([create], 60_000);
    await until(`pod ${remove} terminated and deleted by the node`, async () => ((await listPods()).some((p) => p.metadata?.name === remove) ? undefined : true), 30_000);
    await until(`the node to run ${[...keep, create].join(', ')}, each once`, async () => (running().join() === [...keep, create].sort().join() ? true : undefined));
    // Ready again: the node lifecycle controller set Ready False while the node was out of reach
    // (the server took up to 60 s to stop); the node writes it back at its next watch event or
    // its retry of a failed write, within 10 s — as a kubelet's status manager, whose syncBatch
    // runs every 10 s — so it is awaited, not read at once.
    const readyAgain = await until(
      `${keep.join(', ')} Ready again`,
      async () => {
        const ps = await listPods();
        return keep.every((name) => isReady(ps.find((x) => x.metadata?.name === name))) ? ps : undefined;
      },
      30_000,
    ).catch((err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)} (the server took ${stopMs} ms to stop); the node's log: ${logs.filter((l) => !l.includes('renewing')).slice(-30).join('\n')}`);
    });
    expect(readyAgain.map((p) => p.metadata?.name).sort()).toEqual([...keep, create].sort());
    for (const name of keep) {
      const p = readyAgain.find((x) => x.metadata?.name === name);
      // Neither restarted nor started again: the same container, no restart.
      expect(p?.status?.containerStatuses?.[0]?.containerID).toBe(before.get(name));
      expect(p?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    }
    // The Lease is renewed through the restarted server (every 10 s).
    await until('the Lease renewed after the restart', async () => ((await renewTime()) >= restarted - 1000 ? true : undefined), 20_000);
  }

  it('SIGTERM: pods created and deleted meanwhile are caught up, none lost or doubled, the Lease renewed', async () => {
    await ns.createSleepPod('a', nodeName);
    await ns.createSleepPod('b', nodeName);
    await ns.readyPods(['a', 'b'], 60_000);
    await restartWhile('SIGTERM', 'c', 'a', ['b']);
  }, 120_000);

  it('SIGKILL: the same, with connections cut without a goodbye', async () => {
    await restartWhile('SIGKILL', 'd', 'b', ['c']);
  }, 120_000);
}, unavailable);
