/**
 * One fleet held by 4 processes (`probelet node --runtime simulated --fleet F --shard I/4`):
 * 8 nodes, a Deployment of 40 pods pinned to them. Each process in turn is killed with
 * SIGKILL and started again: it leaves nothing running and nothing on disk, the next start
 * takes its nodes over (same names) and runs their pods anew, and at the end every pod is
 * the same object as before (none lost, none replaced), Ready, on its node, and run by
 * exactly one node of one process (each node's read-only `/pods`).
 *
 * The built command in child processes, with the admin kubeconfig of `cluster:env`; the
 * fleet's nodes carry a label of this run and the simulated taint, so only this suite's pods
 * land there; its nodes and namespace are removed after. Skipped without a cluster or a
 * built dist/ (failing instead under PROBELET_REQUIRE_CLUSTER=1).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppsV1Api, type V1Deployment } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { plain, type KubeClients } from '../../src/node/kube.js';
import { clusterClients, deleteNodeObjects, describeCluster, isReady, spawnAgent, stopAgent, testNamespace, until, type AgentChild } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SUFFIX = randomBytes(3).toString('hex');
const POOLS = [`fs${SUFFIX}a`, `fs${SUFFIX}b`];
const NODES = POOLS.flatMap((p) => [0, 1, 2, 3].map((i) => `${p}-${i}`));
const SHARDS = 4;
const REPLICAS = 40;
const LABEL = 'probelet.dev/fleet-test';

function unavailable(): string | undefined {
  return existsSync(join(ROOT, 'dist/cli/main.js')) ? undefined : 'dist/ is not built (npm run build)';
}

/** The agents' TMPDIR: what a killed agent leaves on disk would be found here. */
const AGENT_TMP = mkdtempSync(join(tmpdir(), 'probelet-fleet-shard-'));
const FILE_DIR = mkdtempSync(join(tmpdir(), 'probelet-fleet-file-'));
const FLEET_FILE = join(FILE_DIR, 'fleet.yaml');

