/**
 * The node's source of pods (the kubelet's API source, `pkg/kubelet/config/apiserver.go`: a
 * reflector on pods with `spec.nodeName=<node>`): list, then watch from the list's
 * resourceVersion; a dropped watch resumes from the last version seen; `410 Gone` (that
 * version compacted away) or an error re-lists, and the list is reconciled against what the
 * node holds, so that an API server restart neither loses nor duplicates a pod.
 */
import type { Pod } from '../api/types.js';
import type { Clock } from '../util/clock.js';
import { errorMessage, httpStatus, plain, type KubeClients } from './kube.js';

export interface PodSourceHandlers {
  /** A pod bound to the node was added or changed (also for every pod of a re-list). */
  upsert(pod: Pod): void;
  /** A pod is gone from the API (deleted, or absent from a re-list). */
  remove(uid: string): void;
}

export interface PodSource {
  /** Resolves after the first list was delivered. */
  readonly synced: Promise<void>;
  close(): void;
}

export interface PodSourceOptions {
  clients: KubeClients;
  nodeName: string;
  clock: Clock;
  random: () => number;
  log: (line: string) => void;
  handlers: PodSourceHandlers;
}

/** The reflector's back-off after a failed list or watch: 800 ms doubling to 30 s. */
const BACKOFF_INITIAL_MS = 800;
const BACKOFF_MAX_MS = 30_000;
/** A reflector's watch asks the server to end it after 5–10 minutes (`minWatchTimeout` × (1 + random)). */
const MIN_WATCH_TIMEOUT_S = 300;
/** A watch that ends sooner than this without an error is treated as a failed one. */
const MIN_WATCH_LIFETIME_MS = 1_000;

interface WatchEvent {
  type?: string;
  object?: unknown;
}

/**
 * The pod without `metadata.managedFields` (server-side apply's bookkeeping: three quarters of
 * a pod's objects, 2 KB of its 5), which nothing on a node reads. A fleet keeps thousands of
 * pods; this is the part of each it does not need.
 */
export function withoutManagedFields(pod: Pod): Pod {
  if (pod.metadata?.managedFields === undefined) return pod;
  const { managedFields: _dropped, ...metadata } = pod.metadata;
  return { ...pod, metadata };
}

export function startPodSource(options: PodSourceOptions): PodSource {
  const { clients, nodeName, clock, random, log, handlers } = options;
  const fieldSelector = `spec.nodeName=${nodeName}`;
  /** What the node was told exists: uid → resourceVersion. */
  const known = new Map<string, string>();
  let resourceVersion: string | undefined;
  let closed = false;
  let abort: AbortController | undefined;
  let timer: unknown;
  let backoffMs = BACKOFF_INITIAL_MS;
  let resolveSynced: () => void = () => undefined;
  const synced = new Promise<void>((resolve) => (resolveSynced = resolve));

  function deliver(pod: Pod): void {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    known.set(uid, pod.metadata?.resourceVersion ?? '');
    handlers.upsert(withoutManagedFields(pod));
  }

  function forget(uid: string): void {
    if (!known.delete(uid)) return;
    handlers.remove(uid);
  }

  async function list(): Promise<void> {
    const result = await clients.core.listPodForAllNamespaces({ fieldSelector });
    const pods = plain<{ metadata?: { resourceVersion?: string }; items: Pod[] }>(result);
    const present = new Set<string>();
    for (const pod of pods.items) {
      const uid = pod.metadata?.uid;
      if (!uid) continue;
      present.add(uid);
      if (known.get(uid) !== pod.metadata?.resourceVersion) deliver(pod);
    }
    for (const uid of [...known.keys()]) if (!present.has(uid)) forget(uid);
    resourceVersion = pods.metadata?.resourceVersion;
    backoffMs = BACKOFF_INITIAL_MS;
    resolveSynced();
  }

  function retryLater(what: string, err: unknown): void {
    if (closed) return;
    log(`node ${nodeName}: ${what} of pods failed: ${errorMessage(err)} (retrying in ${(backoffMs / 1000).toFixed(1)} s)`);
    schedule(backoffMs, relistAndWatch);
    backoffMs = Math.min(backoffMs * 2, BACKOFF_MAX_MS);
  }

  function schedule(ms: number, work: () => void): void {
    if (closed) return;
    clock.clearTimeout(timer);
    timer = clock.setTimeout(work, ms);
  }

  function relistAndWatch(): void {
    if (closed) return;
    list().then(watch, (err: unknown) => retryLater('the list', err));
  }

  function watch(): void {
    if (closed) return;
    let gone = false;
    let failed: unknown;
    const startedAt = clock.now();
    const onEvent = (type: string, object: unknown): void => {
      if (closed) return;
      const ev: WatchEvent = { type, object };
      if (ev.type === 'ERROR') {
        const code = (object as { code?: number } | null)?.code;
        if (code === 410) gone = true;
        else failed = new Error((object as { message?: string } | null)?.message ?? 'watch error');
        return;
      }
      const pod = object as Pod;
      const rv = pod.metadata?.resourceVersion;
      if (rv) resourceVersion = rv;
      if (ev.type === 'BOOKMARK') return;
      if (ev.type === 'DELETED') forget(pod.metadata?.uid ?? '');
      else if (ev.type === 'ADDED' || ev.type === 'MODIFIED') deliver(pod);
    };
    const onDone = (err: unknown): void => {
      abort = undefined;
      if (closed) return;
      if (gone || httpStatus(err) === 410) {
        // Our version was compacted away: only a new list can say what changed meanwhile.
        resourceVersion = undefined;
        schedule(0, relistAndWatch);
        return;
      }
      if (err || failed) {
        retryLater('the watch', err ?? failed);
        return;
      }
      // The server ended the watch (its timeout): resume from the last version seen; one that
      // ends at once (a server going away) waits like a failure, never a tight loop.
      if (clock.now() - startedAt < MIN_WATCH_LIFETIME_MS) {
        retryLater('the watch', new Error('the watch ended at once'));
        return;
      }
      schedule(0, watch);
    };
    const timeoutSeconds = Math.floor(MIN_WATCH_TIMEOUT_S * (1 + random()));
    clients.watch
      .watch('/api/v1/pods', { fieldSelector, resourceVersion, allowWatchBookmarks: true, timeoutSeconds }, onEvent, onDone)
      .then(
        (controller) => {
          if (closed) controller.abort();
          else abort = controller;
        },
        (err: unknown) => onDone(err),
      );
  }

  relistAndWatch();
  return {
    synced,
    close: () => {
      closed = true;
      clock.clearTimeout(timer);
      abort?.abort();
    },
  };
}
