import { Counter, Histogram, type Registry } from 'prom-client';
import type { Pod } from '../api/types.js';
import { probeTypeName, type ProbeType, type Result } from './types.js';

const PROBE_TOTAL = 'prober_probe_total';
const PROBE_DURATION = 'prober_probe_duration_seconds';

type TotalLabel = 'probe_type' | 'result' | 'container' | 'pod' | 'namespace' | 'pod_uid';
type DurationLabel = 'probe_type' | 'container' | 'pod' | 'namespace';

const TOTAL_LABELS: TotalLabel[] = ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'];
const DURATION_LABELS: DurationLabel[] = ['probe_type', 'container', 'pod', 'namespace'];

/** The `result` label values, as the kubelet spells them. */
const RESULT_LABEL: Record<Result, 'successful' | 'failed' | 'unknown'> = {
  success: 'successful',
  failure: 'failed',
  unknown: 'unknown',
};

/*
 * The per-probe fast path. prom-client's `inc(labels)` and `observe(labels, v)` validate
 * every label and build the series key from all of them at every call — most of what
 * recording a probe cost. A worker's labels never change, so after a series exists (made
 * by prom-client's own `inc`/`observe`, which validate once) the worker updates it in
 * place under its key, computed once: `value += 1`, or `sum += v; count += 1;
 * bucket += 1` — exactly what prom-client's own code does, so the registry, the exposition
 * text, `remove`, `reset` and series order are all prom-client's as before. When the
 * series is not there (first probe, removed, registry reset) the public call makes it.
 *
 * This relies on how prom-client 15 stores series (`hashMap` keyed like `hashObject`), so
 * it is checked once against prom-client itself (`FAST_PATH`); with any other layout every
 * record goes through the public calls, as it always did.
 */

interface CounterSeries {
  value: number;
}

interface HistogramSeries {
  sum: number;
  count: number;
  bucketValues: Record<string, number | undefined>;
}

/** prom-client's series of `metric` by key, if it has that layout. */
function seriesOf<T>(metric: object): Record<string, T | undefined> | undefined {
  const map: unknown = (metric as { hashMap?: unknown }).hashMap;
  return typeof map === 'object' && map !== null ? (map as Record<string, T | undefined>) : undefined;
}

/** The histogram's bucket upper bounds, ascending (prom-client's `upperBounds`). */
function upperBoundsOf(histogram: object): readonly number[] | undefined {
  const bounds: unknown = (histogram as { upperBounds?: unknown }).upperBounds;
  return Array.isArray(bounds) && bounds.every((b) => typeof b === 'number') ? (bounds as number[]) : undefined;
}

/**
 * prom-client's series key (`hashObject(labels, sortedLabelNames)`): `name:value,` per label,
 * by name. Joined, not concatenated: a worker keeps its keys for its whole life, and a string
 * built by `+=` stays a tree of ≈ 15 small strings per key (≈ 1 KB a worker, measured).
 */
function seriesKey(labels: Readonly<Record<string, string>>): string {
  const parts: string[] = [];
  for (const name of Object.keys(labels).sort()) parts.push(name, ':', labels[name] ?? '', ',');
  return parts.join('');
}

/**
 * Adds one observation to a histogram series in place, as prom-client's `observe` does.
 * `keys` are the bounds as property names (`String(bound)`, what indexing by the number
 * converts it to), made once: converting a double to a string at every probe was most of
 * the cost of recording it.
 */
function observeInPlace(series: HistogramSeries, bounds: readonly number[], keys: readonly string[], value: number): void {
  series.sum += value;
  series.count += 1;
  for (let i = 0; i < bounds.length; i++) {
    if (value <= (bounds[i] as number)) {
      const key = keys[i] as string;
      const count = series.bucketValues[key];
      if (count !== undefined && Object.hasOwn(series.bucketValues, key)) series.bucketValues[key] = count + 1;
      return;
    }
  }
}

/** Whether the fast path reproduces prom-client exactly; checked once on scratch metrics. */
function fastPathWorks(): boolean {
  try {
    const labels = { b: 'x,y:z', a: 'é"\\' };
    const counter = new Counter({ name: 'probelet_check_total', help: 'check', labelNames: ['b', 'a'], registers: [] });
    counter.inc(labels);
    const counted = seriesOf<CounterSeries>(counter)?.[seriesKey(labels)];
    if (counted?.value !== 1) return false;
    counted.value += 1;
    counter.inc(labels);
    if (seriesOf<CounterSeries>(counter)?.[seriesKey(labels)]?.value !== 3) return false;

    const histogram = new Histogram({ name: 'probelet_check', help: 'check', labelNames: ['b', 'a'], registers: [] });
    const bounds = upperBoundsOf(histogram);
    histogram.observe(labels, 0.3);
    const series = seriesOf<HistogramSeries>(histogram)?.[seriesKey(labels)];
    if (bounds === undefined || series === undefined) return false;
    const keys = bounds.map(String);
    observeInPlace(series, bounds, keys, 0.004);
    observeInPlace(series, bounds, keys, 11);
    histogram.observe(labels, 0.3);
    const expected = new Histogram({ name: 'probelet_check', help: 'check', labelNames: ['b', 'a'], registers: [] });
    for (const v of [0.3, 0.004, 11, 0.3]) expected.observe(labels, v);
    const want = seriesOf<HistogramSeries>(expected)?.[seriesKey(labels)];
    const got = seriesOf<HistogramSeries>(histogram)?.[seriesKey(labels)];
    return (
      want !== undefined &&
      got === series &&
      got.sum === want.sum &&
      got.count === want.count &&
      JSON.stringify(got.bucketValues) === JSON.stringify(want.bucketValues)
    );
  } catch {
    return false;
  }
}

