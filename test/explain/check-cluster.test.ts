/**
 * `check --cluster` on a real control plane gives the findings `check` gives on the files the
 * workloads were created from: the realistic manifests of test/fixtures (cert-manager, an
 * ingress controller, a Helm-rendered app, a CronJob, a DaemonSet, StatefulSets, a gRPC pod),
 * created in a namespace of this file's own as the API server stores them (defaulted) — held
 * still so nothing runs (replicas 0, suspended, a DaemonSet and a Pod aimed at no node) — and
 * listed back. Same rule, container, field and message for each finding.
 */
import { randomBytes } from 'node:crypto';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadManifests, type ManifestObject } from '../../src/api/documents.js';
import { checkManifests } from '../../src/check/run.js';
import type { Finding } from '../../src/check/types.js';
import { runCheck, type CheckFlags } from '../../src/cli/check/check.js';
import type { KubeClients } from '../../src/node/kube.js';
import { clusterClients, describeCluster, testNamespace, until } from '../node/helpers.js';

const FILES = [
  'test/fixtures/real-world/cert-manager.yaml',
  'test/fixtures/real-world/cronjob-backup.yaml',
  'test/fixtures/real-world/daemonset-agent.yaml',
  'test/fixtures/real-world/helm-rendered-app.yaml',
  'test/fixtures/real-world/ingress-controller.yaml',
  'test/fixtures/real-world/prometheus-statefulset.yaml',
  'test/fixtures/real-world/grpc-pod.json',
  'test/fixtures/corpus/mysql-statefulset.yaml',
];

/** The object, in `namespace`, changed only so that nothing of it runs. */
function held(o: ManifestObject, namespace: string): Record<string, unknown> {
  const value = structuredClone(o.value) as { metadata?: Record<string, unknown>; spec?: Record<string, unknown> };
  value.metadata = { ...value.metadata, namespace };
  delete value.metadata['resourceVersion'];
  delete value.metadata['uid'];
  const spec = (value.spec ??= {});
  if (['Deployment', 'StatefulSet', 'ReplicaSet'].includes(o.kind)) spec['replicas'] = 0;
  if (o.kind === 'CronJob' || o.kind === 'Job') spec['suspend'] = true;
  if (o.kind === 'DaemonSet') {
    const template = spec['template'] as { spec: Record<string, unknown> };
    template.spec['nodeSelector'] = { 'probelet.dev/explain-test': 'nowhere' };
  }
  // A saved pod of a ReplicaSet that is not here: bare (check --cluster lists owned pods under their
  // workload, and the garbage collector would delete an orphan).
  if (o.kind === 'Pod') {
    spec['nodeName'] = 'probelet-explain-nowhere';
    delete value.metadata['ownerReferences'];
  }
  return value;
}

const key = (f: Finding): string => JSON.stringify([f.object.kind, f.object.name, f.container ?? null, f.rule, f.severity, f.field, f.message]);

describeCluster('check --cluster against check on the same files', () => {
  const namespace = `explain-check-${randomBytes(3).toString('hex')}`;
  let clients: KubeClients;
  let ns: ReturnType<typeof testNamespace>;
  const created: ManifestObject[] = [];
  const refused: string[] = [];

  beforeAll(async () => {
    clients = clusterClients();
    ns = testNamespace(clients, namespace);
    await ns.create();
    await until('the default service account', async () => ((await clients.core.readNamespacedServiceAccount({ name: 'default', namespace }).catch(() => undefined)) ? true : undefined), 60_000);
    const load = await loadManifests(FILES);
    const api = KubernetesObjectApi.makeApiClient(clients.config);
    for (const o of load.objects) {
      try {
        await api.create(held(o, namespace) as KubernetesObject);
        created.push(o);
      } catch (err) {
        // The API server refuses what its validation refuses: that object is left out of both sides.
        refused.push(`${o.kind}/${o.name}: ${String(err).slice(0, 200)}`);
      }
    }
  }, 120_000);

  afterAll(async () => {
    await ns?.delete();
  }, 60_000);

  it('same findings, same ids, from the API objects as from the files', async () => {
    expect(created.length, refused.join('\n')).toBeGreaterThanOrEqual(8);
    const fromFiles = checkManifests({ objects: created, problems: [], skipped: [] }, { startupTimes: new Map() }).findings;
    let out = '';
    let err = '';
    const flags: CheckFlags = { output: 'json', failOn: 'never', startupTime: [], disable: [], cluster: true, namespace, kubeconfig: process.env.KUBECONFIG?.split(':')[0] ?? '' };
    const code = await runCheck([], flags, { stdout: (s) => void (out += s), stderr: (s) => void (err += s) });
    expect(code, err).toBe(0);
    const fromCluster = (JSON.parse(out) as { findings: Finding[] }).findings;
    expect(fromCluster.map(key).sort()).toEqual(fromFiles.map(key).sort());
    expect(fromCluster.length).toBeGreaterThan(5);
    expect(fromCluster[0]?.file).toMatch(new RegExp(`^${namespace}/`));
  });
});

