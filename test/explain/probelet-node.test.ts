/**
 * The same incidents on a `probelet node` as on the real kubelet: the probe causes (slow start
 * killed by liveness, startup probe too short, wrong port, wrong path, liveness timeouts, hang,
 * unhealthy) and a crash with a real exit code, created at once on the cluster's kubelet node
 * and on a `probelet node --runtime cri` (the built command, on the default containerd), each
 * pod pinned by `spec.nodeName` in a namespace per node. `explain` must name the same cause on
 * both, with the same numbers: those of the spec and the rules exactly (budgets, thresholds,
 * periods, suggested fixes, exit codes), those of the run's timing within a probe period
 * (the age at the kill) — the counts of kills and restarts depend on when each was read.
 *
 * The incidents and how they are read are incidents.ts's (the node is the seam). Skipped, with
 * the reason in the suite's name, without a cluster, root and containerd, or a built dist/;
 * under PROBELET_REQUIRE_CLUSTER=1 each of those fails instead.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Diagnosis } from '../../src/explain/diagnose.js';
import type { KubeClients } from '../../src/node/kube.js';
import { CRI_ENDPOINT, criUnavailable } from '../cri/helpers.js';
import { clusterClients, deleteNodeObjects, describeCluster, spawnAgent, stopAgent, testNamespace, until, type AgentChild } from '../node/helpers.js';
import { appDiagnosis, runIncidents, startIncidentServers, type IncidentPorts, type IncidentRun } from './incidents.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KUBELET_NODE = process.env.PROBELET_CLUSTER_NODE ?? 'probelet-kubelet';

/** Each incident and the cause both nodes must name. */
const EXPECTED: Record<string, string> = {
  'slow-start': 'slow-start-liveness',
  'startup-short': 'startup-probe-too-short',
  'wrong-port': 'probe-wrong-target',
  'wrong-path': 'probe-wrong-target',
  'liveness-timeout': 'liveness-timeout',
  hang: 'hang',
  unhealthy: 'liveness-unhealthy',
  crash: 'app-crash',
};

/** Numbers measured on the run (how many kills so far, how long a run lived): compared by {@link sameNumbers}'s rules, not exactly. */
const MEASURED = new Set(['kills', 'restarts', 'killAgeSeconds', 'ranSeconds', 'backOffSeconds', 'notFound']);

function unavailable(): string | undefined {
  const cri = criUnavailable();
  if (cri) return cri;
  if (!existsSync(join(ROOT, 'dist/cli/main.js'))) return 'dist/ is not built (npm run build)';
  return undefined;
}

/** The fix with each server's port named instead of numbered (each node has servers of its own) and the failure counts it quotes (`×6`) masked: those are measured. */
function portless(fix: Diagnosis['fix'], ports: IncidentPorts): string {
  let text = JSON.stringify(fix ?? null).replace(/×\d+/g, '×N');
  for (const [name, port] of Object.entries(ports)) text = text.replace(new RegExp(`\\b${port}\\b`, 'g'), `<${name}>`);
  return text;
}

