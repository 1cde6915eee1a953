/**
 * `check --cluster`'s object source: the workloads of a live cluster as the same
 * `ManifestObject`s the file loader hands `check` (its seam: `createChecker().add`), so the
 * same rules give the same findings with the same ids. Deployments, StatefulSets,
 * DaemonSets, ReplicaSets and Jobs without an owner (an owned one is its Deployment's or
 * CronJob's template again), CronJobs and bare Pods. Read-only: list, paged.
 *
 * A namespace (or a kind in it) the credentials may not list is one line in `notes`; the
 * rest goes on.
 */
import type { ManifestObject } from '../api/documents.js';
import type { Pod } from '../api/types.js';
import { errorMessage, httpStatus, plain } from '../node/kube.js';
import { sourceError, SourceError, type ReadClients } from './source.js';

export interface ClusterScope {
  /** One namespace, or undefined with `allNamespaces`. */
  namespace?: string;
  allNamespaces: boolean;
  labelSelector?: string;
}

interface Page {
  items?: Record<string, unknown>[];
  metadata?: { _continue?: string; continue?: string };
}

type Lister = (args: { namespace?: string; labelSelector?: string; limit: number; _continue?: string }) => Promise<unknown>;

interface Kind {
  kind: string;
  apiVersion: string;
  plural: string;
  all: Lister;
  namespaced: Lister;
  /** Kept only without a controller owner (ReplicaSets, Jobs, Pods). */
  ownerless: boolean;
}

const PAGE = 500;

/** Where each kind lives in the API: its group version and plural (an object's place is `NAMESPACE/PLURAL/NAME`). */
export const WORKLOAD_API: Readonly<Record<string, { apiVersion: string; plural: string }>> = {
  Deployment: { apiVersion: 'apps/v1', plural: 'deployments' },
  StatefulSet: { apiVersion: 'apps/v1', plural: 'statefulsets' },
  DaemonSet: { apiVersion: 'apps/v1', plural: 'daemonsets' },
  ReplicaSet: { apiVersion: 'apps/v1', plural: 'replicasets' },
  Job: { apiVersion: 'batch/v1', plural: 'jobs' },
  CronJob: { apiVersion: 'batch/v1', plural: 'cronjobs' },
  Pod: { apiVersion: 'v1', plural: 'pods' },
};

function kinds(c: ReadClients): Kind[] {
  const args = (a: Parameters<Lister>[0]) => ({ labelSelector: a.labelSelector, limit: a.limit, _continue: a._continue });
  const kind = (name: string, ownerless: boolean, all: Lister, namespaced: Lister): Kind => ({ kind: name, ...(WORKLOAD_API[name] ?? { apiVersion: 'v1', plural: '' }), ownerless, all, namespaced });
  return [
    kind('Deployment', false, (a) => c.apps.listDeploymentForAllNamespaces(args(a)), (a) => c.apps.listNamespacedDeployment({ namespace: a.namespace ?? '', ...args(a) })),
    kind('StatefulSet', false, (a) => c.apps.listStatefulSetForAllNamespaces(args(a)), (a) => c.apps.listNamespacedStatefulSet({ namespace: a.namespace ?? '', ...args(a) })),
    kind('DaemonSet', false, (a) => c.apps.listDaemonSetForAllNamespaces(args(a)), (a) => c.apps.listNamespacedDaemonSet({ namespace: a.namespace ?? '', ...args(a) })),
    kind('ReplicaSet', true, (a) => c.apps.listReplicaSetForAllNamespaces(args(a)), (a) => c.apps.listNamespacedReplicaSet({ namespace: a.namespace ?? '', ...args(a) })),
    kind('Job', true, (a) => c.batch.listJobForAllNamespaces(args(a)), (a) => c.batch.listNamespacedJob({ namespace: a.namespace ?? '', ...args(a) })),
    kind('CronJob', false, (a) => c.batch.listCronJobForAllNamespaces(args(a)), (a) => c.batch.listNamespacedCronJob({ namespace: a.namespace ?? '', ...args(a) })),
    kind('Pod', true, (a) => c.core.listPodForAllNamespaces(args(a)), (a) => c.core.listNamespacedPod({ namespace: a.namespace ?? '', ...args(a) })),
  ];
}

