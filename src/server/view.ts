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
}
