/**
 * explain's "crashed by itself" carries the previous run's last log lines, read live through the
 * API (`pods/log?previous=true`), which the API server fetches from the kubelet at the node's
 * InternalIP: the kubelet of `cluster:up` serves there, with a certificate naming it
 * (cluster/up.sh). The crashed-once incident of incidents.ts on the real kubelet (exit 3, then
 * running): `kubectl logs --previous` and `explain` must both show what the app wrote before
 * it exited 3.
 *
 * Skipped without a cluster (the reason in the suite's name); failing instead under
 * PROBELET_REQUIRE_CLUSTER=1.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KubeClients } from '../../src/node/kube.js';
import { clusterClients, describeCluster, testNamespace, until } from '../node/helpers.js';
import { appDiagnosis, runIncidents, startIncidentServers, type IncidentRun } from './incidents.js';

const NODE = process.env.PROBELET_CLUSTER_NODE ?? 'probelet-kubelet';

describeCluster('explain: the previous run\'s log lines through the API, from the real kubelet', () => {
  const namespace = `explain-logs-${randomBytes(3).toString('hex')}`;
  const kubeconfig = process.env.KUBECONFIG?.split(':')[0] ?? '';
  let clients: KubeClients;
  let ns: ReturnType<typeof testNamespace> | undefined;
  let run: IncidentRun | undefined;
  let closeServers = (): void => undefined;

  beforeAll(async () => {
    clients = clusterClients();
    ns = testNamespace(clients, namespace);
    await ns.create();
    await until('the default service account', async () => ((await clients.core.readNamespacedServiceAccount({ name: 'default', namespace }).catch(() => undefined)) ? true : undefined), 60_000);
    const servers = await startIncidentServers();
    closeServers = servers.close;
    run = await runIncidents({ clients, kubeconfig, namespace, node: NODE, ports: servers.ports, names: ['crashed-once'] });
  }, 200_000);

  afterAll(async () => {
    closeServers();
    run?.close();
    await ns?.delete();
  }, 60_000);

  it('kubectl logs --previous reaches the kubelet through the API server', async () => {
    const log = String(await clients.core.readNamespacedPodLog({ name: 'crashed-once', namespace, container: 'app', previous: true }));
    // stdout and stderr are two pipes: their lines may come in either order.
    expect(log.split('\n').sort()).toEqual(['', 'fatal: no config at /etc/app.conf', 'starting']);
  });

  it('explain: not the probes, exit code 3, and the last lines of the run before', () => {
    if (run === undefined) throw new Error('the incident did not run');
    const { d, offline, text } = appDiagnosis(run, 'crashed-once');
    expect(d.cause, text).toBe('app-crash');
    expect(d.numbers['exitCode']).toBe(3);
    const logs = d.evidence.find((e) => e.from === 'logs');
    expect(logs, text).toMatchObject({ confidence: 'certain', from: 'logs' });
    expect(logs?.text.split('\n').sort()).toEqual(['    | fatal: no config at /etc/app.conf', '    | starting', 'last lines of its log:']);
    // Offline there is no API to ask: the same cause, without the log.
    expect(offline.cause).toBe('app-crash');
    expect(offline.evidence.some((e) => e.from === 'logs')).toBe(false);
  });
});