const FAST_PATH = fastPathWorks();

/**
 * The kubelet's `/metrics/probes` families, bound to one registry. Each manager gets its
 * own registry by default so that two managers in one process never mix their series.
 */
export class ProberMetrics {
  readonly probeTotal: Counter<TotalLabel>;
  readonly probeDuration: Histogram<DurationLabel>;
  /** @internal The duration buckets, when the fast path is on (see `FAST_PATH`). */
  readonly durationBounds: readonly number[] | undefined;
  /** `durationBounds` as property names of a series' `bucketValues`. */
  readonly durationBoundKeys: readonly string[] = [];

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
            labelNames: TOTAL_LABELS,
            registers: [registry],
          });
    const duration = registry.getSingleMetric(PROBE_DURATION);
    this.probeDuration =
      duration instanceof Histogram
        ? (duration as Histogram<DurationLabel>)
        : new Histogram({
            name: PROBE_DURATION,
            help: 'Duration in seconds for a probe response.',
            labelNames: DURATION_LABELS,
            registers: [registry],
          });
    this.durationBounds = FAST_PATH ? upperBoundsOf(this.probeDuration) : undefined;
    if (this.durationBounds !== undefined) this.durationBoundKeys = this.durationBounds.map(String);
  }

  /** The label sets of one worker, computed once as upstream does at worker construction. */
  seriesFor(probeType: ProbeType, pod: Pod, containerName: string): WorkerSeries {
    return new WorkerSeries(this, probeType, pod, containerName);
  }
}

/**
 * One worker's series: what it increments while it lives and deletes when it exits. The
 * label values are taken at construction, as upstream does; the label objects and series
 * keys are made when first needed, so that an idle worker (its container not started yet)
 * costs as little memory as possible. prom-client's storage is looked up at every record,
 * never kept: `reset()` replaces it.
 */
export class WorkerSeries {
  private readonly probeType: string;
  private readonly podName: string;
  private readonly namespace: string;
  private readonly podUID: string;
  private durationLabels: Record<DurationLabel, string> | undefined;
  private durationKey: string | undefined;
  private totalLabels: Partial<Record<Result, Record<TotalLabel, string>>> | undefined;
  private totalKeys: Partial<Record<Result, string>> | undefined;

  constructor(
    private readonly metrics: ProberMetrics,
    probeType: ProbeType,
    pod: Pod,
    private readonly containerName: string,
  ) {
    this.probeType = probeTypeName(probeType);
    this.podName = pod.metadata?.name ?? '';
    this.namespace = pod.metadata?.namespace ?? '';
    this.podUID = pod.metadata?.uid ?? '';
  }

  /** Counts one verdict; the duration is observed for success and unknown only, as upstream. */
  record(result: Result, durationSeconds: number): void {
    this.count(result);
    if (result !== 'failure') this.observe(durationSeconds);
  }

  /** Deletes every series of this worker so a re-created worker starts its counters at zero. */
  remove(): void {
    for (const result of ['success', 'failure', 'unknown'] as const) {
      this.metrics.probeTotal.remove(this.totalLabelsFor(result));
    }
    this.metrics.probeDuration.remove(this.durationLabelsOf());
  }

  private count(result: Result): void {
    const key = this.totalKeys?.[result];
    if (key !== undefined) {
      const series = seriesOf<CounterSeries>(this.metrics.probeTotal)?.[key];
      if (series !== undefined) {
        series.value += 1;
        return;
      }
    }
    const labels = this.totalLabelsFor(result);
    this.metrics.probeTotal.inc(labels);
    if (FAST_PATH) (this.totalKeys ??= {})[result] = seriesKey(labels);
  }

  private observe(seconds: number): void {
    const key = this.durationKey;
    const bounds = this.metrics.durationBounds;
    // A non-finite duration goes to prom-client, which rejects it as before.
    if (key !== undefined && bounds !== undefined && Number.isFinite(seconds)) {
      const series = seriesOf<HistogramSeries>(this.metrics.probeDuration)?.[key];
      if (series !== undefined) {
        observeInPlace(series, bounds, this.metrics.durationBoundKeys, seconds);
        return;
      }
    }
    const labels = this.durationLabelsOf();
    this.metrics.probeDuration.observe(labels, seconds);
    if (FAST_PATH) this.durationKey = seriesKey(labels);
  }

  private durationLabelsOf(): Record<DurationLabel, string> {
    this.durationLabels ??= {
      probe_type: this.probeType,
      container: this.containerName,
      pod: this.podName,
      namespace: this.namespace,
    };
    return this.durationLabels;
  }

  private totalLabelsFor(result: Result): Record<TotalLabel, string> {
    this.totalLabels ??= {};
    // Declared order, so the exposition text reads like the kubelet's.
    this.totalLabels[result] ??= {
      probe_type: this.probeType,
      result: RESULT_LABEL[result],
      container: this.containerName,
      pod: this.podName,
      namespace: this.namespace,
      pod_uid: this.podUID,
    };
    return this.totalLabels[result];
  }
}
