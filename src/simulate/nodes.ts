/**
 * A simulation of more pods than one node holds: one simulated node — a kubelet, runtime
 * and FakeClock of its own — per {@link MAX_PODS_PER_NODE} pods, as a cluster spreads
 * them. The nodes never meet (a pod's kubelet is its node's), so they run a step of
 * virtual time each in turn, here or on worker threads (threads.ts), and what they report
 * is handed on in virtual-time order: the output is the same for any step and any number
 * of threads.
 */
import { availableParallelism } from 'node:os';
import { probeTiming } from '../api/defaults.js';
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

/** The first node is `probelet-simulate` (its events' source), the next `probelet-simulate-2`, … */
export const SIMULATED_HOST = 'probelet-simulate';

/** Container IDs of node N are numbered from N × this (12 hex digits hold 256 nodes' worth). */
export const NODE_ID_SPAN = 2 ** 40;

/**
 * Worker threads at most, whatever the cores: each holds its own heap and code, so memory
 * grows with every thread (1,000 demo pods for 10 min, peak RSS: 285 MB in one thread,
 * 376 MB in two).
 */
const MAX_THREADS = 4;

/**
 * Probe ticks (probes × period count over the span) from which threads pay off. A thread
 * costs ≈ 0.1–0.2 s to start and warms its own JIT up; measured on 2 cores, 230 pods of
 * two probes for 1 h (0.25 M ticks) took 1.8 s in one thread and 2.0 s in two, 300 demo
 * pods for 20 min (1 M) 3.8 s and 3.5 s, 1,000 demo pods for 15 min (2.5 M) 10.7 s and 6.5 s.
 */
const TICKS_WORTH_A_THREAD = 1_000_000;

/** The node's name (its events' `source.host`). */
export function nodeName(node: number): string {
  return node === 0 ? SIMULATED_HOST : `${SIMULATED_HOST}-${node + 1}`;
}

/** Node 0 plays `--seed` itself (a simulation that fits one node is what it always was); the others a seed of their own. */
export function nodeSeed(seed: number, node: number): number {
  return (seed + Math.imul(node, 0x9e3779b9)) >>> 0;
}

/** A status or an event one node reported, kept until the other nodes have caught up. */
export type Happening = { tMs: number; clockMs: number; pod: Pod } | { tMs: number; clockMs: number; event: Event };

/** The nodes of a simulation, moved on together. Everything by node, in node order. */
export interface NodeSet {
  /** Moves every node on by `ms`; what each reported meanwhile. */
  advance(ms: number): Promise<Happening[][]>;
  /** Ends every node's simulation (see `RunningSimulation.finish`). */
  finish(): Promise<SimulationResult[]>;
  /** Lets go of whatever the set holds (threads), also when the simulation ends early; idempotent. */
  close(): Promise<void>;
}

/** What only the caller has: the span, the pods (dealt out per node), its callbacks and the thread count. */
type CallerOnly = 'forMs' | 'pods' | 'onPod' | 'onEvent' | 'threads';

/** What every node is started with; `reportPods`/`reportEvents` stand for the callbacks, which stay with the caller. */
export interface NodeOptions extends Omit<SimulationOptions, CallerOnly> {
  reportPods: boolean;
  reportEvents: boolean;
}

/** Starts one node's simulation: `startSimulation` (passed in, so that this file need not import it). */
export type StartNode = (options: Omit<SimulationOptions, 'forMs' | 'threads'>, node: number) => RunningSimulation;

/** How a simulation runs: the pods of each node, in input order, and the worker threads for them (1: none). */
export interface SimulationPlan {
  nodes: Pod[][];
  threads: number;
}

/**
 * The nodes and threads for `options`. `threads` when given is a maximum (a positive whole
 * number); otherwise one per core, at most {@link MAX_THREADS}, and none for a small
 * simulation. Never more threads than nodes.
 */
