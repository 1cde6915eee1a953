/**
 * The rollout of examples/fleet/ at a small size (10 replicas on 5 simulated nodes, a 60 s
 * progress deadline) on a real control plane: the real Deployment controller, on probelet's
 * readiness, gets stuck with ProgressDeadlineExceeded on version 2 (it starts in 40 s behind a
 * liveness probe that kills it first: restarts, never Ready), and completes with the fixed
 * probes (a startupProbe; no restart). The example's manifests and the behaviours of its fleet
 * file are used as they are; only the sizes, the pool (a name and label of this run, so that
 * only this suite's pods land there) and the namespace are this suite's. The node command runs
 * in-process; its nodes and namespace are removed after.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppsV1Api, PolicyV1Api, type V1Deployment, type V1PodDisruptionBudget } from '@kubernetes/client-node';
import { Command } from 'commander';
import yaml from 'js-yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { registerNodeCommand } from '../../src/cli/node.js';
import type { KubeClients } from '../../src/node/kube.js';
import { clusterClients, deleteNodeObjects, describeCluster, testNamespace, until } from './helpers.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/fleet/', import.meta.url));
const SUFFIX = randomBytes(3).toString('hex');
const POOL = `fr${SUFFIX}`;
const NODES = [0, 1, 2, 3, 4].map((i) => `${POOL}-${i}`);
const REPLICAS = 10;
/** Above the 40 s version 2 needs to start, so that the fixed version makes progress within it. */
const PROGRESS_DEADLINE_S = 60;

type Manifest = { kind: string } & Record<string, unknown>;

/** The example's objects of `file`, sized for the suite and pinned to its pool. */
function example(file: string, namespace: string): Manifest[] {
  return (yaml.loadAll(readFileSync(join(EXAMPLES, file), 'utf8')) as Manifest[]).map((object) => {
    const o = structuredClone(object) as Manifest & { metadata: { namespace?: string }; spec: Record<string, unknown> & { template?: { spec: { nodeSelector: Record<string, string> } } } };
    o.metadata.namespace = namespace;
    if (o.kind === 'Deployment') {
      o.spec.replicas = REPLICAS;
      o.spec.progressDeadlineSeconds = PROGRESS_DEADLINE_S;
      if (o.spec.template) o.spec.template.spec.nodeSelector = { 'probelet.dev/pool': POOL };
    }
    return o;
  });
}

/** The example's fleet file with one pool of 5 nodes of this run; its behaviours unchanged. */
function fleetFile(): string {
  const fleet = yaml.load(readFileSync(join(EXAMPLES, 'fleet.yaml'), 'utf8')) as { pools: Array<Record<string, unknown>> };
  fleet.pools = [{ ...fleet.pools[0], name: POOL, count: NODES.length, labels: { 'probelet.dev/pool': POOL } }];
  return yaml.dump(fleet);
}