describeCluster(
  'explain: the same incidents on a probelet node as on the real kubelet',
  () => {
    const suffix = randomBytes(3).toString('hex');
    const node = `explain-node-${suffix}`;
    const namespaces = { kubelet: `explain-kubelet-${suffix}`, probelet: `explain-probelet-${suffix}` };
    const kubeconfig = process.env.KUBECONFIG?.split(':')[0] ?? '';
    const agentTmp = mkdtempSync(join(tmpdir(), 'explain-node-agent-'));
    let clients: KubeClients;
    let agent: AgentChild | undefined;
    const closers: (() => void)[] = [];
    const runs: { kubelet?: IncidentRun; probelet?: IncidentRun } = {};
    const ports: { kubelet?: IncidentPorts; probelet?: IncidentPorts } = {};

    beforeAll(async () => {
      clients = clusterClients();
      // The admin identity, with a node name of the test's own (no other suite's `probelet-node`).
      agent = spawnAgent(['--kubeconfig', kubeconfig, '--name', node, '--runtime', 'cri', '--cri-endpoint', CRI_ENDPOINT, '--listen', '127.0.0.1:0'], agentTmp);
      await until(`node ${node} to register`, async () => (agent?.output().includes(`node ${node} registered`) ? true : undefined), 30_000).catch((err: unknown) => {
        throw new Error(`${String(err)}; its output:\n${agent?.output() ?? ''}`);
      });
      await Promise.all(
        (['kubelet', 'probelet'] as const).map(async (side) => {
          const ns = testNamespace(clients, namespaces[side]);
          await ns.create();
          await until('the default service account', async () => ((await clients.core.readNamespacedServiceAccount({ name: 'default', namespace: ns.name }).catch(() => undefined)) ? true : undefined), 60_000);
          const servers = await startIncidentServers();
          closers.push(servers.close);
          ports[side] = servers.ports;
          runs[side] = await runIncidents({ clients, kubeconfig, namespace: ns.name, node: side === 'kubelet' ? KUBELET_NODE : node, ports: servers.ports, names: Object.keys(EXPECTED) });
        }),
      );
    }, 240_000);

    afterAll(async () => {
      try {
        await stopAgent(agent, 'SIGTERM');
      } finally {
        for (const close of closers) close();
        runs.kubelet?.close();
        runs.probelet?.close();
        for (const name of Object.values(namespaces)) await clients?.core.deleteNamespace({ name }).catch(() => undefined);
        if (clients) await deleteNodeObjects(clients, node);
        rmSync(agentTmp, { recursive: true, force: true });
      }
    }, 90_000);

    function both(name: string): { kubelet: Diagnosis; probelet: Diagnosis; probeletOffline: Diagnosis; text: string } {
      if (!runs.kubelet || !runs.probelet) throw new Error('the incidents did not run');
      const k = appDiagnosis(runs.kubelet, name);
      const p = appDiagnosis(runs.probelet, name);
      return { kubelet: k.d, probelet: p.d, probeletOffline: p.offline, text: `kubelet: ${k.text}\nprobelet node: ${p.text}` };
    }

    /** The numbers of the spec and the rules exactly; the measured ones by what they measure. */
    function sameNumbers(kubelet: Diagnosis, probelet: Diagnosis, text: string): void {
      // The back-off is in the numbers only while the container waits in CrashLoopBackOff: when it was read.
      const keys = (n: Record<string, number>) => Object.keys(n).filter((k) => k !== 'backOffSeconds').sort();
      expect(keys(probelet.numbers), text).toEqual(keys(kubelet.numbers));
      const exact = (n: Record<string, number>) => Object.fromEntries(Object.entries(n).filter(([k]) => !MEASURED.has(k)));
      expect(exact(probelet.numbers), text).toEqual(exact(kubelet.numbers));
      for (const key of ['kills', 'restarts', 'notFound']) {
        if (kubelet.numbers[key] !== undefined) expect(probelet.numbers[key], `${key}\n${text}`).toBeGreaterThanOrEqual(1);
      }
      // A kill comes at a probe tick: the two nodes' ticks may fall a period apart, and the times are whole seconds.
      const period = kubelet.numbers['periodSeconds'] ?? 0;
      for (const key of ['killAgeSeconds', 'ranSeconds']) {
        const k = kubelet.numbers[key];
        const p = probelet.numbers[key];
        if (k !== undefined && p !== undefined) expect(Math.abs(p - k), `${key}: kubelet ${k}, probelet node ${p}\n${text}`).toBeLessThanOrEqual(period + 2);
      }
    }

    it.each(Object.entries(EXPECTED))('%s: the same cause (%s) and numbers on the probelet node as on the kubelet, live and offline', (name, cause) => {
      const { kubelet, probelet, probeletOffline, text } = both(name);
      expect(kubelet.cause, text).toBe(cause);
      expect(probelet.cause, text).toBe(cause);
      sameNumbers(kubelet, probelet, text);
      expect(portless(probelet.fix, ports.probelet ?? ({} as IncidentPorts)), text).toBe(portless(kubelet.fix, ports.kubelet ?? ({} as IncidentPorts)));
      expect(probeletOffline.cause).toBe(probelet.cause);
      expect(probeletOffline.numbers).toEqual(probelet.numbers);
    });
  },
  unavailable,
);