export function simulationPlan(options: SimulationOptions): SimulationPlan {
  const nodes: Pod[][] = [];
  for (let i = 0; i < options.pods.length; i += MAX_PODS_PER_NODE) nodes.push(options.pods.slice(i, i + MAX_PODS_PER_NODE));
  if (options.threads !== undefined && !(Number.isInteger(options.threads) && options.threads >= 1)) {
    throw new RangeError(`threads: expected a whole number of at least 1, got ${String(options.threads)}`);
  }
  const wanted = options.threads ?? (probeTicks(options.pods, options.forMs) >= TICKS_WORTH_A_THREAD ? Math.min(availableParallelism(), MAX_THREADS) : 1);
  return { nodes, threads: Math.max(1, Math.min(wanted, nodes.length)) };
}

/** How many times the pods' probes fall due in `forMs` (the work a simulation does, give or take). */
function probeTicks(pods: readonly Pod[], forMs: number): number {
  let perSecond = 0;
  for (const pod of pods) {
    for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
      for (const probe of [c.startupProbe, c.readinessProbe, c.livenessProbe]) if (probe) perSecond += 1 / probeTiming(probe).period;
    }
  }
  return (perSecond * forMs) / 1000;
}

/**
 * The work a simulation of `pods` over `forMs` does, in timer firings, give or take: every
 * probe falling due, plus each node's own loops (housekeeping every 2 s, pod syncs), counted
 * as one a second,
 * which run with no probe at all. What `probelet simulate` estimates before it starts.
 */
export function simulationWork(pods: readonly Pod[], forMs: number): number {
  const nodes = Math.max(1, Math.ceil(pods.length / MAX_PODS_PER_NODE));
  return probeTicks(pods, forMs) + (nodes * forMs) / 1000;
}

/** The options every node shares, without what cannot leave this thread. */
export function nodeOptions(options: SimulationOptions): NodeOptions {
  const { pods: _pods, forMs: _forMs, onPod, onEvent, threads: _threads, ...shared } = options;
  return { ...shared, reportPods: onPod !== undefined, reportEvents: onEvent !== undefined };
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
        ...(reportPods ? { onPod: (pod: Pod, tMs: number, clockMs: number) => queue.push({ tMs, clockMs, pod }) } : {}),
        ...(reportEvents ? { onEvent: (event: Event, tMs: number, clockMs: number) => queue.push({ tMs, clockMs, event }) } : {}),
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

/** Runs `nodes` for `forMs` (at least one step, so that a span of 0 still starts them), handing on what they report in virtual-time order. */
export async function driveNodes(nodes: NodeSet, options: SimulationOptions): Promise<SimulationResult> {
  try {
    let done = 0;
    do {
      const step = Math.min(NODE_STEP_MS, Math.max(0, options.forMs - done));
      const reported = await nodes.advance(step);
      done += step;
      // Node by node, then a stable sort by time: ties keep node order, and each node's own.
      for (const h of reported.flat().sort((a, b) => a.tMs - b.tMs)) handOn(h, options);
    } while (done < options.forMs);
    return mergeResults(await nodes.finish());
  } finally {
    await nodes.close();
  }
}

/**
 * One report to the caller, as a single node hands it on: a throwing `onEvent` is ignored
 * (the event recorder keeps a broken viewer from stopping its prober) and a throwing
 * `onPod` is the kubelet's process warning; neither stops the simulation.
 */
function handOn(h: Happening, options: SimulationOptions): void {
  if ('pod' in h) {
    try {
      options.onPod?.(h.pod, h.tMs, h.clockMs);
    } catch (err) {
      process.emitWarning(`pod status listener failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
    return;
  }
  try {
    options.onEvent?.(h.event, h.tMs, h.clockMs);
  } catch {
    // As the event recorder does: the viewer's problem.
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
      // Each node's are least recently seen first; so are all of them, to the second
      // (`lastTimestamp`'s precision), ties in node order.
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
