/**
 * Node e2e "Probing restartable init container" [SidecarContainers] (kubelet-test-catalog.md
 * §M: E25–E29, E31–E46; E24 is in initial-delay.test.ts, E30 in crashloop.test.ts): the probed container is an init
 * container with `restartPolicy: Always` next to a regular `main` running `sleep 600`.
 * Restart counts come from `initContainerStatuses`; kills read `Init container <n> failed
 * <kind> probe` (no "will be restarted"), and sidecars restart even under a pod
 * `restartPolicy: Never` (E26, E37 use it). Timings shortened as in liveness.test.ts and
 * readiness.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Container, Pod, Probe } from '../../src/api/types.js';
import {
  between,
  condition,
  container,
  current,
  events,
  eventsWith,
  expectMonotonic,
  freePort,
  isReady,
  nodeFixture,
  pause,
  probeCount,
  restartHistory,
  restarts,
  run,
  sh,
  sidecarPod,
  startKubelet,
  statusOf,
  stopKubelets,
  until,
  waitEvent,
  waitReady,
  waitRestarts,
  waitRunning,
  type Harness,
  type Seen,
} from './helpers.js';

afterEach(async ({ task }) => {
  await stopKubelets(task.id);
});

const SIDECAR = 'sidecar';
const NO_RESTART_WINDOW_MS = 9_000;
const NEVER_READY_WINDOW_MS = 8_000;
const RESTART_WITHIN_MS = 20_000;

function exec(command: string[], o: Partial<Probe> = {}): Probe {
  return { exec: { command }, periodSeconds: 1, ...o };
}

function sidecarRestarts(h: Harness, podName: string): number {
  return restarts(h, podName, SIDECAR, 'sidecar');
}

/** The restart is due; the kill event is the sidecar's, and `main` was left alone. */
async function expectSidecarRestarted(h: Harness, podName: string, kind: 'liveness' | 'startup'): Promise<void> {
  await waitRestarts(h, podName, SIDECAR, 1, RESTART_WITHIN_MS, 'sidecar');
  const kills = eventsWith(h, podName, 'Killing', `failed ${kind} probe`);
  expect(kills.map((e) => e.message)).toContain(`Init container ${SIDECAR} failed ${kind} probe`);
  expect(kills.every((e) => !(e.message ?? '').includes('will be restarted'))).toBe(true);
  expectMonotonic(restartHistory(h, podName, SIDECAR, 'sidecar'));
  expect(restarts(h, podName, 'main')).toBe(0);
}

function expectNeverRestarted(h: Harness, podName: string): void {
  expect(restartHistory(h, podName, SIDECAR, 'sidecar').every((n) => n === 0), `${podName} restarted`).toBe(true);
  expect(sidecarRestarts(h, podName)).toBe(0);
}

async function windowFrom(t0: number, ms = NO_RESTART_WINDOW_MS): Promise<void> {
  await pause(Math.max(0, t0 + ms - performance.now()));
}

