/**
 * The kubelet's event broadcaster to the API (client-go's `recordToSink`): the recorder's
 * correlator has already folded repeats (count, lastTimestamp); a new Event is created, a
 * repeat patches the stored one's `count`, `lastTimestamp` and `message`, as client-go does.
 * Writes of one Event are kept in order; the queue is bounded (client-go's broadcaster drops
 * too when its channel is full), and a failed write is logged, never retried in a loop.
 */
import type { CoreV1Event } from '@kubernetes/client-node';
import type { Event } from '../api/types.js';
import { errorMessage, httpStatus, strategicMergePatch, type KubeClients } from './kube.js';

/** client-go's `maxQueuedEvents`. */
export const MAX_QUEUED_EVENTS = 1000;

/** The events every container start records (`Pulled` of a present image, `Created`, `Started`). */
const ROUTINE_START_REASONS: ReadonlySet<string> = new Set(['Pulled', 'Created', 'Started']);

/**
 * A container start's routine event, which `--lean-writes` keeps out of the API (a fleet's
 * pods would otherwise write three a pod): Normal, reason `Pulled`, `Created` or `Started`.
 * Warnings (`Unhealthy`, `BackOff`, `Failed`) and `Killing` still go.
 */
export function isRoutineStartEvent(event: Event): boolean {
  return event.type === 'Normal' && ROUTINE_START_REASONS.has(event.reason ?? '');
}

export interface EventSink {
  /** A new or re-counted Event from the recorder. */
  offer(event: Event): void;
  /** Resolves once every Event offered so far is written (or given up). */
  flush(): Promise<void>;
  readonly writes: number;
}

export function createEventSink(clients: KubeClients, log: (line: string) => void): EventSink {
  /** Per Event name, the newest snapshot waiting to be written; Map order is arrival order. */
  const queued = new Map<string, Event>();
  /** Names whose create has succeeded: their repeats are patches. */
  const created = new Set<string>();
  let writes = 0;
  let running: Promise<void> | undefined;
  let dropped = 0;

  async function write(e: Event): Promise<void> {
    const name = e.metadata.name ?? '';
    const namespace = e.metadata.namespace ?? 'default';
    writes++;
    if (!created.has(name)) {
      try {
        await clients.events.createNamespacedEvent({ namespace, body: e as unknown as CoreV1Event });
        created.add(name);
        return;
      } catch (err) {
        if (httpStatus(err) !== 409) throw err;
        created.add(name);
      }
    }
    try {
      const body = { count: e.count, lastTimestamp: e.lastTimestamp, message: e.message };
      await clients.events.patchNamespacedEvent({ name, namespace, body }, strategicMergePatch);
    } catch (err) {
      // Expired (events live an hour) or removed: create it anew, as client-go does.
      if (httpStatus(err) !== 404) throw err;
      created.delete(name);
      await clients.events.createNamespacedEvent({ namespace, body: e as unknown as CoreV1Event });
      created.add(name);
    }
  }

  async function drain(): Promise<void> {
    for (let next = first(); next !== undefined; next = first()) {
      queued.delete(next.metadata.name ?? '');
      try {
        await write(next);
      } catch (err) {
        log(`event ${next.reason ?? ''} for ${next.involvedObject.namespace ?? ''}/${next.involvedObject.name ?? ''}: writing it failed: ${errorMessage(err)}`);
      }
    }
  }

  function first(): Event | undefined {
    for (const e of queued.values()) return e;
    return undefined;
  }

  function kick(): Promise<void> {
    running ??= drain().finally(() => {
      running = undefined;
    });
    return running;
  }

  // `created` only needs names that may still repeat: bounded like the recorder's own cache.
  function remember(): void {
    if (created.size <= 4 * MAX_QUEUED_EVENTS) return;
    for (const name of created) {
      created.delete(name);
      if (created.size <= 2 * MAX_QUEUED_EVENTS) break;
    }
  }

  return {
    offer(event) {
      const name = event.metadata.name ?? '';
      if (!queued.has(name) && queued.size >= MAX_QUEUED_EVENTS) {
        if (dropped++ === 0) log(`events: more than ${MAX_QUEUED_EVENTS} waiting to be written; dropping the newest (the API server is slow or unreachable)`);
        return;
      }
      if (queued.size === 0) dropped = 0;
      queued.set(name, event);
      remember();
      void kick();
    },
    async flush() {
      while (running) await running;
    },
    get writes() {
      return writes;
    },
  };
}
