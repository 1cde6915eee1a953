/**
 * Node e2e "Probing container", liveness and startup (kubelet-test-catalog.md §L: E3–E6,
 * E8, E9, E11–E16, E18–E21) on the real kubelet and process runtime, with shortened
 * timings: initial delays 1–2 s (upstream 15), period 1 s (upstream default 10), the
 * liveness server failing after 3 s (upstream 10), and "must not restart" windows of
 * ~9 s instead of 4 min — always several periods past the point where the probe would
 * have failed. Independent scenarios share a kubelet and run concurrently.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Probe } from '../../src/api/types.js';
import {
  container,
  current,
  eventsWith,
  expectMonotonic,
  freePort,
  nodeFixture,
  pause,
  pod,
  probeCount,
  restartHistory,
  restarts,
  run,
  sh,
  startKubelet,
  statusOf,
  stopKubelets,
  waitEvent,
  waitRestarts,
  waitRunning,
  between,
  until,
} from './helpers.js';

afterEach(async ({ task }) => {
  await stopKubelets(task.id);
});

/** Upstream's "must not restart" observation (4 min), shortened. */
const NO_RESTART_WINDOW_MS = 9_000;
/** Upstream's "must restart within" (4 min), shortened; a restart is due after ~4 s. */
const RESTART_WITHIN_MS = 20_000;
const AGNHOST = 'agnhost-container';
const BUSYBOX = 'busybox';

function exec(command: string[], o: Partial<Probe> = {}): Probe {
  return { exec: { command }, periodSeconds: 1, ...o };
}

/** Waits out the rest of the "must not restart" window measured from `t0`. */
async function windowFrom(t0: number): Promise<void> {
  await pause(Math.max(0, t0 + NO_RESTART_WINDOW_MS - performance.now()));
}