describe.concurrent('e2e: probes of a sidecar (restartable init container)', () => {
  it('E25/E33: a sidecar failing readiness (closed port, exec timeout) keeps the pod not Ready, no restart', async ({ task }) => {
    const h = startKubelet(task.id);
    const [p25, closed] = await Promise.all([freePort(), freePort()]);
    const t0 = performance.now();
    run(
      h,
      sidecarPod(
        h,
        'e25',
        nodeFixture(h, SIDECAR, 'test-webserver.mjs', { PORT: String(p25) }, {
          readinessProbe: { httpGet: { path: '/', port: closed }, periodSeconds: 1 },
        }),
      ),
      sidecarPod(
        h,
        'e33',
        container(h, SIDECAR, ['sleep', '600'], {
          readinessProbe: exec(['/bin/sh', '-c', 'sleep 10'], { initialDelaySeconds: 2, timeoutSeconds: 1, failureThreshold: 1 }),
        }),
      ),
    );
    // Sidecar readiness does not gate `main`: both start.
    await Promise.all(['e25', 'e33'].map((p) => waitRunning(h, p, 'main')));
    await windowFrom(t0, NEVER_READY_WINDOW_MS);
    for (const p of ['e25', 'e33']) {
      expect((h.history.get(p) ?? []).filter((s) => isReady(s.pod)).length, `${p} was Ready`).toBe(0);
      expect(statusOf(current(h, p), SIDECAR, 'sidecar')?.ready).toBe(false);
      expect(condition(current(h, p), 'ContainersReady')?.message).toBe(`containers with unready status: [${SIDECAR}]`);
      expectNeverRestarted(h, p);
    }
    expect(eventsWith(h, 'e25', 'Unhealthy', `Readiness probe failed: Get "http://127.0.0.1:${closed}/"`)).not.toEqual([]);
    expect(eventsWith(h, 'e33', 'Unhealthy', 'Readiness probe failed: command timed out')).not.toEqual([]);
    expect(await probeCount(h, 'e25', SIDECAR, 'Readiness', 'failed')).toBeGreaterThanOrEqual(4);
  }, 30_000);

  it('E26/E27/E32/E34: exec liveness restarts the sidecar (even under pod restartPolicy Never); not while healthy', async ({ task }) => {
    const h = startKubelet(task.id);
    const health = (n: string): string => `${h.dir}/${n}-health`;
    const t0 = performance.now();
    run(
      h,
      sidecarPod(
        h,
        'e26',
        container(h, SIDECAR, sh(`echo ok >${health('e26')}; sleep 3; rm -rf ${health('e26')}; sleep 600`), {
          livenessProbe: exec(['cat', health('e26')], { initialDelaySeconds: 2, timeoutSeconds: 5, failureThreshold: 1 }),
        }),
        { restartPolicy: 'Never' },
      ),
      sidecarPod(
        h,
        'e27',
        container(h, SIDECAR, sh(`echo ok >${health('e27')}; sleep 600`), {
          livenessProbe: exec(['cat', health('e27')], { initialDelaySeconds: 2, timeoutSeconds: 5, failureThreshold: 1 }),
        }),
      ),
      sidecarPod(
        h,
        'e32',
        container(h, SIDECAR, ['sleep', '600'], {
          livenessProbe: exec(['/bin/sh', '-c', 'sleep 10'], { initialDelaySeconds: 2, timeoutSeconds: 1, failureThreshold: 1 }),
        }),
      ),
      sidecarPod(
        h,
        'e34',
        container(h, SIDECAR, ['sleep', '600'], {
          livenessProbe: exec(['/bin/sh', '-c', 'sleep 10 & exit 1'], { initialDelaySeconds: 2, timeoutSeconds: 1, failureThreshold: 1 }),
        }),
      ),
    );
    await Promise.all(['e26', 'e27', 'e32', 'e34'].map((p) => waitRunning(h, p, SIDECAR, 'sidecar')));
    await Promise.all(['e26', 'e32', 'e34'].map((p) => expectSidecarRestarted(h, p, 'liveness')));
    expect(current(h, 'e26')?.status?.phase).toBe('Running');

    await windowFrom(t0);
    expectNeverRestarted(h, 'e27');
    expect(await probeCount(h, 'e27', SIDECAR, 'Liveness', 'successful')).toBeGreaterThanOrEqual(3);
    expect(eventsWith(h, 'e27', 'Unhealthy', '')).toEqual([]);
  }, 40_000);

  it('E28/E29/E31/E35/E36: http liveness restarts the sidecar on 500 and after a local redirect; not for tcp, a healthy server or a non-local redirect', async ({ task }) => {
    const h = startKubelet(task.id);
    const [p28, p29, p31, p35, p36] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    const liveness = (port: number, probe: Probe): Container =>
      nodeFixture(h, SIDECAR, 'liveness.mjs', { PORT: String(port), HEALTHY_SECONDS: '3' }, { livenessProbe: probe });
    const base = { initialDelaySeconds: 2, periodSeconds: 1, failureThreshold: 1 };
    const t0 = performance.now();
    run(
      h,
      sidecarPod(h, 'e28', liveness(p28, { ...base, httpGet: { path: '/healthz', port: p28 }, timeoutSeconds: 5 })),
      sidecarPod(h, 'e29', liveness(p29, { ...base, tcpSocket: { port: p29 }, timeoutSeconds: 5 })),
      sidecarPod(
        h,
        'e31',
        nodeFixture(h, SIDECAR, 'test-webserver.mjs', { PORT: String(p31) }, {
          livenessProbe: { httpGet: { path: '/', port: p31 }, initialDelaySeconds: 2, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 5 },
        }),
      ),
      sidecarPod(h, 'e35', liveness(p35, { ...base, httpGet: { path: '/redirect?loc=%2Fhealthz', port: p35 } })),
      sidecarPod(h, 'e36', liveness(p36, { ...base, httpGet: { path: '/redirect?loc=http%3A%2F%2F0.0.0.0%2F', port: p36 } })),
    );
    await Promise.all(['e28', 'e29', 'e31', 'e35', 'e36'].map((p) => waitRunning(h, p, SIDECAR, 'sidecar')));
    await Promise.all(['e28', 'e35'].map((p) => expectSidecarRestarted(h, p, 'liveness')));
    for (const p of ['e28', 'e35']) {
      expect(eventsWith(h, p, 'Unhealthy', 'Liveness probe failed: HTTP probe failed with statuscode: 500')).not.toEqual([]);
    }
    expect(statusOf(current(h, 'e28'), SIDECAR, 'sidecar')?.lastState?.terminated?.exitCode).toBe(143);

    const warning = await waitEvent(h, 'e36', 'ProbeWarning', 'Probe terminated redirects, Response body: <a href="http://0.0.0.0/">Found</a>.', 10_000);
    expect(warning.message).toBe('Liveness probe warning: Probe terminated redirects, Response body: <a href="http://0.0.0.0/">Found</a>.\n\n');

    await windowFrom(t0);
    for (const p of ['e29', 'e31', 'e36']) {
      expectNeverRestarted(h, p);
      expect(await probeCount(h, p, SIDECAR, 'Liveness', 'successful'), p).toBeGreaterThanOrEqual(4);
    }
  }, 40_000);

  it('E37/E38/E39: a failing startup probe restarts the sidecar (pod restartPolicy Never); a long one holds liveness off; liveness kills once started', async ({ task }) => {
    const h = startKubelet(task.id);
    const startupFile = `${h.dir}/e39-startup`;
    const t0 = performance.now();
    run(
      h,
      sidecarPod(
        h,
        'e37',
        container(h, SIDECAR, ['sleep', '600'], {
          livenessProbe: exec(['/bin/true'], { initialDelaySeconds: 2, failureThreshold: 1 }),
          startupProbe: exec(['/bin/false'], { initialDelaySeconds: 2, failureThreshold: 3 }),
        }),
        { restartPolicy: 'Never' },
      ),
      sidecarPod(
        h,
        'e38',
        container(h, SIDECAR, ['sleep', '600'], {
          livenessProbe: exec(['/bin/false'], { initialDelaySeconds: 2, failureThreshold: 1 }),
          startupProbe: exec(['/bin/false'], { initialDelaySeconds: 2, failureThreshold: 60 }),
        }),
      ),
      sidecarPod(
        h,
        'e39',
        container(h, SIDECAR, sh(`sleep 3; echo ok >${startupFile}; sleep 600`), {
          livenessProbe: exec(['/bin/false'], { initialDelaySeconds: 2, failureThreshold: 1 }),
          startupProbe: exec(['cat', startupFile], { initialDelaySeconds: 2, failureThreshold: 60 }),
        }),
      ),
    );
    await Promise.all(['e37', 'e38', 'e39'].map((p) => waitRunning(h, p, SIDECAR, 'sidecar')));
    await Promise.all([expectSidecarRestarted(h, 'e37', 'startup'), expectSidecarRestarted(h, 'e39', 'liveness')]);
    expect(eventsWith(h, 'e37', 'Killing', 'failed liveness probe')).toEqual([]);
    // Until its startup probe succeeds the sidecar has not started, so `main` never ran.
    expect(statusOf(current(h, 'e37'), 'main')?.state?.running).toBeUndefined();

    await windowFrom(t0);
    expectNeverRestarted(h, 'e38');
    expect(await probeCount(h, 'e38', SIDECAR, 'Startup', 'failed')).toBeGreaterThanOrEqual(4);
    expect(await probeCount(h, 'e38', SIDECAR, 'Liveness', 'failed')).toBe(0);
    expect(eventsWith(h, 'e38', 'Unhealthy', 'Liveness probe')).toEqual([]);
    expect(statusOf(current(h, 'e38'), SIDECAR, 'sidecar')?.started).toBe(false);
  }, 40_000);

  it('E40: the pod is Ready right after the sidecar startup probe succeeds, not at the next 30 s readiness tick', async ({ task }) => {
    const h = startKubelet(task.id);
    const healthFile = `${h.dir}/health`;
    const startupFile = `${h.dir}/startup`;
    run(
      h,
      sidecarPod(
        h,
        'e40',
        container(h, SIDECAR, sh(`echo ok >${healthFile}; sleep 3; echo ok >${startupFile}; sleep 600`), {
          readinessProbe: exec(['/bin/cat', healthFile], { initialDelaySeconds: 0, periodSeconds: 30 }),
          startupProbe: exec(['/bin/cat', startupFile], { initialDelaySeconds: 0, failureThreshold: 120, periodSeconds: 1 }),
        }),
      ),
    );
    await waitReady(h, 'e40', 20_000);
    const seen = h.history.get('e40') ?? [];
    const t0 = seen.find((s) => statusOf(s.pod, SIDECAR, 'sidecar')?.started === true)?.atMs;
    const t1 = seen.find((s) => isReady(s.pod))?.atMs;
    expect(t0).toBeDefined();
    expect(t1).toBeDefined();
    const delay = (t1 ?? 0) - (t0 ?? 0);
    expect(delay).toBeGreaterThanOrEqual(0);
    expect(delay).toBeLessThanOrEqual(5_000);
    expect(await probeCount(h, 'e40', SIDECAR, 'Startup', 'failed')).toBeGreaterThanOrEqual(1);
    expect(sidecarRestarts(h, 'e40')).toBe(0);
  }, 30_000);

  it('E41/E42: the probe grace (2 s) beats the pod grace (500 s) for sidecar liveness and startup kills; SIGKILL → 137', async ({ task }) => {
    const h = startKubelet(task.id);
    const closed = await freePort();
    const stubborn = sh('trap "" TERM; sleep 1000');
    run(
      h,
      sidecarPod(
        h,
        'e41',
        container(h, SIDECAR, stubborn, {
          livenessProbe: {
            httpGet: { path: '/healthz', port: closed },
            initialDelaySeconds: 1,
            periodSeconds: 1,
            failureThreshold: 1,
            terminationGracePeriodSeconds: 2,
          },
        }),
        { terminationGracePeriodSeconds: 500 },
      ),
      sidecarPod(
        h,
        'e42',
        container(h, SIDECAR, stubborn, {
          livenessProbe: exec(['/bin/true'], { initialDelaySeconds: 1, failureThreshold: 1 }),
          startupProbe: exec(['/bin/cat', `${h.dir}/never`], { initialDelaySeconds: 1, failureThreshold: 1, terminationGracePeriodSeconds: 2 }),
        }),
        { terminationGracePeriodSeconds: 500 },
      ),
    );
    await Promise.all(['e41', 'e42'].map((p) => waitRunning(h, p, SIDECAR, 'sidecar')));
    await Promise.all([
      waitRestarts(h, 'e41', SIDECAR, 1, 15_000, 'sidecar'),
      waitRestarts(h, 'e42', SIDECAR, 1, 15_000, 'sidecar'),
    ]);
    expect(eventsWith(h, 'e41', 'Killing', '').map((e) => e.message)).toContain(`Init container ${SIDECAR} failed liveness probe`);
    expect(eventsWith(h, 'e42', 'Killing', '').map((e) => e.message)).toContain(`Init container ${SIDECAR} failed startup probe`);
    for (const p of ['e41', 'e42']) {
      const last = statusOf(current(h, p), SIDECAR, 'sidecar')?.lastState?.terminated;
      expect(last?.exitCode, `${p} exit code`).toBe(137);
      expect(between(last?.startedAt, last?.finishedAt)).toBeGreaterThanOrEqual(2_500);
    }
  }, 40_000);

  it('E43/E44: gRPC liveness leaves a SERVING sidecar alone; restarts it when probing the wrong port', async ({ task }) => {
    const h = startKubelet(task.id);
    const [g43, g44, wrong] = await Promise.all([freePort(), freePort(), freePort()]);
    const grpcServer = (port: number, probePort: number): Container =>
      nodeFixture(h, SIDECAR, 'grpc-health.mjs', { GRPC_PORT: String(port) }, {
        livenessProbe: { grpc: { port: probePort }, initialDelaySeconds: 2, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 1 },
      });
    const t0 = performance.now();
    run(h, sidecarPod(h, 'e43', grpcServer(g43, g43)), sidecarPod(h, 'e44', grpcServer(g44, wrong)));
    await Promise.all(['e43', 'e44'].map((p) => waitRunning(h, p, SIDECAR, 'sidecar')));
    await expectSidecarRestarted(h, 'e44', 'liveness');
    await windowFrom(t0);
    expectNeverRestarted(h, 'e43');
    expect(await probeCount(h, 'e43', SIDECAR, 'Liveness', 'successful')).toBeGreaterThanOrEqual(4);
  }, 40_000);

  /** E45/E46's sidecar: on SIGTERM remove the files, linger 3 s, exit 0. */
  function terminatingSidecar(h: Harness, name: string, withLiveness: boolean): Pod {
    const ready = `${h.dir}/${name}-ready`;
    const live = `${h.dir}/${name}-liveness`;
    const files = withLiveness ? `${ready} ${live}` : ready;
    return sidecarPod(
      h,
      name,
      container(h, SIDECAR, sh(`trap 'rm -f ${files}; sleep 3; exit 0' TERM; touch ${files}; while true; do sleep 0.2; done`), {
        readinessProbe: exec(['cat', ready], { initialDelaySeconds: 1, failureThreshold: 1 }),
        ...(withLiveness ? { livenessProbe: exec(['cat', live], { initialDelaySeconds: 1, failureThreshold: 1 }) } : {}),
      }),
      { terminationGracePeriodSeconds: 30 },
    );
  }

  /**
   * Deletes the pod without awaiting and waits for a status where the still-running sidecar
   * is reported not ready (so the readiness probe, not `main`'s exit, made the pod not Ready).
   */
  async function deleteAndWatch(h: Harness, admitted: Pod): Promise<{ notReady: Seen; deleting: Promise<void>; since: number }> {
    const name = admitted.metadata?.name ?? '';
    await waitReady(h, name, 15_000);
    const since = performance.now();
    const deleting = h.kubelet.deletePod(admitted.metadata?.uid ?? '');
    const notReady = await until(
      () =>
        (h.history.get(name) ?? []).find((s) => {
          const sc = statusOf(s.pod, SIDECAR, 'sidecar');
          return s.atMs >= since && sc?.state?.running !== undefined && sc.ready === false;
        }),
      10_000,
    );
    return { notReady, deleting, since };
  }

  it('E45: sidecar readiness goes False while the pod is terminating, before the sidecar exits', async ({ task }) => {
    const h = startKubelet(task.id);
    const [admitted] = run(h, terminatingSidecar(h, 'e45', false));
    if (!admitted) throw new Error('not admitted');
    const { notReady, deleting } = await deleteAndWatch(h, admitted);
    expect(isReady(notReady.pod)).toBe(false);
    await deleting;
    expect(statusOf(current(h, 'e45'), SIDECAR, 'sidecar')?.state?.terminated?.exitCode).toBe(0);
    expect(eventsWith(h, 'e45', 'Unhealthy', 'Readiness probe failed')).not.toEqual([]);
  }, 30_000);

  it('E46: sidecar readiness goes False and no liveness kill happens while the pod is terminating', async ({ task }) => {
    const h = startKubelet(task.id);
    const [admitted] = run(h, terminatingSidecar(h, 'e46', true));
    if (!admitted) throw new Error('not admitted');
    await until(async () => ((await probeCount(h, 'e46', SIDECAR, 'Liveness', 'successful')) >= 1 ? true : undefined), 15_000);
    const { notReady, deleting } = await deleteAndWatch(h, admitted);
    expect(isReady(notReady.pod)).toBe(false);
    await deleting;
    await pause(1_000);
    expect(events(h, 'e46').filter((e) => (e.message ?? '').includes('failed liveness probe'))).toEqual([]);
    expect(statusOf(current(h, 'e46'), SIDECAR, 'sidecar')?.state?.terminated?.exitCode).toBe(0);
    expect(sidecarRestarts(h, 'e46')).toBe(0);
  }, 30_000);
});
