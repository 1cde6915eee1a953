/**
 * Where explain's input comes from on a live cluster: the pod (or a workload's pods, by its
 * selector), its events (by the pod's UID) and, for a container that exited by itself, the
 * last lines of its previous run's log. Read-only: get and list, nothing else (the verbs of
 * examples/explain/clusterrole.yaml). Client-node's objects are made plain JSON at this
 * boundary, as in node/ (`plain`).
 */
import { SourceError } from './source-error.js';
import { AppsV1Api, BatchV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { Pod } from '../api/types.js';
import { errorMessage, httpStatus, plain } from '../node/kube.js';
import { apiGetter, type GetJson } from './api-get.js';
import { isKubeletLogNotice } from './kubelet-words.js';

/** What explain and check --cluster read through. */
export interface ReadClients {
  core: CoreV1Api;
  apps: AppsV1Api;
  batch: BatchV1Api;
  /** The API server's URL, for messages. */
  server: string;
  /** The namespace of the kubeconfig's current context (kubectl's default for -n). */
  namespace: string;
  /** A GET of the API's JSON as sent, undecoded (check --cluster's lists: api-get.ts). */
  get: GetJson;
  /** Ends the kept-alive connections of `get`. */
  close(): void;
}


/** Clients from a kubeconfig (a file, else `$KUBECONFIG` / `~/.kube/config`, as kubectl). */
export function readClients(path?: string): ReadClients {
  const config = new KubeConfig();
  try {
    if (path !== undefined) config.loadFromFile(path);
    else config.loadFromDefault();
  } catch (err) {
    throw new SourceError(`kubeconfig ${path ?? '(default)'}: ${errorMessage(err)} (give --kubeconfig FILE or set KUBECONFIG)`);
  }
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new SourceError(`kubeconfig ${path ?? '(default)'}: no current context with a cluster; set current-context (kubectl config use-context NAME)`);
  const context = config.getContextObject(config.getCurrentContext());
  const { get, close } = apiGetter(config, cluster.server);
  return {
    core: config.makeApiClient(CoreV1Api),
    apps: config.makeApiClient(AppsV1Api),
    batch: config.makeApiClient(BatchV1Api),
    server: cluster.server,
    namespace: context?.namespace ?? 'default',
    get,
    close,
  };
}

/** A failed call as a SourceError that says what to do: no such object, forbidden, or no API server. */
export function sourceError(err: unknown, what: string, server: string): SourceError {
  // Already says what went wrong and what to do (an answer over the size limit).
  if (err instanceof SourceError) return err;
  const status = httpStatus(err);
  if (status === 404) return new SourceError(`${what} not found (list what is there with kubectl get ${what.split('/')[0] ?? ''} -n NAMESPACE)`);
  if (status === 403) return new SourceError(`${what}: forbidden: ${errorMessage(err)} (grant the read-only ClusterRole of examples/explain/clusterrole.yaml)`);
  if (status === 401) return new SourceError(`${what}: unauthorized at ${server}: the kubeconfig's credentials were refused`);
  if (status !== undefined) return new SourceError(`${what}: ${errorMessage(err)}`);
  return new SourceError(`cannot reach the API server at ${server}: ${errorMessage(err)} (is the cluster up? check --kubeconfig or KUBECONFIG)`);
}

export interface LivePod {
  pod: Pod;
  events: unknown[];
}

/** A pod and every event about it (by UID, so an earlier pod of the same name is left out). */
export async function readPod(clients: ReadClients, namespace: string, name: string): Promise<LivePod> {
  let pod: Pod;
  try {
    pod = plain<Pod>(await clients.core.readNamespacedPod({ name, namespace }));
  } catch (err) {
    throw sourceError(err, `pod/${name} in namespace ${namespace}`, clients.server);
  }
  return { pod, events: await readEvents(clients, pod) };
}

export async function readEvents(clients: ReadClients, pod: Pod): Promise<unknown[]> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const uid = pod.metadata?.uid;
  const selector = uid ? `involvedObject.uid=${uid}` : `involvedObject.name=${pod.metadata?.name ?? ''}`;
  try {
    const list = await clients.core.listNamespacedEvent({ namespace, fieldSelector: selector });
    return plain<{ items?: unknown[] }>(list).items ?? [];
  } catch (err) {
    throw sourceError(err, `events of pod/${pod.metadata?.name ?? ''}`, clients.server);
  }
}

/** The last `lines` lines of a container's previous run (`kubectl logs --previous`); empty when there is none. */
export async function previousLogLines(clients: ReadClients, pod: Pod, container: string, lines = 5): Promise<string[]> {
  try {
    const text = String(await clients.core.readNamespacedPodLog({ name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? 'default', container, previous: true, tailLines: lines }));
    // The instance is gone (the kubelet keeps one dead instance): its notice is not the app's log.
    if (isKubeletLogNotice(text)) return [];
    return text.split('\n').filter((l) => l !== '').slice(-lines);
  } catch {
    // No previous run, or logs not reachable (the kubelet's port): the diagnosis stands without them.
    return [];
  }
}


interface Selectable {
  spec?: { selector?: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] } };
}

/** A label selector in the API's string form (`a=b,c in (d,e)`). */
export function selectorString(selector: NonNullable<Selectable['spec']>['selector']): string {
  const parts = Object.entries(selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector?.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

/** The pods of a workload, by its selector, oldest first; each with its events. */
export async function readWorkloadPods(clients: ReadClients, kind: string, namespace: string, name: string): Promise<LivePod[]> {
  const what = `${kind.toLowerCase()}/${name} in namespace ${namespace}`;
  let workload: Selectable;
  try {
    if (kind === 'Deployment') workload = plain(await clients.apps.readNamespacedDeployment({ name, namespace }));
    else if (kind === 'StatefulSet') workload = plain(await clients.apps.readNamespacedStatefulSet({ name, namespace }));
    else if (kind === 'DaemonSet') workload = plain(await clients.apps.readNamespacedDaemonSet({ name, namespace }));
    else if (kind === 'ReplicaSet') workload = plain(await clients.apps.readNamespacedReplicaSet({ name, namespace }));
    else workload = plain(await clients.batch.readNamespacedJob({ name, namespace }));
  } catch (err) {
    throw sourceError(err, what, clients.server);
  }
  const labelSelector = selectorString(workload.spec?.selector);
  if (labelSelector === '') throw new SourceError(`${what} has no selector`);
  let pods: Pod[];
  try {
    pods = plain<{ items?: Pod[] }>(await clients.core.listNamespacedPod({ namespace, labelSelector })).items ?? [];
  } catch (err) {
    throw sourceError(err, `pods of ${what}`, clients.server);
  }
  pods.sort((a, b) => (a.metadata?.creationTimestamp ?? '').localeCompare(b.metadata?.creationTimestamp ?? '') || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  return Promise.all(pods.map(async (pod) => ({ pod, events: await readEvents(clients, pod) })));
}

export { SourceError } from './source-error.js';
export { WORKLOAD_KINDS, workloadKind } from './source-error.js';
