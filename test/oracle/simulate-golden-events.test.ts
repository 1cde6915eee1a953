/**
 * `probelet simulate` held to the real kubelet's recorded Events (golden files of
 * test/oracle/golden): what client-go's event correlator lets through to the API. Runs without
 * a cluster or containerd.
 */
import { describe, expect, it } from 'vitest';
import { admitForSimulation } from '../../src/simulate/pods.js';
import { simulate } from '../../src/simulate/simulation.js';
import { behaviours } from '../simulate/harness.js';
import { readGolden } from './oracle.js';
import { SCENARIOS } from './scenarios.js';

// client-go's spam filter (events_cache.go: 25 Events of one type per pod, then one per 5
// minutes): the kubelet's `http-readiness-flap` shows `Unhealthy ×25` where its prober failed
// about 30 times in the minute; `simulate` shows what the API shows, its kill list all.
describe("simulate against the kubelet's golden events of http-readiness-flap (the spam filter)", () => {
  const flap = 'http-readiness-flap';
  const scenario = SCENARIOS.find((s) => s.name === flap);
  const golden = readGolden(flap);

  it('shows the 25 Warning events the kubelet shows, of the more its prober recorded', async () => {
    expect(scenario).toBeDefined();
    if (scenario === undefined) return;
    const warnings = (golden?.events ?? []).filter((e) => e.type === 'Warning').reduce((n, e) => n + e.count, 0);
    expect(warnings).toBe(25);
    const admitted = admitForSimulation([scenario.pod(8080)]);
    expect(admitted.errors).toEqual([]);
    const shown = new Map<string, number>();
    const result = await simulate({
      pods: admitted.pods,
      // The scenario's server: 200 for 10 s, 503 for 10 s, …
      behaviours: behaviours({ 'app.readiness': 'up:10s,down:10s,up:10s,down:10s,up:10s,down:10s,up' }),
      forMs: scenario.duration * 1000,
      seed: 1,
      threads: 1,
      record: true,
      onEvent: (e) => shown.set(e.metadata.name ?? '', e.type === 'Warning' ? (e.count ?? 0) : 0),
    });
    expect([...shown.values()].reduce((n, c) => n + c, 0)).toBe(warnings);
    const listed = (result.timeline?.events ?? []).filter((e) => e.type === 'Warning');
    expect(listed.map((e) => `${e.reason} ×${e.count}`)).toEqual(['Unhealthy ×25']);
  });
});
