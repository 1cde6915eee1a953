/**
 * E1 and E24 (kubelet-test-catalog.md §L/§M): "should not be ready before initial delay" —
 * upstream asserts `Ready.lastTransitionTime − container.startedAt ≥ initialDelay`, both read
 * from the API. Initial delay 2 s (upstream 15 s), readiness period 1 s.
 *
 * Both read from `kubelet.listPods()`, the API view: container times must have the same
 * (RFC 3339, whole-second) precision as condition times for the comparison to hold, as it
 * does upstream.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  between,
  condition,
  freePort,
  nodeFixture,
  pod,
  restarts,
  run,
  sidecarPod,
  startKubelet,
  statusOf,
  stopKubelets,
  waitReady,
} from './helpers.js';

afterEach(async ({ task }) => {
  await stopKubelets(task.id);
});

const WEB = 'test-webserver';
const SIDECAR = 'sidecar';
const RFC3339_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

describe.concurrent('e2e: readiness initial delay', () => {
  it('E1: not Ready before the initial delay (Ready.lastTransitionTime − startedAt ≥ 2 s), never restarted', async ({ task }) => {
    const h = startKubelet(task.id);
    const port = await freePort();
    run(
      h,
      pod('e1', [
        nodeFixture(h, WEB, 'test-webserver.mjs', { PORT: String(port) }, {
          readinessProbe: { httpGet: { path: '/', port }, initialDelaySeconds: 2, periodSeconds: 1 },
        }),
      ]),
    );
    const ready = await waitReady(h, 'e1', 15_000);
    const web = statusOf(ready, WEB);
    expect(ready.status?.phase).toBe('Running');
    expect(web?.ready).toBe(true);
    // Both read from the API view, as upstream reads them from the apiserver.
    expect(between(web?.state?.running?.startedAt, condition(ready, 'Ready')?.lastTransitionTime)).toBeGreaterThanOrEqual(2_000);
    expect(restarts(h, 'e1', WEB)).toBe(0);
    // The root of the comparison: API times (metav1.Time) are RFC 3339 in whole seconds.
    expect(condition(ready, 'Ready')?.lastTransitionTime).toMatch(RFC3339_SECONDS);
    expect(web?.state?.running?.startedAt).toMatch(RFC3339_SECONDS);
  }, 30_000);

  it('E24: sidecar readiness — not Ready before the initial delay (Ready.lastTransitionTime − startedAt ≥ 2 s)', async ({ task }) => {
    const h = startKubelet(task.id);
    const port = await freePort();
    run(
      h,
      sidecarPod(
        h,
        'e24',
        nodeFixture(h, SIDECAR, 'test-webserver.mjs', { PORT: String(port) }, {
          readinessProbe: { httpGet: { path: '/', port }, initialDelaySeconds: 2, periodSeconds: 1 },
        }),
      ),
    );
    const ready = await waitReady(h, 'e24', 15_000);
    const s = statusOf(ready, SIDECAR, 'sidecar');
    expect(s?.ready).toBe(true);
    expect(ready.status?.phase).toBe('Running');
    expect(between(s?.state?.running?.startedAt, condition(ready, 'Ready')?.lastTransitionTime)).toBeGreaterThanOrEqual(2_000);
    expect(restarts(h, 'e24', SIDECAR, 'sidecar')).toBe(0);
    expect(s?.state?.running?.startedAt).toMatch(RFC3339_SECONDS);
  }, 30_000);
});
