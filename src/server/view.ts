import type { Event, Pod } from '../api/types.js';

/**
 * What the read-only API needs from a kubelet. An interface rather than the local kubelet
 * itself so the server can be tested (and embedded by library users) without running pods.
 */
export interface KubeletView {
  listPods(): Pod[];
  listEvents(filter?: { podName?: string }): Event[];
  /** The probe metrics registry rendered as Prometheus text (`/metrics/probes`). */
  probeMetrics(): Promise<string>;
  /**
   * The flight recorder's rings (`/probes`), as JSON-ready objects, newest attempts first.
   * The server passes them through untouched (it sits below the prober and does not know
   * their shape). Absent: `/probes` answers an empty list.
   */
  listProbes?(query: ProbeQuery): unknown[];
  /**
   * The same rings one at a time, each copied only when it is reached: what `/probes`
   * writes, so that an answer of many MiB is never whole in memory however many clients
   * ask for it. Absent: `/probes` writes {@link listProbes}.
   */
  eachProbeHistory?(query: ProbeQuery): Iterable<unknown>;
  /**
   * Live changes for the dashboard's stream (`/stream`); returns the unsubscribe. Absent:
   * a finished timeline (the stream sends its snapshot and nothing more).
   */
  watch?(listener: (change: ViewChange) => void): () => void;
}

/** `/probes?pod=&container=&type=&limit=`, checked. */
export interface ProbeQuery {
  pod?: string;
  container?: string;
  probeType?: 'liveness' | 'readiness' | 'startup';
  limit?: number;
}

/** One live change: a pod's new status, a new or re-counted event, a recorded probe attempt or transition. */
export type ViewChange =
  | { type: 'pod'; pod: Pod }
  | { type: 'event'; event: Event }
  | { type: 'probe'; entry: unknown };
