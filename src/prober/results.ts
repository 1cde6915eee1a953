import type { Pod } from '../api/types.js';
import type { Result, ResultUpdate } from './types.js';

export type ResultListener = (update: ResultUpdate) => void;

export interface ResultsManagerOptions {
  /**
   * Called when a subscriber throws. A listener bug must not undo the cache write or
   * starve later listeners, yet must not vanish either: the default prints a process warning.
   */
  onListenerError?: (error: unknown) => void;
}

/**
 * The cache of one probe kind's results, keyed by container ID (the kubelet's
 * `results.Manager`). Workers write it; the kubelet's sync loop and the runtime read it
 * and react to its updates. Updates are emitted only when a value is new or changed,
 * so consumers see transitions, not every probe; removals are silent because a
 * vanished container needs no reaction.
 */
export class ResultsManager {
  private readonly cache = new Map<string, Result>();
  private listeners: ResultListener[] = [];
  /** Updates waiting to be dispatched; keeps delivery in order when a listener calls `set`. */
  private readonly outbox: ResultUpdate[] = [];
  private dispatching = false;
  private readonly onListenerError: (error: unknown) => void;

  constructor(options: ResultsManagerOptions = {}) {
    this.onListenerError = options.onListenerError ?? defaultListenerError;
  }

  get(containerID: string): Result | undefined {
    return this.cache.get(containerID);
  }

  /** Stores `result`; notifies subscribers (after the write) only if it is new or different. */
  set(containerID: string, result: Result, pod: Pod): void {
    if (this.cache.get(containerID) === result) return;
    this.cache.set(containerID, result);
    this.outbox.push({ containerID, result, podUID: pod.metadata?.uid ?? '' });
    this.dispatch();
  }

  /** Forgets a container's result without notifying anyone. */
  remove(containerID: string): void {
    this.cache.delete(containerID);
  }

  /** Number of cached results (leak checks). */
  get size(): number {
    return this.cache.size;
  }

  /** Number of live subscriptions, `updates()` iterators included (leak checks). */
  get subscriberCount(): number {
    return this.listeners.length;
  }

  /** Calls `listener` synchronously for every later update; returns the unsubscribe function. */
  subscribe(listener: ResultListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /**
   * An async iterator over the updates emitted from this call on. Each iterator buffers
   * independently; `return()` unsubscribes it and drops whatever it still held.
   */
  updates(): AsyncIterableIterator<ResultUpdate> {
    const queue: ResultUpdate[] = [];
    /** Callers of `next()` waiting for an update, oldest first. */
    const waiters: ((r: IteratorResult<ResultUpdate>) => void)[] = [];
    let done = false;
    const unsubscribe = this.subscribe((update) => {
      const resolve = waiters.shift();
      if (resolve) resolve({ value: update, done: false });
      else queue.push(update);
    });
    const finish = (): Promise<IteratorResult<ResultUpdate>> => {
      if (!done) {
        done = true;
        unsubscribe();
        queue.length = 0;
        for (const resolve of waiters.splice(0)) resolve({ value: undefined, done: true });
      }
      return Promise.resolve({ value: undefined, done: true });
    };
    const iterator: AsyncIterableIterator<ResultUpdate> = {
      next: () => {
        const head = queue.shift();
        if (head) return Promise.resolve({ value: head, done: false });
        if (done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          waiters.push(resolve);
        });
      },
      return: finish,
      throw: finish,
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  private dispatch(): void {
    if (this.dispatching) return;
    this.dispatching = true;
    try {
      for (let update = this.outbox.shift(); update; update = this.outbox.shift()) {
        for (const listener of this.listeners) {
          try {
            listener(update);
          } catch (error) {
            this.onListenerError(error);
          }
        }
      }
    } finally {
      this.dispatching = false;
    }
  }
}

function defaultListenerError(error: unknown): void {
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.emitWarning(`ResultsManager listener threw: ${detail}`);
}