describe.concurrent('e2e: liveness probes of regular containers', () => {
  it('E3/E4/E9/E11: exec liveness restarts on cat failure, exec timeout and a failing exec that outlives its timeout; not while the file exists', async ({ task }) => {
    const h = startKubelet(task.id);
    const health = (n: string): string => `${h.dir}/${n}-health`;
    const t0 = performance.now();
    run(
      h,
      // E3
      pod('e3', [
        container(h, BUSYBOX, sh(`echo ok >${health('e3')}; sleep 3; rm -rf ${health('e3')}; sleep 600`), {
          livenessProbe: exec(['cat', health('e3')], { initialDelaySeconds: 2, timeoutSeconds: 5, failureThreshold: 1 }),
        }),
      ]),
      // E3 under pod restartPolicy Never (§10.4): killed, not restarted, the pod fails
      pod(
        'e3-never',
        [
          container(h, BUSYBOX, sh(`echo ok >${health('e3n')}; sleep 3; rm -rf ${health('e3n')}; sleep 600`), {
            livenessProbe: exec(['cat', health('e3n')], { initialDelaySeconds: 2, timeoutSeconds: 5, failureThreshold: 1 }),
          }),
        ],
        { restartPolicy: 'Never' },
      ),
      // E4
      pod('e4', [
        container(h, BUSYBOX, sh(`echo ok >${health('e4')}; sleep 600`), {
          livenessProbe: exec(['cat', health('e4')], { initialDelaySeconds: 2, timeoutSeconds: 5, failureThreshold: 1 }),
        }),
      ]),
      // E9
      pod('e9', [
        container(h, BUSYBOX, ['sleep', '600'], {
          livenessProbe: exec(['/bin/sh', '-c', 'sleep 10'], { initialDelaySeconds: 2, timeoutSeconds: 1, failureThreshold: 1 }),
        }),
      ]),
      // E11
      pod('e11', [
        container(h, BUSYBOX, ['sleep', '600'], {
          livenessProbe: exec(['/bin/sh', '-c', 'sleep 10 & exit 1'], { initialDelaySeconds: 2, timeoutSeconds: 1, failureThreshold: 1 }),
        }),
      ]),
    );
    await Promise.all(['e3', 'e4', 'e9', 'e11'].map((p) => waitRunning(h, p, BUSYBOX)));
    await Promise.all(['e3', 'e9', 'e11'].map((p) => waitRestarts(h, p, BUSYBOX, 1, RESTART_WITHIN_MS)));

    expect(eventsWith(h, 'e3', 'Unhealthy', `Liveness probe failed: cat: ${health('e3')}: No such file or directory`)).not.toEqual([]);
    expect(eventsWith(h, 'e9', 'Unhealthy', 'Liveness probe failed: command timed out')).not.toEqual([]);
    for (const p of ['e3', 'e9', 'e11']) {
      expect(eventsWith(h, p, 'Killing', `Container ${BUSYBOX} failed liveness probe, will be restarted`)).not.toEqual([]);
      expectMonotonic(restartHistory(h, p, BUSYBOX));
    }

    // restartPolicy Never with nothing else running or to start: as the real kubelet 1.35 does (the
    // oracle's never-liveness-kill), computePodActions kills the whole pod, so the Killing event is
    // killContainer's own `Stopping container X`; SIGTERM ends it (143), nothing restarts it.
    await waitEvent(h, 'e3-never', 'Killing', 'Stopping container', 10_000);
    expect(eventsWith(h, 'e3-never', 'Killing', '').map((e) => e.message)).toEqual([`Stopping container ${BUSYBOX}`]);
    const never = await until(() => {
      const p = current(h, 'e3-never');
      return p?.status?.phase === 'Failed' ? p : undefined;
    }, 10_000);
    expect(statusOf(never, BUSYBOX)?.state?.terminated?.exitCode).toBe(143);

    await windowFrom(t0);
    expect(restartHistory(h, 'e3-never', BUSYBOX).every((n) => n === 0)).toBe(true);
    expect(restartHistory(h, 'e4', BUSYBOX).every((n) => n === 0)).toBe(true);
    expect(restarts(h, 'e4', BUSYBOX)).toBe(0);
    // The probe did run (and pass) all along: no restart is not for want of probing.
    expect(await probeCount(h, 'e4', BUSYBOX, 'Liveness', 'successful')).toBeGreaterThanOrEqual(3);
    expect(eventsWith(h, 'e4', 'Unhealthy', '')).toEqual([]);
  }, 40_000);

  it('E5/E6/E8/E12/E13: http liveness restarts on 500 and after a local redirect; not for tcp, a healthy server or a non-local redirect (ProbeWarning)', async ({ task }) => {
    const h = startKubelet(task.id);
    const [p5, p6, p8, p12, p13] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    const liveness = (port: number, probe: Probe) =>
      nodeFixture(h, AGNHOST, 'liveness.mjs', { PORT: String(port), HEALTHY_SECONDS: '3' }, { livenessProbe: probe });
    const t0 = performance.now();
    run(
      h,
      // E5
      pod('e5', [liveness(p5, { httpGet: { path: '/healthz', port: p5 }, initialDelaySeconds: 2, periodSeconds: 1, failureThreshold: 1 })]),
      // E6: the socket stays open while /healthz answers 500
      pod('e6', [liveness(p6, { tcpSocket: { port: p6 }, initialDelaySeconds: 2, periodSeconds: 1, failureThreshold: 1 })]),
      // E8
      pod('e8', [
        nodeFixture(h, AGNHOST, 'test-webserver.mjs', { PORT: String(p8) }, {
          livenessProbe: { httpGet: { path: '/', port: p8 }, initialDelaySeconds: 2, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 5 },
        }),
      ]),
      // E12
      pod('e12', [
        liveness(p12, { httpGet: { path: '/redirect?loc=%2Fhealthz', port: p12 }, initialDelaySeconds: 2, periodSeconds: 1, failureThreshold: 1 }),
      ]),
      // E13
      pod('e13', [
        liveness(p13, {
          httpGet: { path: '/redirect?loc=http%3A%2F%2F0.0.0.0%2F', port: p13 },
          initialDelaySeconds: 2,
          periodSeconds: 1,
          failureThreshold: 1,
        }),
      ]),
    );
    await Promise.all(['e5', 'e6', 'e8', 'e12', 'e13'].map((p) => waitRunning(h, p, AGNHOST)));
    await Promise.all(['e5', 'e12'].map((p) => waitRestarts(h, p, AGNHOST, 1, RESTART_WITHIN_MS)));

    for (const p of ['e5', 'e12']) {
      // The local redirect was followed to /healthz, which fails with 500.
      expect(eventsWith(h, p, 'Unhealthy', 'Liveness probe failed: HTTP probe failed with statuscode: 500')).not.toEqual([]);
      expect(eventsWith(h, p, 'Killing', `Container ${AGNHOST} failed liveness probe, will be restarted`)).not.toEqual([]);
      expectMonotonic(restartHistory(h, p, AGNHOST));
    }
    // The server dies of the SIGTERM sent within the grace period: 128 + 15.
    const last5 = statusOf(current(h, 'e5'), AGNHOST)?.lastState?.terminated;
    expect(last5?.exitCode).toBe(143);
    expect(last5?.reason).toBe('Error');

    const warning = await waitEvent(h, 'e13', 'ProbeWarning', 'Probe terminated redirects, Response body: <a href="http://0.0.0.0/">Found</a>.', 10_000);
    expect(warning.type).toBe('Warning');
    expect(warning.message).toBe('Liveness probe warning: Probe terminated redirects, Response body: <a href="http://0.0.0.0/">Found</a>.\n\n');

    await windowFrom(t0);
    for (const p of ['e6', 'e8', 'e13']) {
      expect(restartHistory(h, p, AGNHOST).every((n) => n === 0), `${p} restarted`).toBe(true);
      expect(restarts(h, p, AGNHOST)).toBe(0);
    }
    // Probes ran all along; E6 well past the 3 s after which its /healthz would fail.
    expect(await probeCount(h, 'e6', AGNHOST, 'Liveness', 'successful')).toBeGreaterThanOrEqual(4);
    expect(await probeCount(h, 'e8', AGNHOST, 'Liveness', 'successful')).toBeGreaterThanOrEqual(4);
    // A warning counts as success for the verdict.
    expect(await probeCount(h, 'e13', AGNHOST, 'Liveness', 'successful')).toBeGreaterThanOrEqual(4);
    expect(eventsWith(h, 'e13', 'Killing', 'failed liveness probe')).toEqual([]);
  }, 40_000);

  it('E14/E15/E16: a failing startup probe restarts; a long startup probe holds liveness off; liveness kills once startup succeeded', async ({ task }) => {
    const h = startKubelet(task.id);
    const startupFile = `${h.dir}/e16-startup`;
    const t0 = performance.now();
    run(
      h,
      // E14
      pod('e14', [
        container(h, BUSYBOX, ['sleep', '600'], {
          livenessProbe: exec(['/bin/true'], { initialDelaySeconds: 2, failureThreshold: 1 }),
          startupProbe: exec(['/bin/false'], { initialDelaySeconds: 2, failureThreshold: 3 }),
        }),
      ]),
      // E15: startup would need 60 s to give up
      pod('e15', [
        container(h, BUSYBOX, ['sleep', '600'], {
          livenessProbe: exec(['/bin/false'], { initialDelaySeconds: 2, failureThreshold: 1 }),
          startupProbe: exec(['/bin/false'], { initialDelaySeconds: 2, failureThreshold: 60 }),
        }),
      ]),
      // E16
      pod('e16', [
        container(h, BUSYBOX, sh(`sleep 3; echo ok >${startupFile}; sleep 600`), {
          livenessProbe: exec(['/bin/false'], { initialDelaySeconds: 2, failureThreshold: 1 }),
          startupProbe: exec(['cat', startupFile], { initialDelaySeconds: 2, failureThreshold: 60 }),
        }),
      ]),
    );
    await Promise.all(['e14', 'e15', 'e16'].map((p) => waitRunning(h, p, BUSYBOX)));
    await Promise.all(['e14', 'e16'].map((p) => waitRestarts(h, p, BUSYBOX, 1, RESTART_WITHIN_MS)));

    expect(eventsWith(h, 'e14', 'Killing', `Container ${BUSYBOX} failed startup probe, will be restarted`)).not.toEqual([]);
    expect(eventsWith(h, 'e14', 'Killing', 'failed liveness probe')).toEqual([]);
    expect(eventsWith(h, 'e16', 'Killing', `Container ${BUSYBOX} failed liveness probe, will be restarted`)).not.toEqual([]);
    expect(eventsWith(h, 'e16', 'Killing', 'failed startup probe')).toEqual([]);
    for (const p of ['e14', 'e16']) expectMonotonic(restartHistory(h, p, BUSYBOX));

    await windowFrom(t0);
    expect(restartHistory(h, 'e15', BUSYBOX).every((n) => n === 0)).toBe(true);
    // Startup kept failing below its threshold; liveness never ran at all.
    expect(eventsWith(h, 'e15', 'Unhealthy', 'Startup probe failed').length).toBeGreaterThan(0);
    expect(await probeCount(h, 'e15', BUSYBOX, 'Startup', 'failed')).toBeGreaterThanOrEqual(4);
    expect(eventsWith(h, 'e15', 'Unhealthy', 'Liveness probe')).toEqual([]);
    expect(await probeCount(h, 'e15', BUSYBOX, 'Liveness', 'failed')).toBe(0);
    expect(statusOf(current(h, 'e15'), BUSYBOX)?.started).toBe(false);
  }, 40_000);

  it('E18/E19: the probe-level terminationGracePeriodSeconds (2 s) beats the pod grace (500 s) for liveness and startup kills; SIGKILL after grace → 137', async ({ task }) => {
    const h = startKubelet(task.id);
    const closed = await freePort();
    // Ignores SIGTERM (inherited by sleep): only the SIGKILL after the grace period ends it.
    const stubborn = sh('trap "" TERM; sleep 1000');
    run(
      h,
      // E18
      pod(
        'e18',
        [
          container(h, BUSYBOX, stubborn, {
            livenessProbe: {
              httpGet: { path: '/healthz', port: closed },
              initialDelaySeconds: 1,
              periodSeconds: 1,
              failureThreshold: 1,
              terminationGracePeriodSeconds: 2,
            },
          }),
        ],
        { terminationGracePeriodSeconds: 500 },
      ),
      // E19
      pod(
        'e19',
        [
          container(h, BUSYBOX, stubborn, {
            livenessProbe: exec(['/bin/true'], { initialDelaySeconds: 1, failureThreshold: 1 }),
            startupProbe: exec(['/bin/cat', `${h.dir}/never`], { initialDelaySeconds: 1, failureThreshold: 1, terminationGracePeriodSeconds: 2 }),
          }),
        ],
        { terminationGracePeriodSeconds: 500 },
      ),
    );
    await Promise.all(['e18', 'e19'].map((p) => waitRunning(h, p, BUSYBOX)));
    // initial delay 1 s + a period + grace 2 s; the pod's grace would take 500 s.
    await Promise.all(['e18', 'e19'].map((p) => waitRestarts(h, p, BUSYBOX, 1, 15_000)));

    expect(eventsWith(h, 'e18', 'Unhealthy', `Liveness probe failed: Get "http://127.0.0.1:${closed}/healthz": dial tcp 127.0.0.1:${closed}: connect: connection refused`)).not.toEqual([]);
    expect(eventsWith(h, 'e18', 'Killing', `Container ${BUSYBOX} failed liveness probe, will be restarted`)).not.toEqual([]);
    expect(eventsWith(h, 'e19', 'Killing', `Container ${BUSYBOX} failed startup probe, will be restarted`)).not.toEqual([]);
    for (const p of ['e18', 'e19']) {
      const last = statusOf(current(h, p), BUSYBOX)?.lastState?.terminated;
      expect(last?.exitCode, `${p} exit code`).toBe(137);
      // It lived through the grace period before the SIGKILL (initial delay 1 s + grace 2 s).
      expect(between(last?.startedAt, last?.finishedAt)).toBeGreaterThanOrEqual(2_500);
    }
  }, 40_000);

  it('E20/E21: gRPC liveness does not restart a SERVING server; restarts when probing the wrong port', async ({ task }) => {
    const h = startKubelet(task.id);
    const [g20, g21, wrong] = await Promise.all([freePort(), freePort(), freePort()]);
    const grpcServer = (port: number, probePort: number) =>
      nodeFixture(h, AGNHOST, 'grpc-health.mjs', { GRPC_PORT: String(port) }, {
        livenessProbe: { grpc: { port: probePort }, initialDelaySeconds: 2, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 1 },
      });
    const t0 = performance.now();
    run(h, pod('e20', [grpcServer(g20, g20)]), pod('e21', [grpcServer(g21, wrong)]));
    await Promise.all(['e20', 'e21'].map((p) => waitRunning(h, p, AGNHOST)));
    await waitRestarts(h, 'e21', AGNHOST, 1, RESTART_WITHIN_MS);
    expect(eventsWith(h, 'e21', 'Unhealthy', 'Liveness probe failed:')).not.toEqual([]);
    expect(eventsWith(h, 'e21', 'Killing', `Container ${AGNHOST} failed liveness probe, will be restarted`)).not.toEqual([]);
    expectMonotonic(restartHistory(h, 'e21', AGNHOST));

    await windowFrom(t0);
    expect(restartHistory(h, 'e20', AGNHOST).every((n) => n === 0)).toBe(true);
    expect(await probeCount(h, 'e20', AGNHOST, 'Liveness', 'successful')).toBeGreaterThanOrEqual(4);
    expect(eventsWith(h, 'e20', 'Unhealthy', '')).toEqual([]);
  }, 40_000);
});
