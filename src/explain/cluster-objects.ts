/**
 * `check --cluster`'s object source: the workloads of a live cluster as the same
 * `ManifestObject`s the file loader hands `check` (its seam: `createChecker().add`), so the
 * same rules give the same findings with the same ids. Deployments, StatefulSets,
 * DaemonSets, ReplicaSets and Jobs without an owner (an owned one is its Deployment's or
 * CronJob's template again), CronJobs and bare Pods. Read-only: list, paged, each page the
 * API's JSON as sent (api-get.ts), never decoded into client-node's models.
 *
 * A namespace (or a kind in it) the credentials may not list is one line in `notes`; the
 * rest goes on.
 */
import type { ManifestObject } from '../api/documents.js';
import type { Pod } from '../api/types.js';
import { errorMessage, httpStatus } from '../node/kube.js';
import { sourceError, SourceError, type ReadClients } from './source.js';

export interface ClusterScope {
  /** One namespace, or undefined with `allNamespaces`. */
  namespace?: string;
  allNamespaces: boolean;
  labelSelector?: string;
}

interface Page {
  items?: Record<string, unknown>[];
  metadata?: { continue?: string };
}

interface Kind {
  kind: string;
  apiVersion: string;
  plural: string;
  /** Kept only without a controller owner (ReplicaSets, Jobs, Pods). */
  ownerless: boolean;
}

/** Objects a page: the API server's answer stays a few MB, and few round trips are made. */
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

/** The kinds listed, in this order; ReplicaSets, Jobs and Pods only without a controller. */
const KINDS: readonly Kind[] = (['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob', 'Pod'] as const).map((kind) => ({
  kind,
  ...(WORKLOAD_API[kind] ?? { apiVersion: 'v1', plural: '' }),
  ownerless: kind === 'ReplicaSet' || kind === 'Job' || kind === 'Pod',
}));

/** The list's path: `/apis/apps/v1[/namespaces/NS]/deployments` (the core group under `/api/v1`). */
function listPath(k: Kind, namespace?: string): string {
  const group = k.apiVersion.includes('/') ? `/apis/${k.apiVersion}` : `/api/${k.apiVersion}`;
  return `${group}${namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`}/${k.plural}`;
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

/**
 * Every object of a list, page by page, as the API server sent it (see api-get.ts). A server
 * that hands back the token it was given would page forever: that is an error, not a loop.
 */
async function listAll(clients: ReadClients, path: string, labelSelector: string | undefined, each: (raw: Record<string, unknown>) => void): Promise<void> {
  let token: string | undefined;
  do {
    const page = (await clients.get(path, { labelSelector, limit: String(PAGE), continue: token })) as Page;
    for (const item of page.items ?? []) each(item);
    const next = page.metadata?.continue;
    if (next && next === token) throw new SourceError(`GET ${path}: the API server gave the same continue token again; listing it would never end`);
    token = next;
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
  const selector = scope.labelSelector || undefined;
  const take = (k: Kind) => (raw: Record<string, unknown>) => {
    // Every pod passes here (owned ones too): those whose containers restarted may have live evidence.
    if (k.kind === 'Pod' && restarted !== undefined && restartedContainers(raw)) restarted({ apiVersion: 'v1', kind: 'Pod', ...raw } as Pod);
    if (k.ownerless && hasController(raw)) return;
    objects++;
    add(clusterObject(k, raw));
  };
  let namespaces: string[] | undefined = scope.allNamespaces ? undefined : [scope.namespace ?? 'default'];
  for (const k of KINDS) {
    if (namespaces === undefined) {
      try {
        await listAll(clients, listPath(k), selector, take(k));
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
        await listAll(clients, listPath(k, namespace), selector, take(k));
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
    const names: string[] = [];
    await listAll(clients, '/api/v1/namespaces', undefined, (n) => {
      const name = (n['metadata'] as { name?: string } | undefined)?.name ?? '';
      if (name !== '') names.push(name);
    });
    return names;
  } catch (err) {
    throw sourceError(err, 'namespaces', clients.server);
  }
}
