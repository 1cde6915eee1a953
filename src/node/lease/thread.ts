/**
 * The lease controllers of a `probelet node` fleet (several nodes in one process) on a worker
 * thread of their own (thread-main.ts), so that a Lease is renewed on time however busy the main thread is with
 * its pods. The kubelet renews from a goroutine of its own, which Go's scheduler runs beside a
 * busy prober; on one Node.js event loop, a fleet of 20,000 pods starting on a loaded machine
 * held every renewal back for minutes, past the node lifecycle controller's grace: all 500
 * nodes were tainted unreachable and their pods evicted (docs/node.md, 20,000 pods).
 *
 * What crosses: the kubeconfig (the thread makes its own heartbeat connections from it), a
 * start or stop per node, the thread's log lines, and each node's renewal count and longest
 * gap in shared memory — read at any time, never queued, so nothing grows while the main
 * thread is behind.
 */
import { Worker } from 'node:worker_threads';
import type { KubeConfig } from '@kubernetes/client-node';
import { moduleEntry } from '../../util/module-entry.js';
import type { LeaseController, LeaseHost } from './controller.js';

/** What the thread is started with (`workerData`). */
export interface LeaseThreadData {
  /** `KubeConfig.exportConfig()`: paths in it are absolute already. */
  kubeconfig: string;
  /** The nodes of the process: one slot each, and as many heartbeat connections as they need. */
  nodes: number;
  /** Per slot, two Int32s: renewals written, the longest gap between two (ms). */
  renewals: SharedArrayBuffer;
}

/** Main thread → lease thread. */
export type LeaseThreadRequest = { type: 'start'; slot: number; name: string; uid: string } | { type: 'stop'; slot: number };

/** Lease thread → main thread. */
export type LeaseThreadReply = { type: 'started'; slot: number } | { type: 'log'; line: string };

/**
 * The nodes of a process from which its Leases are renewed on the thread: a fleet. A single
 * node (at most its 110 pods) never holds its event loop for seconds, and the thread's own
 * V8 heap and client costs 45-65 MB of RSS (measured: 110-132 MB without, 154-196 MB with).
 */
export const LEASE_THREAD_MIN_NODES = 2;

/** The thread's young generation (MB): its garbage is a few renewals a second; a small nursery keeps its RSS down. */
const LEASE_THREAD_YOUNG_GENERATION_MB = 4;

/** The Int32s a slot takes in {@link LeaseThreadData.renewals}. */
export const SLOT_INTS = 2;

export interface LeaseThread extends LeaseHost {
  /** Stops every controller and the thread; renewal counts stay readable. */
  close(): Promise<void>;
}

/** Starts the thread for up to `nodes` nodes; `log` gets its lines (renewals that failed). */
export function startLeaseThread(config: KubeConfig, nodes: number, log: (line: string) => void): LeaseThread {
  const renewals = new SharedArrayBuffer(nodes * SLOT_INTS * Int32Array.BYTES_PER_ELEMENT);
  const counts = new Int32Array(renewals);
  const entry = moduleEntry(import.meta.url, 'thread-main');
  const data: LeaseThreadData = { kubeconfig: config.exportConfig(), nodes, renewals };
  const worker = new Worker(entry.file, { workerData: data, execArgv: entry.execArgv, resourceLimits: { maxYoungGenerationSizeMb: LEASE_THREAD_YOUNG_GENERATION_MB } });
  const waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  let failed: Error | undefined;
  let next = 0;
  worker.on('message', (reply: LeaseThreadReply) => {
    if (reply.type === 'log') log(reply.line);
    else if (reply.type === 'started') {
      waiting.get(reply.slot)?.resolve();
      waiting.delete(reply.slot);
    }
  });
  // A thread that fails leaves every Lease to expire: said at once, and any start waiting is refused.
  const fail = (err: Error): void => {
    failed ??= err;
    log(`the lease thread stopped: ${err.message}; the nodes' Leases are no longer renewed`);
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => {
    if (code !== 0 && failed === undefined) fail(new Error(`exit code ${code}`));
  });
  const post = (request: LeaseThreadRequest): void => worker.postMessage(request);
  return {
    start(name, uid) {
      if (failed) return Promise.reject(failed);
      if (next >= nodes) return Promise.reject(new Error(`node ${name}: the lease thread has slots for ${nodes} node(s)`));
      const slot = next++;
      const started = new Promise<void>((resolve, reject) => waiting.set(slot, { resolve, reject }));
      post({ type: 'start', slot, name, uid });
      return started.then(
        (): LeaseController => ({
          renewals: () => ({ count: Atomics.load(counts, slot * SLOT_INTS), longestGapMs: Atomics.load(counts, slot * SLOT_INTS + 1) }),
          close: () => {
            if (!failed) post({ type: 'stop', slot });
          },
        }),
      );
    },
    async close() {
      failed ??= new Error('closed');
      await worker.terminate();
    },
  };
}