describeCluster('examples/fleet: a rollout stuck on a slow start behind liveness, completed with a startupProbe', () => {
  const namespace = `probelet-rollout-${SUFFIX}`;
  const dir = mkdtempSync(join(tmpdir(), 'probelet-fleet-rollout-'));
  let clients: KubeClients;
  let apps: AppsV1Api;
  let ns: ReturnType<typeof testNamespace>;
  let stop: (signal: string) => void = () => undefined;
  let running: Promise<unknown> | undefined;
  const stderr: string[] = [];
  let exitCode: number | undefined;

  beforeAll(async () => {
    clients = clusterClients();
    apps = clients.config.makeApiClient(AppsV1Api);
    ns = testNamespace(clients, namespace);
    await ns.create();
    writeFileSync(join(dir, 'fleet.yaml'), fleetFile());
    const program = new Command('probelet').exitOverride();
    const stopped = new Promise<string>((resolve) => (stop = resolve));
    registerNodeCommand(program, { stdout: () => undefined, stderr: (t) => void stderr.push(t) }, (code) => (exitCode = code), { stopped: () => stopped });
    const kubeconfig = process.env.KUBECONFIG?.split(':')[0] ?? '';
    running = program.parseAsync(['node', '--kubeconfig', kubeconfig, '--runtime', 'simulated', '--fleet', join(dir, 'fleet.yaml')], { from: 'user' });
    await until('the 5 nodes to register', async () => (stderr.filter((l) => l.includes('registered with')).length === NODES.length ? true : undefined), 60_000);
  }, 90_000);

  afterAll(async () => {
    try {
      await ns?.deleteDeployment('shop', 60_000);
    } finally {
      stop('SIGTERM');
      await running;
      await ns?.delete();
      for (const name of NODES) await deleteNodeObjects(clients, name);
      rmSync(dir, { recursive: true, force: true });
    }
    expect(exitCode).toBe(0);
  }, 120_000);

  /** Creates the example's objects of `file`, or brings the Deployment to its spec. */
  async function apply(file: string): Promise<void> {
    for (const o of example(file, namespace)) {
      if (o.kind === 'PodDisruptionBudget') {
        await clients.config.makeApiClient(PolicyV1Api).createNamespacedPodDisruptionBudget({ namespace, body: o as unknown as V1PodDisruptionBudget });
        continue;
      }
      const body = o as unknown as V1Deployment;
      const current = await apps.readNamespacedDeployment({ name: 'shop', namespace }).catch(() => undefined);
      if (!current) await apps.createNamespacedDeployment({ namespace, body });
      else await apps.replaceNamespacedDeployment({ name: 'shop', namespace, body: { ...body, metadata: { ...body.metadata, resourceVersion: current.metadata?.resourceVersion } } });
    }
  }

  /** The Deployment's Progressing reason once the controller observed its latest spec. */
  async function progressing(): Promise<{ reason?: string; status?: string; updated: number; available: number; replicas: number } | undefined> {
    const d = await apps.readNamespacedDeployment({ name: 'shop', namespace });
    if ((d.status?.observedGeneration ?? 0) < (d.metadata?.generation ?? 0)) return undefined;
    const c = d.status?.conditions?.find((x) => x.type === 'Progressing');
    return { reason: c?.reason, status: c?.status, updated: d.status?.updatedReplicas ?? 0, available: d.status?.availableReplicas ?? 0, replicas: d.status?.replicas ?? 0 };
  }

  /** Restarts of the containers of version 2, with or without the startupProbe. */
  async function restartsOfV2(fixed: boolean): Promise<number> {
    const pods = await ns.pods();
    return pods.filter((p) => p.spec?.containers[0]?.image === 'example/shop:2.0' && (p.spec.containers[0].startupProbe !== undefined) === fixed).reduce((sum, p) => sum + (p.status?.containerStatuses?.[0]?.restartCount ?? 0), 0);
  }

  const complete = (s: Awaited<ReturnType<typeof progressing>>): boolean =>
    s?.reason === 'NewReplicaSetAvailable' && s.updated === REPLICAS && s.available === REPLICAS && s.replicas === REPLICAS;

  it('version 1 rolls out on the fleet', async () => {
    await apply('shop-v1.yaml');
    await until('version 1 available', async () => (complete(await progressing()) ? true : undefined), 90_000, 1_000);
    const pods = await ns.pods();
    expect(pods.every((p) => NODES.includes(p.spec?.nodeName ?? ''))).toBe(true);
  }, 120_000);

  it('version 2 (40 s to start, liveness only) gets stuck: ProgressDeadlineExceeded, restarts, the old replicas kept', async () => {
    await apply('shop-v2.yaml');
    const stuck = await until('ProgressDeadlineExceeded', async () => {
      const s = await progressing();
      return s?.reason === 'ProgressDeadlineExceeded' ? s : undefined;
    }, (PROGRESS_DEADLINE_S + 60) * 1000, 1_000);
    expect(stuck.status).toBe('False');
    expect(stuck.available).toBe(REPLICAS);
    expect(await restartsOfV2(false)).toBeGreaterThan(0);
    const killed = (await ns.pods()).filter((p) => p.spec?.containers[0]?.image === 'example/shop:2.0');
    expect(killed.every((p) => p.status?.containerStatuses?.[0]?.ready !== true)).toBe(true);
  }, 200_000);

  it('version 2 with a startupProbe completes, without a restart', async () => {
    await apply('shop-v2-fixed.yaml');
    await until('the fixed version 2 available', async () => (complete(await progressing()) ? true : undefined), 240_000, 1_000);
    const pods = await ns.pods();
    expect(pods.filter((p) => p.spec?.containers[0]?.startupProbe !== undefined)).toHaveLength(REPLICAS);
    expect(await restartsOfV2(true)).toBe(0);
  }, 260_000);
});
