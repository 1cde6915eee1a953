/**
 * The node e2e "Probing container" scenarios (kubelet-test-catalog.md: E1–E6, E8–E11,
 * E15–E17) on real containers, for every runtime that runs images (target.ts): the kubelet
 * over the runtime, busybox `httpd`/shell containers, HTTP and TCP probes dialling the pod IP
 * on the runtime's bridge, exec probes through ExecSync (CRI) or the exec API (Docker). Timings shortened as in test/e2e: initial delays 1–2 s, period
 * 1 s, "must not restart" windows of ~9 s instead of 4 min.
 */
import { afterEach, expect, it } from 'vitest';
import type { Probe } from '../../src/api/types.js';
import {
  between,
  condition,
  current,
  eventsWith,
  isReady,
  pause,
  restarts,
  run,
  statusOf,
  waitReady,
  waitRestarts,
  waitRunning,
  until,
} from '../e2e/helpers.js';
import { bb, httpd, pod, sh } from './helpers.js';
import type { RuntimeTarget } from './target.js';


const NO_RESTART_WINDOW_MS = 9_000;
const RESTART_WITHIN_MS = 25_000;
/** sh as PID 1 ignores SIGTERM: keep the kill grace short (the kubelet's minimum). */
const FAST_KILL = { terminationGracePeriodSeconds: 2 };

function exec(command: string[], o: Partial<Probe> = {}): Probe {
  return { exec: { command }, periodSeconds: 1, ...o };
}

