/**
 * The node e2e probing scenarios E1–E23 (kubelet-test-catalog.md §L) in the simulator, with the
 * upstream timings — 15 s initial delays, 4-minute observation windows, E7's 14 minutes of
 * crash-loop back-off — and the upstream assertions, each in milliseconds of wall time. The
 * containers' images are replaced by behaviour scripts that do what the images do:
 * agnhost liveness = `/healthz` healthy for 10 s then 500 (`up:10s,fail`), test-webserver =
 * `up`, busybox with a missing file = `down`, `sleep 10` under a 1 s timeout = `slow(10s)`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { IGNORE_SIGTERM } from '../../src/simulate/behaviour.js';
import { parseScript } from '../../src/simulate/script.js';
import { isReady, latest, podWith, poll, restarts, start, type Recorded } from './harness.js';

const MIN = 60_000;
const running: Recorded[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.sim.finish();
    expect(r.sim.clock.pendingTimers()).toBe(0);
  }
});

function run(...args: Parameters<typeof start>): Recorded {
  const r = start(...args);
  running.push(r);
  return r;
}

/**
 * The e2e "liveness test": wait until the container runs, read r0, poll every 2 s until
 * 4 min + r0 × 10 s. Expecting N > 0 restarts passes once ≥ N are seen; 0 fails on any.
 * The count may never decrease.
 */
async function livenessTest(r: Recorded, expected: number, timeoutMs = 4 * MIN): Promise<number> {
  await poll(r, 5 * MIN, 1000, (pod) => pod.status?.containerStatuses?.[0]?.state?.running !== undefined);
  const r0 = restarts(latest(r));
  let last = r0;
  let seen = r0;
  await poll(r, timeoutMs + r0 * 10_000, 2000, (pod) => {
    seen = restarts(pod);
    expect(seen).toBeGreaterThanOrEqual(last);
    last = seen;
    if (expected > 0 && seen - r0 >= expected) return true;
    return undefined;
  });
  if (expected > 0) expect(seen - r0).toBeGreaterThanOrEqual(expected);
  else expect(seen).toBe(r0);
  return seen;
}

const exec = (cmd: string[]) => ({ exec: { command: cmd } });
const httpGet = (path: string, port: number) => ({ httpGet: { path, port } });

