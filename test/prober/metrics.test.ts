/** §8 metrics, read back from the manager's registry as Prometheus text and JSON. */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import type { ProbeType } from '../../src/prober/types.js';
import {
  TEST_CONTAINER_NAME,
  TEST_POD_UID,
  fixturePod,
  makeEngine,
  proberSeries,
  runningStatus,
  settle,
  testProbe,
  type Engine,
} from '../helpers/engine.js';

function namespaced(kind: ProbeType, failureThreshold = 1): Pod {
  const pod = fixturePod(kind, testProbe({ failureThreshold }));
  return { ...pod, metadata: { ...pod.metadata, namespace: 'default' } };
}

async function start(e: Engine, kind: ProbeType, failureThreshold = 1): Promise<Pod> {
  const pod = namespaced(kind, failureThreshold);
  e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: kind !== 'startup' }));
  e.manager.addPod(pod);
  await settle(e.clock);
  return pod;
}

describe('prober metrics', () => {
  it('counts results with the kubelet names, labels and help texts', async () => {
    const e = makeEngine();
    e.prober.durationMs = 250;
    await start(e, 'readiness', 3);
    await e.clock.advance(2_500); // probes at 0, 1, 2 s: three successes
    e.prober.result = 'failure';
    await e.clock.advance(2_000); // probes at 3, 4 s: two failures
    const text = await e.registry.metrics();
    expect(text).toContain(
      '# HELP prober_probe_total Cumulative number of a liveness, readiness or startup probe for a container by result.',
    );
    expect(text).toContain('# TYPE prober_probe_total counter');
    expect(text).toContain('# HELP prober_probe_duration_seconds Duration in seconds for a probe response.');
    expect(text).toContain('# TYPE prober_probe_duration_seconds histogram');
    const labels = `container="${TEST_CONTAINER_NAME}",pod="testPod",namespace="default",pod_uid="${TEST_POD_UID}"`;
    expect(text).toContain(`prober_probe_total{probe_type="Readiness",result="successful",${labels}} 3`);
    expect(text).toContain(`prober_probe_total{probe_type="Readiness",result="failed",${labels}} 2`);
    // Duration only for the successes, measured on the clock from the start of the iteration.
    expect(text).toContain(
      `prober_probe_duration_seconds_count{probe_type="Readiness",container="${TEST_CONTAINER_NAME}",pod="testPod",namespace="default"} 3`,
    );
    expect(text).toContain(
      `prober_probe_duration_seconds_sum{probe_type="Readiness",container="${TEST_CONTAINER_NAME}",pod="testPod",namespace="default"} 0.75`,
    );
    // Default buckets: 0.25 s falls in le="0.25".
    expect(text).toMatch(/prober_probe_duration_seconds_bucket\{le="0.25",probe_type="Readiness",[^}]*\} 3/);
    expect(text).toMatch(/prober_probe_duration_seconds_bucket\{le="0.1",probe_type="Readiness",[^}]*\} 0/);
  });

  it('no duration is observed for failures; probe_type is Liveness / Startup', async () => {
    const e = makeEngine();
    e.prober.result = 'failure';
    await start(e, 'liveness');
    const series = await proberSeries(e.registry);
    expect(series.filter((s) => s.name === 'prober_probe_total')).toEqual([
      {
        name: 'prober_probe_total',
        labels: {
          probe_type: 'Liveness',
          result: 'failed',
          container: TEST_CONTAINER_NAME,
          pod: 'testPod',
          namespace: 'default',
          pod_uid: TEST_POD_UID,
        },
        value: 1,
      },
    ]);
    expect(series.filter((s) => s.name.startsWith('prober_probe_duration_seconds'))).toEqual([]);

    const e2 = makeEngine();
    await start(e2, 'startup');
    expect(await e2.registry.metrics()).toContain('prober_probe_total{probe_type="Startup",result="successful"');
  });

  it('skipped iterations and errored probes are not counted', async () => {
    const e = makeEngine();
    e.prober.error = new Error('errored');
    await start(e, 'readiness');
    await e.clock.advance(3_000);
    expect(e.prober.calls.length).toBe(4);
    expect(await proberSeries(e.registry)).toEqual([]);
  });

  it('a worker’s series disappear when it exits; a re-created worker starts from zero', async () => {
    const e = makeEngine();
    const pod = await start(e, 'readiness');
    await e.clock.advance(1_000);
    e.prober.result = 'failure';
    await e.clock.advance(1_000);
    expect((await proberSeries(e.registry)).length).toBeGreaterThan(0);
    e.manager.removePod(pod);
    await settle(e.clock);
    expect(await proberSeries(e.registry)).toEqual([]);
    const text = await e.registry.metrics();
    expect(text).not.toMatch(/^prober_probe_total\{/m);

    e.prober.result = 'success';
    e.manager.addPod(pod);
    await settle(e.clock);
    expect(await e.registry.metrics()).toMatch(/prober_probe_total\{probe_type="Readiness",result="successful",[^}]*\} 1$/m);
  });

  it('two managers in one process never share series', async () => {
    const a = makeEngine();
    const b = makeEngine();
    await start(a, 'readiness');
    expect((await proberSeries(a.registry)).length).toBeGreaterThan(0);
    expect(await proberSeries(b.registry)).toEqual([]);
  });

  it('the default registry is per manager', async () => {
    const a = makeEngine({ registry: undefined });
    const b = makeEngine({ registry: undefined });
    await start(a, 'readiness');
    const ra = a.manager.context.metrics.probeTotal;
    const rb = b.manager.context.metrics.probeTotal;
    expect(ra).not.toBe(rb);
    expect((await rb.get()).values).toEqual([]);
    expect((await ra.get()).values.length).toBe(1);
  });

  it('managers given the same registry share its families instead of failing', async () => {
    const registry = new Registry();
    const a = makeEngine({ registry });
    const b = makeEngine({ registry });
    expect(a.manager.context.metrics.probeTotal).toBe(b.manager.context.metrics.probeTotal);
  });
});
