/**
 * The flight recorder's "what the kubelet did next": a liveness failure's Killing, the
 * restart that follows (and the back-off before the next one), and readiness turning the
 * container Ready and not Ready — on the lanes, in order. The kubelet over a scripted runtime
 * and a scripted prober on the FakeClock.
 */
import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/api/types.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import type { ProbeType, Result } from '../../src/prober/types.js';
import { FakeClock } from '../../src/util/clock.js';
import { FakeRuntime } from '../helpers/fake-runtime.js';
import { closeKubeletsAfterEach } from '../helpers/kubelets.js';

const kubelets = closeKubeletsAfterEach();

const app: Container = {
  name: 'app',
  image: 'img',
  command: ['app'],
  livenessProbe: { exec: { command: ['x'] }, periodSeconds: 1, failureThreshold: 1 },
  readinessProbe: { exec: { command: ['x'] }, periodSeconds: 1 },
};
const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: 'uid-web' }, spec: { containers: [app] } };

describe('flight recorder: the kubelet actions after a verdict', () => {
  it('records Ready → True, Killing, Ready → False and the restart on the container lanes', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const verdicts = new Map<ProbeType, Result>();
    const kubelet = new Kubelet({
      runtime: new FakeRuntime(clock),
      clock,
      random: () => 0.5,
      prober: { probe: async (t) => ({ result: verdicts.get(t) ?? 'success' }) },
    });
    kubelets.push(kubelet);
    kubelet.addPods([pod]);
    await clock.advance(3000);
    verdicts.set('liveness', 'failure');
    verdicts.set('readiness', 'failure');
    await clock.advance(3000);

    const lanes = new Map(kubelet.listProbes().map((h) => [h.probeType, h]));
    const actions = (t: ProbeType) =>
      (lanes.get(t)?.transitions ?? [])
        .filter((x) => x.kind === 'action')
        .reverse()
        .map((x) => `${x.reason}: ${x.message}`);
    expect(actions('liveness').slice(0, 2)).toEqual(['Killing: Container app failed liveness probe, will be restarted', 'Started: Restarted container app (restart 1)']);
    expect(actions('readiness')[0]).toBe('Ready: Ready → True');
    expect(actions('readiness')).toContain('Ready: Ready → False');
    expect(actions('readiness')).toContain('Started: Restarted container app (restart 1)');
    // The threshold crossing comes before the kill it caused.
    const liveness = lanes.get('liveness')?.transitions.slice().reverse() ?? [];
    const crossed = liveness.findIndex((t) => t.kind === 'threshold' && t.to === 'failure');
    const killed = liveness.findIndex((t) => t.reason === 'Killing');
    expect(crossed).toBeGreaterThanOrEqual(0);
    expect(killed).toBeGreaterThan(crossed);
    // So does Ready → True after the readiness success that caused it.
    const readiness = lanes.get('readiness')?.transitions.slice().reverse() ?? [];
    const readyAt = readiness.findIndex((t) => t.reason === 'Ready' && t.message === 'Ready → True');
    const succeeded = readiness.findIndex((t) => t.kind === 'threshold' && t.to === 'success');
    expect(succeeded).toBeGreaterThanOrEqual(0);
    expect(readyAt).toBeGreaterThan(succeeded);

    // Liveness keeps failing: the next restart waits in back-off, and that is noted too.
    await clock.advance(5000);
    expect(actions('liveness').some((a) => a.startsWith('BackOff: back-off 10s restarting failed container=app'))).toBe(true);
  });
});
