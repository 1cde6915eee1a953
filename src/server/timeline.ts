import type { Event, Pod } from '../api/types.js';
import type { KubeletView, ProbeQuery } from './view.js';

/**
 * A finished run, frozen: what a kubelet looked like at its end. `probes` are the flight
 * recorder's histories (`FlightRecorder.histories()` / `Kubelet.listProbes()`), passed
 * through as they are.
 */
export interface Timeline {
  pods: Pod[];
  events: Event[];
  probes: ReadonlyArray<ProbeHistoryLike>;
  /** `/metrics/probes` text, if kept. */
  metrics?: string;
}

/** What the server needs to filter a ring (the prober's `ProbeHistory` has these and more). */
export interface ProbeHistoryLike {
  pod: string;
  container: string;
  probeType: string;
  attempts: readonly unknown[];
}

/**
 * A read-only view of a finished timeline, for `startServer(timelineView(t), options)`:
 * the dashboard draws it whole, the stream sends it once and then nothing, `/probes`,
 * `/pods` and `/events` answer from it. Used by `probelet simulate … --ui`.
 */
export function timelineView(timeline: Timeline): KubeletView {
  return {
    listPods: () => timeline.pods,
    listEvents: (filter) =>
      filter?.podName === undefined ? timeline.events : timeline.events.filter((e) => e.involvedObject.name === filter.podName),
    probeMetrics: () => Promise.resolve(timeline.metrics ?? ''),
    listProbes: (query: ProbeQuery) =>
      timeline.probes
        .filter(
          (h) =>
            (query.pod === undefined || h.pod === query.pod) &&
            (query.container === undefined || h.container === query.container) &&
            (query.probeType === undefined || h.probeType === query.probeType),
        )
        .map((h) => (query.limit === undefined ? h : { ...h, attempts: h.attempts.slice(0, query.limit) })),
  };
}
