/**
 * A simulation of more pods than one node holds: one simulated node — a kubelet, runtime
 * and FakeClock of its own — per {@link MAX_PODS_PER_NODE} pods, as a cluster spreads
 * them. The nodes never meet (a pod's kubelet is its node's), so they run a step of
 * virtual time each in turn, here or on worker threads (threads.ts), and what they report
 * is handed on in virtual-time order: the output is the same for any step and any number
 * of threads.
 */
import type { Event, Pod } from '../api/types.js';
import type { RunningSimulation, SimulationOptions, SimulationResult } from './simulation.js';

/**
 * Pods one simulated node runs at most: the kubelet's default `maxPods`. More pods go to
 * further nodes in input order.
 */
export const MAX_PODS_PER_NODE = 110;

/**
 * How far (virtual) every node runs before the next step. A node at a time keeps the
 * memory being worked on to one node's: at 1,000 pods, one kubelet's probes touched all of
 * them in turn and every probe waited on memory, at half the speed of ten nodes of 100
 * pods each (measured). Large steps cost nothing in output order: it is sorted per step.
 */
export const NODE_STEP_MS = 60_000;

/** A status or an event one node reported, kept until the other nodes have caught up. */
export interface Happening {
  tMs: number;
  pod?: Pod;
  event?: Event;
}

/** The nodes of a simulation, moved on together. Everything by node, in node order. */
export interface NodeSet {
  /** Moves every node on by `ms`; what each reported meanwhile. */
  advance(ms: number): Promise<Happening[][]>;
  /** Ends every node's simulation (see `RunningSimulation.finish`). */
  finish(): Promise<SimulationResult[]>;
  /** Lets go of whatever the set holds (threads) when the simulation ends early; idempotent. */
  close(): Promise<void>;
}

/** What a node needs to start; `reportPods`/`reportEvents` stand for the callbacks, which stay with the caller. */
export interface NodeOptions extends Omit<SimulationOptions, 'forMs' | 'pods' | 'onPod' | 'onEvent' | 'threads'> {
  reportPods: boolean;
  reportEvents: boolean;
}

/** Starts one node's simulation: `startSimulation` (passed in, so that this file need not import it). */
export type StartNode = (options: Omit<SimulationOptions, 'forMs'>, node: number) => RunningSimulation;

/** The pods of each node, in input order. */
export function podsByNode(pods: readonly Pod[]): Pod[][] {
  const groups: Pod[][] = [];
  for (let i = 0; i < pods.length; i += MAX_PODS_PER_NODE) groups.push(pods.slice(i, i + MAX_PODS_PER_NODE));
  return groups;
}

/** The options every node shares, without what cannot leave this thread. */
export function nodeOptions(options: SimulationOptions): NodeOptions {
  const { pods: _pods, forMs: _forMs, onPod, onEvent, threads: _threads, ...rest } = options;
  return { ...rest, reportPods: onPod !== undefined, reportEvents: onEvent !== undefined };
}

/** Nodes `first`, `first + 1`, … in this thread, one `groups` entry each. */
export function localNodes(groups: readonly (readonly Pod[])[], options: NodeOptions, start: StartNode, first = 0): NodeSet {
  const { reportPods, reportEvents, ...shared } = options;
  const pending: Happening[][] = groups.map(() => []);
  const nodes = groups.map((pods, i) => {
    const queue = pending[i] as Happening[];
    return start(
      {
        ...shared,
        pods,
        ...(reportPods ? { onPod: (pod: Pod, tMs: number) => queue.push({ tMs, pod }) } : {}),
        ...(reportEvents ? { onEvent: (event: Event, tMs: number) => queue.push({ tMs, event }) } : {}),
      },
      first + i,
    );
  });
  return {
    async advance(ms) {
      for (const node of nodes) await node.advance(ms);
      return pending.map((queue) => queue.splice(0));
    },
    async finish() {
      const results: SimulationResult[] = [];
      for (const node of nodes) results.push(await node.finish());
      return results;
    },
    close: () => Promise.resolve(),
  };
}

/** Runs `nodes` for `forMs`, handing what they report to the callbacks in virtual-time order. */
export async function driveNodes(nodes: NodeSet, options: SimulationOptions): Promise<SimulationResult> {
  const { onPod, onEvent } = options;
  try {
    for (let done = 0; done < options.forMs; ) {
      const step = Math.min(NODE_STEP_MS, options.forMs - done);
      const reported = await nodes.advance(step);
      done += step;
      // Node by node, then a stable sort by time: ties keep node order, and each node's own.
      for (const h of reported.flat().sort((a, b) => a.tMs - b.tMs)) {
        if (h.pod) onPod?.(h.pod, h.tMs);
        if (h.event) onEvent?.(h.event, h.tMs);
      }
    }
    return mergeResults(await nodes.finish());
  } finally {
    await nodes.close();
  }
}

/** The nodes' results as one: pods in input order (nodes hold them in runs), probes summed. */
function mergeResults(results: readonly SimulationResult[]): SimulationResult {
  const merged: SimulationResult = {
    endMs: results[0]?.endMs ?? 0,
    pods: results.flatMap((r) => r.pods),
    probes: results.reduce((sum, r) => sum + r.probes, 0),
  };
  const timelines = results.flatMap((r) => (r.timeline ? [r.timeline] : []));
  if (timelines.length > 0) {
    merged.timeline = {
      pods: timelines.flatMap((tl) => tl.pods),
      // Each node's are least recently seen first; so are all of them (stable on ties).
      events: timelines.flatMap((tl) => tl.events).sort((a, b) => compareText(String(a.lastTimestamp ?? ''), String(b.lastTimestamp ?? ''))),
      probes: timelines.flatMap((tl) => tl.probes),
    };
  }
  return merged;
}

/** Code-unit order (serialized times sort as the instants they name). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
