/**
 * The per-probe fast path of the probe metrics gives exactly what prom-client's own
 * `inc`/`observe`/`remove`/`reset` give: the same exposition text, byte for byte, series
 * order and floating-point sums included.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { ProberMetrics, type WorkerSeries } from '../../src/prober/metrics.js';
import type { ProbeType, Result } from '../../src/prober/types.js';

const RESULT_LABEL = { success: 'successful', failure: 'failed', unknown: 'unknown' } as const;
const KIND = { liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup' } as const;

function reference(registry: Registry) {
  const total = new Counter({
    name: 'prober_probe_total',
    help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
    labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'prober_probe_duration_seconds',
    help: 'Duration in seconds for a probe response.',
    labelNames: ['probe_type', 'container', 'pod', 'namespace'],
    registers: [registry],
  });
  return { total, duration };
}

interface Twin {
  series: WorkerSeries;
  kind: ProbeType;
  pod: Pod;
  container: string;
}

describe('probe metrics fast path', () => {
  it('matches prom-client’s public calls exactly, through removal and registry reset', async () => {
    const fast = new Registry();
    const slow = new Registry();
    const metrics = new ProberMetrics(fast);
    const ref = reference(slow);
    const pods: Pod[] = [0, 1, 2].map((i) => ({ metadata: { name: `p${i}`, namespace: 'ns', uid: `u${i}` } }));
    const make = (kind: ProbeType, pod: Pod, container: string): Twin => ({
      series: metrics.seriesFor(kind, pod, container),
      kind,
      pod,
      container,
    });
    const workers: Twin[] = [
      make('readiness', pods[0] as Pod, 'a'),
      make('liveness', pods[1] as Pod, 'b'),
      make('startup', pods[2] as Pod, 'c'),
      make('readiness', pods[0] as Pod, 'a'), // same labels as the first
    ];
    const labels = (w: Twin) => ({
      probe_type: KIND[w.kind],
      container: w.container,
      pod: w.pod.metadata?.name ?? '',
      namespace: w.pod.metadata?.namespace ?? '',
    });
    const record = (w: Twin, result: Result, seconds: number) => {
      w.series.record(result, seconds);
      const d = labels(w);
      ref.total.inc({
        probe_type: d.probe_type,
        result: RESULT_LABEL[result],
        container: d.container,
        pod: d.pod,
        namespace: d.namespace,
        pod_uid: w.pod.metadata?.uid ?? '',
      });
      if (result !== 'failure') ref.duration.observe(d, seconds);
    };
    const remove = (w: Twin) => {
      w.series.remove();
      const d = labels(w);
      for (const result of ['success', 'failure', 'unknown'] as const) {
        ref.total.remove({ ...d, result: RESULT_LABEL[result], pod_uid: w.pod.metadata?.uid ?? '' });
      }
      ref.duration.remove(d);
    };

    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const results: Result[] = ['success', 'failure', 'unknown'];
    const step = (n: number, among: Twin[]) => {
      for (let i = 0; i < n; i++) {
        const w = among[Math.floor(random() * among.length)] as Twin;
        const result = results[Math.floor(random() * 3)] as Result;
        // Durations across every bucket and beyond, with sums that round.
        record(w, result, random() < 0.05 ? 12.5 : random() * random() * 3.1);
      }
    };
    const same = async () => expect(await fast.metrics()).toBe(await slow.metrics());

    step(500, workers);
    await same();
    step(300, workers);
    await same();
    remove(workers[0] as Twin);
    await same();
    step(200, workers.slice(1));
    await same();
    fast.resetMetrics();
    slow.resetMetrics();
    await same();
    step(300, workers);
    await same();
    for (const w of workers) remove(w);
    await same();
    expect(await fast.metrics()).not.toMatch(/^prober_\w+\{/m);
  });

  it('after a series exists, recording does not go through prom-client’s calls', async () => {
    const registry = new Registry();
    const metrics = new ProberMetrics(registry);
    const inc = vi.spyOn(metrics.probeTotal, 'inc');
    const observe = vi.spyOn(metrics.probeDuration, 'observe');
    const series = metrics.seriesFor('readiness', { metadata: { name: 'p', namespace: 'n', uid: 'u' } }, 'c');
    for (let i = 0; i < 100; i++) series.record('success', 0.01);
    expect([inc.mock.calls.length, observe.mock.calls.length]).toEqual([1, 1]);
    expect(await registry.metrics()).toContain(
      'prober_probe_total{probe_type="Readiness",result="successful",container="c",pod="p",namespace="n",pod_uid="u"} 100',
    );
    // A non-finite duration is prom-client's to reject, as before.
    expect(() => series.record('success', Number.NaN)).toThrow(/not a valid number/);
  });
});