export function probeScenarios(t: RuntimeTarget): void {
  afterEach(async ({ task }) => {
    await t.stop(task.id);
  });

  t.describe(`${t.name}: node e2e probe scenarios`, () => {
    it.concurrent(
      'E3/E4/E5/E6/E8/E9/E11: liveness restarts (exec cat, http 404 on the pod IP, exec timeout, failing exec outliving its timeout) with a new container ID; none for a present file, tcp, a healthy server',
      async ({ task }) => {
        const h = await t.start(task.id);
        const t0 = performance.now();
        run(
          h,
          pod('e3', [bb(h, 'c', sh('echo ok >/tmp/health; sleep 3; rm -rf /tmp/health; sleep 600'), { livenessProbe: exec(['cat', '/tmp/health'], { initialDelaySeconds: 2, timeoutSeconds: 5, failureThreshold: 1 }) })], FAST_KILL),
          pod('e4', [bb(h, 'c', sh('echo ok >/tmp/health; sleep 600'), { livenessProbe: exec(['cat', '/tmp/health'], { initialDelaySeconds: 2, timeoutSeconds: 5, failureThreshold: 1 }) })], FAST_KILL),
          pod('e5', [bb(h, 'c', httpd(8080, 3), { livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, initialDelaySeconds: 2, periodSeconds: 1, failureThreshold: 1 } })], FAST_KILL),
          pod('e6', [bb(h, 'c', httpd(8080, 3), { livenessProbe: { tcpSocket: { port: 8080 }, initialDelaySeconds: 2, periodSeconds: 1, failureThreshold: 1 } })], FAST_KILL),
          pod('e8', [bb(h, 'c', httpd(8080), { livenessProbe: { httpGet: { path: '/', port: 8080 }, initialDelaySeconds: 2, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 5 } })], FAST_KILL),
          pod('e9', [bb(h, 'c', ['sleep', '600'], { livenessProbe: exec(sh('sleep 10'), { initialDelaySeconds: 2, timeoutSeconds: 1, failureThreshold: 1 }) })], FAST_KILL),
          pod('e11', [bb(h, 'c', ['sleep', '600'], { livenessProbe: exec(sh('sleep 10 & exit 1'), { initialDelaySeconds: 2, timeoutSeconds: 1, failureThreshold: 1 }) })], FAST_KILL),
        );
        const first = await waitRunning(h, 'e3', 'c');
        // The pod IP is the sandbox's, on the runtime's bridge (169.254.X.0/24 of cri-up / docker-up), and the HTTP probe reached it.
        const e5IP = (await until(() => current(h, 'e5')?.status?.podIP, 10_000)) ?? '';
        expect(e5IP).toMatch(/^169\.254\.\d+\.\d+$/);
        expect(current(h, 'e6')?.status?.podIP).not.toBe(e5IP);

        // A restart is a new container (new ID) with restart count 1 and the old one in lastState.
        const restarted = await until(() => {
          const s = statusOf(current(h, 'e3'), 'c');
          return s?.restartCount === 1 && s.state?.running ? s : undefined;
        }, RESTART_WITHIN_MS);
        expect(restarted.containerID).not.toBe(first.containerID);
        expect(restarted.containerID).toMatch(new RegExp(`^${t.idScheme}[0-9a-f]{64}$`));
        expect(restarted.lastState?.terminated?.containerID).toBe(first.containerID);
        await Promise.all(['e5', 'e9', 'e11'].map((name) => waitRestarts(h, name, 'c', 1, RESTART_WITHIN_MS)));
        expect(eventsWith(h, 'e5', 'Unhealthy', 'Liveness probe failed: HTTP probe failed with statuscode: 404').length).toBeGreaterThan(0);
        // ExecSync's DeadlineExceeded is a probe timeout, worded as upstream's.
        expect(eventsWith(h, 'e9', 'Unhealthy', 'Liveness probe failed: command timed out').length).toBeGreaterThan(0);
        expect(eventsWith(h, 'e3', 'Killing', 'Container c failed liveness probe, will be restarted').length).toBeGreaterThan(0);
        expect(eventsWith(h, 'e3', 'Pulled', 'Container image "probelet.local/busybox:test" already present on machine and can be accessed by the pod')[0]?.count).toBeGreaterThanOrEqual(2);

        await pause(Math.max(0, t0 + NO_RESTART_WINDOW_MS - performance.now()));
        expect(['e4', 'e6', 'e8'].map((name) => restarts(h, name, 'c'))).toEqual([0, 0, 0]);
      },
      60_000,
    );

    it.concurrent(
      'E1/E2/E10/E17: Ready not before the initial delay; never Ready on a closed port or an exec timeout; Ready right after startup succeeds',
      async ({ task }) => {
        const h = await t.start(task.id);
        const t0 = performance.now();
        run(
          h,
          pod('e1', [bb(h, 'c', httpd(8080), { readinessProbe: { httpGet: { path: '/', port: 8080 }, initialDelaySeconds: 2, periodSeconds: 1 } })], FAST_KILL),
          pod('e2', [bb(h, 'c', httpd(8080), { readinessProbe: { httpGet: { path: '/', port: 81 }, periodSeconds: 1 } })], FAST_KILL),
          pod('e10', [bb(h, 'c', ['sleep', '600'], { readinessProbe: exec(['sleep', '10'], { initialDelaySeconds: 1, timeoutSeconds: 1, failureThreshold: 1 }) })], FAST_KILL),
          pod(
            'e17',
            [
              bb(h, 'c', sh('echo ok >/tmp/health; sleep 4; echo ok >/tmp/startup; sleep 600'), {
                readinessProbe: exec(['cat', '/tmp/health'], { periodSeconds: 30 }),
                startupProbe: exec(['cat', '/tmp/startup'], { periodSeconds: 1, failureThreshold: 120 }),
              }),
            ],
            FAST_KILL,
          ),
        );
        const e1 = await waitReady(h, 'e1', 15_000);
        const running = statusOf(e1, 'c')?.state?.running;
        expect(between(running?.startedAt, condition(e1, 'Ready')?.lastTransitionTime)).toBeGreaterThanOrEqual(2000);

        const started = await until(() => (statusOf(current(h, 'e17'), 'c')?.started ? performance.now() : undefined), 20_000);
        const ready = await until(() => (isReady(current(h, 'e17')) ? performance.now() : undefined), 20_000);
        expect(ready - started).toBeLessThan(3_000);

        await pause(Math.max(0, t0 + NO_RESTART_WINDOW_MS - performance.now()));
        for (const name of ['e2', 'e10']) {
          expect((h.history.get(name) ?? []).some((s) => isReady(s.pod)), `${name} was Ready`).toBe(false);
        }
        expect(eventsWith(h, 'e2', 'Unhealthy', 'Readiness probe failed: Get "http://').length).toBeGreaterThan(0);
        expect(eventsWith(h, 'e10', 'Unhealthy', 'Readiness probe failed: command timed out').length).toBeGreaterThan(0);
        expect(['e1', 'e2', 'e10', 'e17'].map((name) => restarts(h, name, 'c'))).toEqual([0, 0, 0, 0]);
      },
      60_000,
    );

    it.concurrent(
      'E15/E16: a long startup probe holds a failing liveness probe off; liveness kills once startup succeeded',
      async ({ task }) => {
        const h = await t.start(task.id);
        const t0 = performance.now();
        run(
          h,
          pod(
            'e15',
            [
              bb(h, 'c', ['sleep', '600'], {
                livenessProbe: exec(['/bin/false'], { initialDelaySeconds: 1, failureThreshold: 1 }),
                startupProbe: exec(['/bin/false'], { initialDelaySeconds: 1, failureThreshold: 60 }),
              }),
            ],
            FAST_KILL,
          ),
          pod(
            'e16',
            [
              bb(h, 'c', sh('sleep 3; echo ok >/tmp/startup; sleep 600'), {
                livenessProbe: exec(['/bin/false'], { initialDelaySeconds: 1, failureThreshold: 1 }),
                startupProbe: exec(['cat', '/tmp/startup'], { initialDelaySeconds: 1, failureThreshold: 60 }),
              }),
            ],
            FAST_KILL,
          ),
        );
        await waitRestarts(h, 'e16', 'c', 1, RESTART_WITHIN_MS);
        await pause(Math.max(0, t0 + NO_RESTART_WINDOW_MS - performance.now()));
        expect(restarts(h, 'e15', 'c')).toBe(0);
      },
      60_000,
    );
  });
}