describe('node e2e probing scenarios on virtual time (upstream timings)', () => {
  it('E1: with readiness probe should not be ready before initial delay and never restart', async () => {
    const r = run(podWith({ readinessProbe: { ...httpGet('/', 80), initialDelaySeconds: 15 } }), { c: 'up' });
    expect(await poll(r, 5 * MIN, 1000, isReady)).toBe(true);
    const pod = latest(r);
    const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
    const startedAt = pod.status?.containerStatuses?.[0]?.state?.running?.startedAt;
    expect(Date.parse(ready?.lastTransitionTime ?? '') - Date.parse(startedAt ?? '')).toBeGreaterThanOrEqual(15_000);
    expect(restarts(pod)).toBe(0);
  });

  it('E2: with readiness probe that fails (port 81 closed) should never be ready and never restart', async () => {
    const r = run(podWith({ readinessProbe: httpGet('/', 81) }), { 'c.readiness': 'down' });
    expect(await poll(r, MIN, 1000, isReady)).toBe(false);
    expect(restarts(latest(r))).toBe(0);
  });

  it('E3: should be restarted with an exec "cat /tmp/health" liveness probe (file removed after 10 s)', async () => {
    const r = run(podWith({ livenessProbe: { ...exec(['cat', '/tmp/health']), initialDelaySeconds: 15, timeoutSeconds: 5, failureThreshold: 1 } }), { c: 'up:10s,fail' });
    await livenessTest(r, 1);
  });

  it('E4: should not be restarted with an exec "cat /tmp/health" liveness probe (file stays)', async () => {
    const r = run(podWith({ livenessProbe: { ...exec(['cat', '/tmp/health']), initialDelaySeconds: 15, timeoutSeconds: 5, failureThreshold: 1 } }), { c: 'up' });
    await livenessTest(r, 0);
  });

  it('E5: should be restarted with a /healthz http liveness probe (agnhost liveness)', async () => {
    const r = run(podWith({ livenessProbe: { ...httpGet('/healthz', 8080), initialDelaySeconds: 15, failureThreshold: 1 } }), { c: 'up:10s,fail' });
    await livenessTest(r, 1);
  });

  it('E6: should not be restarted with a tcp:8080 liveness probe (the socket accepts while HTTP fails)', async () => {
    const r = run(podWith({ livenessProbe: { tcpSocket: { port: 8080 }, initialDelaySeconds: 15, failureThreshold: 1 } }), { c: 'up:10s,fail' });
    await livenessTest(r, 0);
  });

  it('E7: should have monotonically increasing restart count (≥ 5 within 14 min with the real back-off)', async () => {
    const r = run(podWith({ livenessProbe: { ...httpGet('/healthz', 8080), initialDelaySeconds: 5, failureThreshold: 1 } }), { c: 'up:10s,fail' });
    await livenessTest(r, 5, 2 * MIN + 4 * MIN + 8 * MIN);
    const backOffs = r.events.filter((e) => e.event.reason === 'BackOff');
    expect(backOffs.length).toBeGreaterThan(0);
  });

  it('E8: should not be restarted with a /healthz http liveness probe (test-webserver, timeout 5, failure 5)', async () => {
    const r = run(podWith({ livenessProbe: { ...httpGet('/', 80), initialDelaySeconds: 15, timeoutSeconds: 5, failureThreshold: 5 } }), { c: 'up' });
    await livenessTest(r, 0);
  });

  it('E9: should be restarted with an exec liveness probe with timeout (sleep 10 under timeout 1)', async () => {
    const r = run(podWith({ livenessProbe: { ...exec(['/bin/sh', '-c', 'sleep 10']), initialDelaySeconds: 15, timeoutSeconds: 1, failureThreshold: 1 } }), { 'c.liveness': 'slow(10s)' });
    await livenessTest(r, 1);
    expect(r.events.some((e) => e.event.message?.includes('command timed out'))).toBe(true);
  });

  it('E10: should not be ready with an exec readiness probe timeout', async () => {
    const r = run(podWith({ readinessProbe: { ...exec(['/bin/sh', '-c', 'sleep 10']), initialDelaySeconds: 15, timeoutSeconds: 1, failureThreshold: 1 } }), { 'c.readiness': 'slow(10s)' });
    await poll(r, MIN, 1000, (pod) => pod.status?.phase !== 'Pending');
    expect(await poll(r, MIN, 2000, isReady)).toBe(false);
  });

  it('E11: should be restarted with a failing exec liveness probe that took longer than the timeout', async () => {
    const r = run(podWith({ livenessProbe: { ...exec(['/bin/sh', '-c', 'sleep 10 & exit 1']), initialDelaySeconds: 15, timeoutSeconds: 1, failureThreshold: 1 } }), { 'c.liveness': 'hang' });
    await livenessTest(r, 1);
  });

  it('E12: should be restarted with a local redirect http liveness probe (followed to /healthz, failing after 10 s)', async () => {
    const r = run(podWith({ livenessProbe: { ...httpGet('/redirect?loc=%2Fhealthz', 8080), initialDelaySeconds: 15, failureThreshold: 1 } }), { c: 'up:10s,fail' });
    await livenessTest(r, 1);
  });

  it('E13: should not be restarted with a non-local redirect http liveness probe (a ProbeWarning within 2 min)', async () => {
    const r = run(
      podWith({ livenessProbe: { ...httpGet('/redirect?loc=http%3A%2F%2F0.0.0.0%2F', 8080), initialDelaySeconds: 15, failureThreshold: 1 } }),
      { c: 'redirect(http://0.0.0.0/)' },
    );
    await livenessTest(r, 0);
    const warnings = r.events.filter(({ event }) => event.reason === 'ProbeWarning');
    expect(warnings[0]?.t).toBeLessThanOrEqual(2 * MIN);
    expect(warnings[0]?.event.message).toContain('Probe terminated redirects, Response body: <a href="http://0.0.0.0/">Found</a>.');
  });

  it('E14: should be restarted when the startup probe fails', async () => {
    const r = run(
      podWith({
        livenessProbe: { ...exec(['/bin/true']), initialDelaySeconds: 15, failureThreshold: 1 },
        startupProbe: { ...exec(['/bin/false']), initialDelaySeconds: 15, failureThreshold: 3 },
      }),
      { 'c.liveness': 'up', 'c.startup': 'down' },
    );
    await livenessTest(r, 1);
  });

  it('E15: should not be restarted by liveness probe because startup probe delays it (failure 60)', async () => {
    const r = run(
      podWith({
        livenessProbe: { ...exec(['/bin/false']), initialDelaySeconds: 15, failureThreshold: 1 },
        startupProbe: { ...exec(['/bin/false']), initialDelaySeconds: 15, failureThreshold: 60 },
      }),
      { c: 'down' },
    );
    await livenessTest(r, 0);
  });

  it('E16: should be restarted by liveness probe after startup probe enables it', async () => {
    const r = run(
      podWith({
        livenessProbe: { ...exec(['/bin/false']), initialDelaySeconds: 15, failureThreshold: 1 },
        startupProbe: { ...exec(['cat', '/tmp/startup']), initialDelaySeconds: 15, failureThreshold: 60 },
      }),
      { 'c.liveness': 'fail', 'c.startup': 'down:10s,up' },
    );
    await livenessTest(r, 1);
  });

  it('E17: should be ready immediately after startupProbe succeeds (≤ 25 s, not the next 30 s readiness tick)', async () => {
    const r = run(
      podWith({
        readinessProbe: { ...exec(['/bin/cat', '/tmp/health']), initialDelaySeconds: 0, periodSeconds: 30 },
        startupProbe: { ...exec(['/bin/cat', '/tmp/startup']), initialDelaySeconds: 0, failureThreshold: 120, periodSeconds: 5 },
      }),
      { 'c.readiness': 'up', 'c.startup': 'down:32s,up' },
    );
    expect(await poll(r, 5 * MIN, 1000, (pod) => pod.status?.containerStatuses?.[0]?.started === true)).toBe(true);
    const t0 = r.sim.now();
    expect(await poll(r, 5 * MIN, 1000, isReady)).toBe(true);
    const t1 = r.sim.now();
    expect(t1 - t0).toBeGreaterThanOrEqual(0);
    expect(t1 - t0).toBeLessThanOrEqual(25_000);
  });

  it('E18: the liveness probe terminationGracePeriodSeconds (5 s) overrides the pod grace (500 s)', async () => {
    const r = run(
      podWith(
        { livenessProbe: { ...httpGet('/healthz', 8080), initialDelaySeconds: 10, failureThreshold: 1, terminationGracePeriodSeconds: 5 } },
        { terminationGracePeriodSeconds: 500 },
      ),
      { 'c.liveness': 'down', c: { probes: {}, onSigterm: IGNORE_SIGTERM } },
    );
    await livenessTest(r, 1, 40_000 + 4 * MIN);
    expectKilledWithinGrace(r, 5_000);
  });

  it('E19: the startup probe terminationGracePeriodSeconds (5 s) overrides the pod grace (500 s)', async () => {
    const r = run(
      podWith(
        {
          livenessProbe: { ...exec(['/bin/true']), initialDelaySeconds: 15, failureThreshold: 1 },
          startupProbe: { ...exec(['/bin/cat', '/tmp/startup']), initialDelaySeconds: 10, failureThreshold: 1, terminationGracePeriodSeconds: 5 },
        },
        { terminationGracePeriodSeconds: 500 },
      ),
      { 'c.liveness': 'up', 'c.startup': 'down', c: { probes: {}, onSigterm: IGNORE_SIGTERM } },
    );
    await livenessTest(r, 1, 40_000 + 4 * MIN);
    expectKilledWithinGrace(r, 5_000);
  });

  it('E20: should not be restarted with a gRPC liveness probe (SERVING)', async () => {
    const r = run(podWith({ livenessProbe: { grpc: { port: 5000 }, initialDelaySeconds: 15, timeoutSeconds: 5, failureThreshold: 1 } }), { c: 'up' });
    await livenessTest(r, 0);
  });

  it('E21: should be restarted with a gRPC liveness probe on the wrong port (2333)', async () => {
    const r = run(podWith({ livenessProbe: { grpc: { port: 2333 }, initialDelaySeconds: 60, timeoutSeconds: 5, failureThreshold: 1 } }), { 'c.liveness': 'down' });
    await livenessTest(r, 1);
  });

  it('E22: readiness goes false while the pod is terminating, before its container exits', async () => {
    const r = run(
      podWith({ readinessProbe: { ...exec(['cat', '/tmp/ready']), failureThreshold: 1, initialDelaySeconds: 5, periodSeconds: 2 } }, { terminationGracePeriodSeconds: 30 }),
      { c: { probes: {}, onSigterm: { exitAfterMs: 30_000, exitCode: 0, probes: parseScript('fail') } } },
    );
    expect(await poll(r, 5 * MIN, 1000, isReady)).toBe(true);
    const deleting = r.sim.kubelet.deletePod(r.pod.metadata?.uid ?? '');
    const notReady = await poll(r, 30_000, 1000, (pod) => !isReady(pod) && pod.status?.containerStatuses?.[0]?.state?.running !== undefined);
    expect(notReady).toBe(true);
    await r.sim.advance(30_000);
    await deleting;
  });

  it('E23: readiness goes false and liveness stops killing while the pod is terminating', async () => {
    const r = run(
      podWith(
        {
          readinessProbe: { ...exec(['cat', '/tmp/ready']), failureThreshold: 1, initialDelaySeconds: 5, periodSeconds: 2 },
          livenessProbe: { ...exec(['cat', '/tmp/liveness']), failureThreshold: 1, initialDelaySeconds: 5, periodSeconds: 1 },
        },
        { terminationGracePeriodSeconds: 30 },
      ),
      { c: { probes: {}, onSigterm: { exitAfterMs: 20_000, exitCode: 0, probes: parseScript('fail') } } },
    );
    expect(await poll(r, 5 * MIN, 1000, isReady)).toBe(true);
    const deletedAt = r.sim.now();
    const deleting = r.sim.kubelet.deletePod(r.pod.metadata?.uid ?? '');
    expect(await poll(r, 30_000, 1000, (pod) => !isReady(pod))).toBe(true);
    await r.sim.advance(60_000);
    await deleting;
    const liveness = r.events.filter((e) => e.t >= deletedAt && e.event.message?.includes('failed liveness probe'));
    expect(liveness).toEqual([]);
  });
});

/** The probe kill's SIGKILL came after the probe's grace, not the pod's: exit 137 within `graceMs` of the Killing. */
function expectKilledWithinGrace(r: Recorded, graceMs: number): void {
  const killing = r.events.find((e) => e.event.reason === 'Killing');
  expect(killing).toBeDefined();
  const after = r.statuses.find((s) => s.t >= (killing?.t ?? 0) && restarts(s.pod) >= 1);
  const last = after?.pod.status?.containerStatuses?.[0]?.lastState?.terminated;
  expect(last?.exitCode).toBe(137);
  expect(Date.parse(last?.finishedAt ?? '') - Date.parse(killing?.event.lastTimestamp ?? '')).toBe(graceMs);
}

export type { Pod };
