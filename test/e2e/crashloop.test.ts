/**
 * Node e2e restart loops (kubelet-test-catalog.md §L E7, §M E30) and a container that
 * cannot start at all, on the real kubelet and process runtime. The node config
 * `crashLoopBackOff.maxContainerRestartPeriod` is 1 s (so back-off steps are 1 s instead of
 * 10 s…300 s), the liveness server fails after 1 s and the initial delay is 1 s (upstream
 * 10 s and 5 s): ≥5 restarts are due within ~20 s instead of 14 min.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Container, Probe } from '../../src/api/types.js';
import {
  container,
  current,
  eventsWith,
  expectMonotonic,
  freePort,
  nodeFixture,
  pod,
  restartHistory,
  restarts,
  run,
  sidecarPod,
  startKubelet,
  statusOf,
  stopKubelets,
  waitRestarts,
  waitRunning,
  type Harness,
} from './helpers.js';

afterEach(async ({ task }) => {
  await stopKubelets(task.id);
});

const AGNHOST = 'agnhost-container';

function failingLiveness(h: Harness, name: string, port: number): Container {
  const probe: Probe = { httpGet: { path: '/healthz', port }, initialDelaySeconds: 1, periodSeconds: 1, failureThreshold: 1 };
  return nodeFixture(h, name, 'liveness.mjs', { PORT: String(port), HEALTHY_SECONDS: '1' }, { livenessProbe: probe });
}

describe.concurrent('e2e: restart loops', () => {
  it('E7/E30: monotonically increasing restart count (≥5) of a regular container and of a sidecar', async ({ task }) => {
    const h = startKubelet(task.id, { maxContainerRestartPeriodMs: 1_000 });
    const [p7, p30] = await Promise.all([freePort(), freePort()]);
    run(h, pod('e7', [failingLiveness(h, AGNHOST, p7)]), sidecarPod(h, 'e30', failingLiveness(h, 'sidecar', p30)));
    await Promise.all([
      waitRestarts(h, 'e7', AGNHOST, 5, 45_000),
      waitRestarts(h, 'e30', 'sidecar', 5, 45_000, 'sidecar'),
    ]);
    const regular = restartHistory(h, 'e7', AGNHOST);
    const sidecar = restartHistory(h, 'e30', 'sidecar', 'sidecar');
    expectMonotonic(regular);
    expectMonotonic(sidecar);
    // Every value from 0 to 5 was reported on the way (a restart count moves one at a time).
    for (let n = 0; n <= 5; n++) {
      expect(regular).toContain(n);
      expect(sidecar).toContain(n);
    }
    expect(eventsWith(h, 'e7', 'Killing', `Container ${AGNHOST} failed liveness probe, will be restarted`).length).toBeGreaterThan(0);
    expect(eventsWith(h, 'e30', 'Killing', 'Init container sidecar failed liveness probe').length).toBeGreaterThan(0);
    // The restarted sidecar never counted as a regular container, and `main` ran on undisturbed.
    expect(restarts(h, 'e30', 'main')).toBe(0);
  }, 60_000);

  it('a command that does not exist: RunContainerError, then CrashLoopBackOff with a growing restart count; the kubelet runs on', async ({ task }) => {
    const h = startKubelet(task.id, { maxContainerRestartPeriodMs: 1_000 });
    const [missing] = run(
      h,
      pod('missing', [container(h, 'app', ['/nonexistent/probelet-e2e-missing'])]),
      pod('healthy', [container(h, 'app', ['sleep', '600'])]),
    );
    const uid = missing?.metadata?.uid ?? '';
    await waitRestarts(h, 'missing', 'app', 3, 20_000);
    const waiting = (h.history.get('missing') ?? []).map((s) => statusOf(s.pod, 'app')?.state?.waiting?.reason);
    const firstRunError = waiting.indexOf('RunContainerError');
    expect(firstRunError).toBeGreaterThanOrEqual(0);
    expect(waiting.indexOf('CrashLoopBackOff', firstRunError)).toBeGreaterThan(firstRunError);
    expectMonotonic(restartHistory(h, 'missing', 'app'));

    const back = (h.history.get('missing') ?? [])
      .map((s) => statusOf(s.pod, 'app'))
      .find((s) => s?.state?.waiting?.reason === 'CrashLoopBackOff');
    expect(back?.state?.waiting?.message).toBe(`back-off 1s restarting failed container=app pod=missing_default(${uid})`);
    // containerd's StartError: exit code 128 and a message naming the missing binary.
    expect(back?.lastState?.terminated?.exitCode).toBe(128);
    expect(back?.lastState?.terminated?.reason).toBe('StartError');
    expect(back?.lastState?.terminated?.message).toContain('/nonexistent/probelet-e2e-missing');
    expect(eventsWith(h, 'missing', 'BackOff', 'Back-off restarting failed container app in pod missing_default').length).toBeGreaterThan(0);
    expect(current(h, 'missing')?.status?.phase).toBe('Running');

    // The kubelet is still in business: the other pod runs on, a new one starts.
    expect(statusOf(current(h, 'healthy'), 'app')?.state?.running).toBeDefined();
    expect(restarts(h, 'healthy', 'app')).toBe(0);
    run(h, pod('later', [container(h, 'app', ['sleep', '600'])]));
    await waitRunning(h, 'later', 'app');
  }, 30_000);
});