function hasController(value: Record<string, unknown>): boolean {
  const meta = value['metadata'] as { ownerReferences?: { controller?: boolean }[] } | undefined;
  return (meta?.ownerReferences ?? []).some((r) => r.controller === true);
}

/** An API object as check's loader would have given it: its place is the object's API path (there is no file). */
export function clusterObject(kind: Kind | { kind: string; apiVersion: string; plural: string }, raw: Record<string, unknown>): ManifestObject {
  const value: Record<string, unknown> = { apiVersion: kind.apiVersion, kind: kind.kind, ...raw };
  const meta = (value['metadata'] ?? {}) as { name?: string; namespace?: string };
  const name = meta.name ?? '';
  const namespace = meta.namespace ?? '';
  return {
    source: `${namespace}/${kind.plural}/${name}`,
    document: 1,
    line: 1,
    column: 1,
    apiVersion: kind.apiVersion,
    kind: kind.kind,
    name,
    namespace,
    value,
    position: () => ({ line: 1, column: 1 }),
  };
}

async function listAll(list: Lister, base: { namespace?: string; labelSelector?: string }, each: (raw: Record<string, unknown>) => void): Promise<void> {
  let token: string | undefined;
  do {
    const page = plain<Page>(await list({ ...base, limit: PAGE, ...(token ? { _continue: token } : {}) }));
    for (const item of page.items ?? []) each(item);
    token = page.metadata?._continue ?? page.metadata?.continue;
  } while (token);
}

/**
 * Hands every workload in scope to `add`, kind by kind; returns one line per namespace or kind
 * that could not be listed (Forbidden). An API server that cannot be reached is a SourceError.
 */
export async function listClusterWorkloads(
  clients: ReadClients,
  scope: ClusterScope,
  add: (object: ManifestObject) => void,
  restarted?: (pod: Pod) => void,
): Promise<{ notes: string[]; objects: number }> {
  const notes: string[] = [];
  let objects = 0;
  const selector = scope.labelSelector ? { labelSelector: scope.labelSelector } : {};
  const take = (k: Kind) => (raw: Record<string, unknown>) => {
    // Every pod passes here (owned ones too): those whose containers restarted may have live evidence.
    if (k.kind === 'Pod' && restarted !== undefined && restartedContainers(raw)) restarted({ apiVersion: 'v1', kind: 'Pod', ...raw } as Pod);
    if (k.ownerless && hasController(raw)) return;
    objects++;
    add(clusterObject(k, raw));
  };
  let namespaces: string[] | undefined = scope.allNamespaces ? undefined : [scope.namespace ?? 'default'];
  for (const k of kinds(clients)) {
    if (namespaces === undefined) {
      try {
        await listAll(k.all, selector, take(k));
        continue;
      } catch (err) {
        if (httpStatus(err) !== 403) throw sourceError(err, `${k.plural} in all namespaces`, clients.server);
        // Not allowed cluster-wide: namespace by namespace, as far as we may.
        namespaces = await listNamespaces(clients);
        notes.push(`cannot list ${k.plural} in all namespaces (forbidden); going namespace by namespace`);
      }
    }
    for (const namespace of namespaces) {
      try {
        await listAll(k.namespaced, { namespace, ...selector }, take(k));
      } catch (err) {
        if (httpStatus(err) === 403) notes.push(`namespace ${namespace}: forbidden to list ${k.plural} (${errorMessage(err).replace(/^403: /, '')}); the rest is checked`);
        else if (httpStatus(err) === 404 && !scope.allNamespaces) throw new SourceError(`namespace ${namespace} not found (kubectl get namespaces)`);
        else throw sourceError(err, `${k.plural} in namespace ${namespace}`, clients.server);
      }
    }
  }
  return { notes, objects };
}

function restartedContainers(raw: Record<string, unknown>): boolean {
  const status = raw['status'] as Pod['status'] | undefined;
  return [...(status?.containerStatuses ?? []), ...(status?.initContainerStatuses ?? [])].some((c) => c.restartCount > 0);
}

async function listNamespaces(clients: ReadClients): Promise<string[]> {
  try {
    const list = plain<{ items?: { metadata?: { name?: string } }[] }>(await clients.core.listNamespace());
    return (list.items ?? []).map((n) => n.metadata?.name ?? '').filter((n) => n !== '');
  } catch (err) {
    throw sourceError(err, 'namespaces', clients.server);
  }
}
