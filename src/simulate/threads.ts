/**
 * Simulated nodes on worker threads, so that a machine's cores share a big simulation:
 * the nodes are dealt out in runs (thread 0 the first ones, and so on), and each thread
 * (thread-main.ts) runs its own with `localNodes`, as this thread would. A thread is told
 * to advance and answers with what its nodes reported, then is told to finish and answers
 * with their results; nothing else crosses, so the output is the one of a single thread.
 */
import { Worker } from 'node:worker_threads';
import type { Pod } from '../api/types.js';
import { moduleEntry } from '../util/module-entry.js';
import type { Happening, NodeOptions, NodeSet } from './nodes.js';
import type { SimulationResult } from './simulation.js';

/**
 * Each thread's young generation (MB). A probe's garbage dies within the probe, but a
 * timer or status lives a probe period, and in a small nursery survives a collection or
 * two and is copied to the old generation; this size lets most of it die young (measured
 * at 1,000 pods: ≈ 10 % faster than V8's default, peak memory the same).
 */
const YOUNG_GENERATION_MB = 64;

/** What a thread is started with (`workerData`): its nodes' pods, the nodes numbered from `first`. */
export interface ThreadData {
  options: NodeOptions;
  first: number;
  groups: Pod[][];
}

/** What the main thread asks of a thread: one at a time, each answered before the next. */
export type ThreadRequest = { type: 'advance'; ms: number } | { type: 'finish' };

/** A thread's answer: what its nodes reported during the step, or their results. */
export type ThreadReply = { type: 'advanced'; reported: Happening[][] } | { type: 'finished'; results: SimulationResult[] };

/**
 * `groups` (a node's pods each) on `threads` worker threads. When one cannot be started
 * (no memory, a pod that cannot be copied to it), those already started are ended and
 * the error thrown.
 */
export function threadNodes(groups: readonly Pod[][], options: NodeOptions, threads: number): NodeSet {
  const entry = moduleEntry(import.meta.url, 'thread-main');
  const workers: NodeThread[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(workers.map((w) => w.worker.terminate()));
  };
  let first = 0;
  try {
    for (let t = 0; t < threads; t++) {
      // Runs as even as they go: the first `groups.length % threads` threads get one more.
      const count = Math.floor(groups.length / threads) + (t < groups.length % threads ? 1 : 0);
      const data: ThreadData = { options, first, groups: groups.slice(first, first + count) };
      const worker = new Worker(entry.file, {
        workerData: data,
        execArgv: entry.execArgv,
        resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
      });
      workers.push(nodeThread(worker));
      first += count;
    }
  } catch (error) {
    void close();
    throw error;
  }
  return {
    async advance(ms) {
      const replies = await Promise.all(workers.map((w) => w.ask({ type: 'advance', ms })));
      return replies.flatMap((r) => {
        if (r.type !== 'advanced') throw unexpected(r, 'advanced');
        return r.reported;
      });
    },
    async finish() {
      const replies = await Promise.all(workers.map((w) => w.ask({ type: 'finish' })));
      return replies.flatMap((r) => {
        if (r.type !== 'finished') throw unexpected(r, 'finished');
        return r.results;
      });
    },
    close,
  };
}

/** An answer of another kind than asked for: a broken thread, and the simulation's failure. */
function unexpected(reply: ThreadReply, wanted: ThreadReply['type']): Error {
  return new Error(`a simulation thread answered ${JSON.stringify(reply.type)} where ${JSON.stringify(wanted)} was due`);
}

interface NodeThread {
  worker: Worker;
  /** Sends `request`; resolves with the answer, rejects if the thread fails or exits first. */
  ask(request: ThreadRequest): Promise<ThreadReply>;
}

function nodeThread(worker: Worker): NodeThread {
  let waiting: { resolve: (reply: ThreadReply) => void; reject: (error: Error) => void } | undefined;
  let failure: Error | undefined;
  const fail = (error: unknown): void => {
    failure ??= error instanceof Error ? error : new Error(`a simulation thread failed: ${String(error)}`);
    waiting?.reject(failure);
    waiting = undefined;
  };
  worker.on('message', (reply: ThreadReply) => {
    waiting?.resolve(reply);
    waiting = undefined;
  });
  worker.on('messageerror', (error: Error) => fail(error));
  worker.on('error', (error: unknown) => fail(error));
  worker.on('exit', (code) => fail(new Error(`a simulation thread exited (code ${code}) before it answered`)));
  return {
    worker,
    ask(request) {
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        worker.postMessage(request);
      });
    },
  };
}