describeCluster(
  'a fleet held by 4 processes (--shard I/4), each killed with SIGKILL and started again',
  () => {
    const namespace = `probelet-fleet-${SUFFIX}`;
    let clients: KubeClients;
    let ns: ReturnType<typeof testNamespace>;
    const agents: AgentChild[] = [];

    const start = (shard: number): AgentChild => {
      const kubeconfig = process.env.KUBECONFIG?.split(':')[0] ?? '';
      return spawnAgent(['--kubeconfig', kubeconfig, '--runtime', 'simulated', '--fleet', FLEET_FILE, '--shard', `${shard}/${SHARDS}`], AGENT_TMP);
    };
    const registered = (agent: AgentChild, count: number): Promise<true> =>
      until(`${count} nodes registered`, () => Promise.resolve((agent.output().match(/ registered with /g) ?? []).length >= count ? true : undefined), 90_000, 200);

    beforeAll(async () => {
      clients = clusterClients();
      ns = testNamespace(clients, namespace);
      await ns.create();
      writeFileSync(
        FLEET_FILE,
        `apiVersion: probelet.dev/v1alpha1
kind: Fleet
pools:
${POOLS.map((p) => `- {name: ${p}, count: 4, labels: {${LABEL}: "${SUFFIX}"}, pods: 20}`).join('\n')}
behaviours:
- match: {namespace: ${namespace}, labels: {app: sharded}, image: "example/*"}
  script: up
  probes: {readiness: "down:1s,up"}
`,
      );
      for (let i = 1; i <= SHARDS; i++) agents.push(start(i));
      await Promise.all(agents.map((a) => registered(a, 2)));
    }, 120_000);

    afterAll(async () => {
      try {
        await ns?.deleteDeployment('sharded', 60_000);
      } finally {
        await Promise.all(agents.map((a) => stopAgent(a, 'SIGTERM')));
        await ns?.delete();
        for (const name of NODES) await deleteNodeObjects(clients, name);
        rmSync(AGENT_TMP, { recursive: true, force: true });
        rmSync(FILE_DIR, { recursive: true, force: true });
      }
    }, 120_000);

    /** Pod UID → the nodes whose read-only `/pods` lists it running (port from the Node's daemonEndpoints). */
    async function runBy(): Promise<Map<string, string[]>> {
      const out = new Map<string, string[]>();
      for (const name of NODES) {
        const node = plain<{ status: { daemonEndpoints: { kubeletEndpoint: { Port: number } } } }>(await clients.core.readNode({ name }));
        const res = await fetch(`http://127.0.0.1:${node.status.daemonEndpoints.kubeletEndpoint.Port}/pods`);
        const list = (await res.json()) as { items: Pod[] };
        for (const p of list.items) if (p.status?.phase === 'Running') out.set(p.metadata?.uid ?? '', [...(out.get(p.metadata?.uid ?? '') ?? []), name]);
      }
      return out;
    }

    const startedAt = (p: Pod): number => Date.parse(p.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? '') || 0;

    it('every pod Ready exactly once on one node after each process was killed and started again', async () => {
      const deployment = {
        metadata: { name: 'sharded', namespace },
        spec: {
          replicas: REPLICAS,
          selector: { matchLabels: { app: 'sharded' } },
          template: {
            metadata: { labels: { app: 'sharded' } },
            spec: {
              nodeSelector: { [LABEL]: SUFFIX },
              tolerations: [{ key: 'probelet.dev/simulated', operator: 'Exists', effect: 'NoSchedule' }],
              terminationGracePeriodSeconds: 1,
              containers: [{ name: 'app', image: 'example/app:1', readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 1 } }],
            },
          },
        },
      } as V1Deployment;
      await clients.config.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace, body: deployment });
      const before = await until('40 pods Ready on the fleet', async () => {
        const ps = await ns.pods();
        return ps.length === REPLICAS && ps.every((p) => isReady(p) && NODES.includes(p.spec?.nodeName ?? '')) ? ps : undefined;
      }, 120_000);
      const uids = before.map((p) => p.metadata?.uid).sort();

      for (let i = 0; i < SHARDS; i++) {
        const killed = agents[i] as AgentChild;
        const pid = killed.child.pid ?? 0;
        const owned = NODES.filter((_, k) => k % SHARDS === i);
        await stopAgent(killed, 'SIGKILL');
        // Nothing keeps running unseen: the process is gone, no child of it is left, nothing on disk.
        expect(() => process.kill(pid, 0)).toThrow();
        expect(childrenOf(pid)).toEqual([]);
        expect(readdirSync(AGENT_TMP)).toEqual([]);
        const killedAt = Date.now();
        agents[i] = start(i + 1);
        await registered(agents[i] as AgentChild, owned.length);
        // Its nodes' pods run anew (a new instance, started after the kill) and are Ready again.
        await until(`the pods of ${owned.join(', ')} running anew and Ready`, async () => {
          const ps = (await ns.pods()).filter((p) => owned.includes(p.spec?.nodeName ?? ''));
          return ps.length > 0 && ps.every((p) => isReady(p) && startedAt(p) >= Math.floor(killedAt / 1000) * 1000) ? true : undefined;
        }, 90_000);
      }

      const after = await until('40 pods Ready', async () => {
        const ps = await ns.pods({ deleting: true });
        return ps.length === REPLICAS && ps.every(isReady) ? ps : undefined;
      }, 60_000);
      // None lost, none replaced: the same 40 objects.
      expect(after.map((p) => p.metadata?.uid).sort()).toEqual(uids);
      const running = await runBy();
      for (const p of after) expect(running.get(p.metadata?.uid ?? ''), p.metadata?.name).toEqual([p.spec?.nodeName]);
      expect(running.size).toBe(REPLICAS);
    }, 600_000);
  },
  unavailable,
);

/** Processes whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}
