import { Counter, Histogram, type Registry } from 'prom-client';
import type { Pod } from '../api/types.js';
import { probeTypeName, type ProbeType, type Result } from './types.js';

const PROBE_TOTAL = 'prober_probe_total';
const PROBE_DURATION = 'prober_probe_duration_seconds';

type TotalLabel = 'probe_type' | 'result' | 'container' | 'pod' | 'namespace' | 'pod_uid';
type DurationLabel = 'probe_type' | 'container' | 'pod' | 'namespace';

/** The `result` label values, as the kubelet spells them. */
const RESULT_LABEL: Record<Result, 'successful' | 'failed' | 'unknown'> = {
  success: 'successful',
  failure: 'failed',
  unknown: 'unknown',
};

/**
 * The kubelet's `/metrics/probes` families, bound to one registry. Each manager gets its
 * own registry by default so that two managers in one process never mix their series.
 */
export class ProberMetrics {
  readonly probeTotal: Counter<TotalLabel>;
  readonly probeDuration: Histogram<DurationLabel>;

  constructor(registry: Registry) {
    // A registry shared with another manager already holds the families; reuse them
    // instead of failing on the duplicate name.
    const total = registry.getSingleMetric(PROBE_TOTAL);
    this.probeTotal =
      total instanceof Counter
        ? (total as Counter<TotalLabel>)
        : new Counter({
            name: PROBE_TOTAL,
            help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
            labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'],
            registers: [registry],
          });
    const duration = registry.getSingleMetric(PROBE_DURATION);
    this.probeDuration =
      duration instanceof Histogram
        ? (duration as Histogram<DurationLabel>)
        : new Histogram({
            name: PROBE_DURATION,
            help: 'Duration in seconds for a probe response.',
            labelNames: ['probe_type', 'container', 'pod', 'namespace'],
            registers: [registry],
          });
  }

  /** The label sets of one worker, computed once as upstream does at worker construction. */
  seriesFor(probeType: ProbeType, pod: Pod, containerName: string): WorkerSeries {
    return new WorkerSeries(this, probeType, pod, containerName);
  }
}

/** One worker's series: what it increments while it lives and deletes when it exits. */
export class WorkerSeries {
  private readonly durationLabels: Record<DurationLabel, string>;
  private readonly totalLabels: Record<Result, Record<TotalLabel, string>>;

  constructor(
    private readonly metrics: ProberMetrics,
    probeType: ProbeType,
    pod: Pod,
    containerName: string,
  ) {
    this.durationLabels = {
      probe_type: probeTypeName(probeType),
      container: containerName,
      pod: pod.metadata?.name ?? '',
      namespace: pod.metadata?.namespace ?? '',
    };
    const uid = pod.metadata?.uid ?? '';
    // Declared order, so the exposition text reads like the kubelet's.
    const total = (result: Result): Record<TotalLabel, string> => ({
      probe_type: this.durationLabels.probe_type,
      result: RESULT_LABEL[result],
      container: this.durationLabels.container,
      pod: this.durationLabels.pod,
      namespace: this.durationLabels.namespace,
      pod_uid: uid,
    });
    this.totalLabels = { success: total('success'), failure: total('failure'), unknown: total('unknown') };
  }

  /** Counts one verdict; the duration is observed for success and unknown only, as upstream. */
  record(result: Result, durationSeconds: number): void {
    this.metrics.probeTotal.inc(this.totalLabels[result]);
    if (result !== 'failure') this.metrics.probeDuration.observe(this.durationLabels, durationSeconds);
  }

  /** Deletes every series of this worker so a re-created worker starts its counters at zero. */
  remove(): void {
    for (const labels of Object.values(this.totalLabels)) this.metrics.probeTotal.remove(labels);
    this.metrics.probeDuration.remove(this.durationLabels);
  }
}
