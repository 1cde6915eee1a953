/**
 * Node e2e "Probing container", readiness (kubelet-test-catalog.md §L: E2, E10, E17, E22,
 * E23; E1 is in initial-delay.test.ts) on the real kubelet and process runtime. Shortened:
 * initial delay 2 s (upstream 15), "never Ready" windows of ~8 s (upstream 60 s), startup period 1 s with the
 * readiness period kept at 30 s for E17 (Ready due within 5 s of started instead of 25),
 * SIGTERM handlers sleeping 3 s (upstream 20–30) under the pod's 30 s grace.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod, Probe } from '../../src/api/types.js';
import {
  container,
  current,
  eventsWith,
  freePort,
  isReady,
  nodeFixture,
  pause,
  pod,
  probeCount,
  restarts,
  run,
  sh,
  startKubelet,
  statusOf,
  stopKubelets,
  waitReady,
  waitRunning,
  type Harness,
  type Seen,
  until,
} from './helpers.js';

afterEach(async ({ task }) => {
  await stopKubelets(task.id);
});

const NEVER_READY_WINDOW_MS = 8_000;
const WEB = 'test-webserver';
const BUSYBOX = 'busybox';

function exec(command: string[], o: Partial<Probe> = {}): Probe {
  return { exec: { command }, periodSeconds: 1, ...o };
}

/** The statuses of `podName` seen from `sinceMs` on (performance.now() time). */
function seenSince(h: Harness, podName: string, sinceMs: number): Seen[] {
  return (h.history.get(podName) ?? []).filter((s) => s.atMs >= sinceMs);
}

describe.concurrent('e2e: readiness probes of regular containers', () => {
  it('E2/E10: never Ready with a failing (closed port) or timing-out (exec) readiness probe, never restarted', async ({ task }) => {
    const h = startKubelet(task.id);
    const [p2, closed] = await Promise.all([freePort(), freePort()]);
    const t0 = performance.now();
    run(
      h,
      // E2: nothing listens on the probed port
      pod('e2', [
        nodeFixture(h, WEB, 'test-webserver.mjs', { PORT: String(p2) }, {
          readinessProbe: { httpGet: { path: '/', port: closed }, periodSeconds: 1 },
        }),
      ]),
      // E10
      pod('e10', [
        container(h, BUSYBOX, ['sleep', '600'], {
          readinessProbe: exec(['/bin/sh', '-c', 'sleep 10'], { initialDelaySeconds: 2, timeoutSeconds: 1, failureThreshold: 1 }),
        }),
      ]),
    );
    await waitRunning(h, 'e2', WEB);
    await waitRunning(h, 'e10', BUSYBOX);
    await pause(Math.max(0, t0 + NEVER_READY_WINDOW_MS - performance.now()));
    for (const p of ['e2', 'e10']) {
      const seen = h.history.get(p) ?? [];
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.filter((s) => isReady(s.pod)).length, `${p} was Ready`).toBe(0);
      expect(isReady(current(h, p))).toBe(false);
      expect(current(h, p)?.status?.phase).toBe('Running');
    }
    // The probes did run and fail all along.
    expect(
      eventsWith(h, 'e2', 'Unhealthy', `Readiness probe failed: Get "http://127.0.0.1:${closed}/": dial tcp 127.0.0.1:${closed}: connect: connection refused`),
    ).not.toEqual([]);
    expect(eventsWith(h, 'e10', 'Unhealthy', 'Readiness probe failed: command timed out')).not.toEqual([]);
    expect(await probeCount(h, 'e2', WEB, 'Readiness', 'failed')).toBeGreaterThanOrEqual(4);
    expect(await probeCount(h, 'e10', BUSYBOX, 'Readiness', 'failed')).toBeGreaterThanOrEqual(2);
    expect(restarts(h, 'e2', WEB) + restarts(h, 'e10', BUSYBOX)).toBe(0);
  }, 30_000);

  it('E17: Ready right after the startup probe succeeds, not at the next 30 s readiness tick', async ({ task }) => {
    const h = startKubelet(task.id);
    const healthFile = `${h.dir}/health`;
    const startupFile = `${h.dir}/startup`;
    run(
      h,
      pod('e17', [
        container(h, BUSYBOX, sh(`echo ok >${healthFile}; sleep 3; echo ok >${startupFile}; sleep 600`), {
          readinessProbe: exec(['/bin/cat', healthFile], { initialDelaySeconds: 0, periodSeconds: 30 }),
          startupProbe: exec(['/bin/cat', startupFile], { initialDelaySeconds: 0, failureThreshold: 120, periodSeconds: 1 }),
        }),
      ]),
    );
    await waitReady(h, 'e17', 20_000);
    const seen = h.history.get('e17') ?? [];
    const t0 = seen.find((s) => statusOf(s.pod, BUSYBOX)?.started === true)?.atMs;
    const t1 = seen.find((s) => isReady(s.pod))?.atMs;
    expect(t0).toBeDefined();
    expect(t1).toBeDefined();
    const delay = (t1 ?? 0) - (t0 ?? 0);
    expect(delay).toBeGreaterThanOrEqual(0);
    expect(delay).toBeLessThanOrEqual(5_000);
    // The startup probe did have to wait for the file (it failed first).
    expect(await probeCount(h, 'e17', BUSYBOX, 'Startup', 'failed')).toBeGreaterThanOrEqual(1);
    expect(current(h, 'e17')?.status?.phase).toBe('Running');
    expect(restarts(h, 'e17', BUSYBOX)).toBe(0);
  }, 30_000);

  /** E22/E23's container: on SIGTERM remove the files, linger 3 s, exit 0. */
  function terminatingApp(h: Harness, name: string, withLiveness: boolean): Pod {
    const ready = `${h.dir}/${name}-ready`;
    const live = `${h.dir}/${name}-liveness`;
    const files = withLiveness ? `${ready} ${live}` : ready;
    return pod(
      name,
      [
        container(h, BUSYBOX, sh(`trap 'rm -f ${files}; sleep 3; exit 0' TERM; touch ${files}; while true; do sleep 0.2; done`), {
          readinessProbe: exec(['cat', ready], { initialDelaySeconds: 1, failureThreshold: 1 }),
          ...(withLiveness ? { livenessProbe: exec(['cat', live], { initialDelaySeconds: 1, failureThreshold: 1 }) } : {}),
        }),
      ],
      { terminationGracePeriodSeconds: 30 },
    );
  }

  /**
   * Deletes the pod (not awaited) and waits for Ready=False; returns when the deletion
   * started, the first not-Ready status after it, and the deletion's promise.
   */
  async function deleteAndWatch(h: Harness, admitted: Pod): Promise<{ since: number; notReady: Seen; deleting: Promise<void> }> {
    const name = admitted.metadata?.name ?? '';
    await waitReady(h, name, 15_000);
    const since = performance.now();
    const deleting = h.kubelet.deletePod(admitted.metadata?.uid ?? '');
    const notReady = await until(() => seenSince(h, name, since).find((s) => !isReady(s.pod)), 10_000);
    return { since, notReady, deleting };
  }

  it('E22: readiness goes False while the pod is terminating, before its container exits', async ({ task }) => {
    const h = startKubelet(task.id);
    const [admitted] = run(h, terminatingApp(h, 'e22', false));
    if (!admitted) throw new Error('not admitted');
    const { notReady, deleting } = await deleteAndWatch(h, admitted);
    // Not Ready while the container still runs: the readiness probe saw the file go.
    expect(statusOf(notReady.pod, BUSYBOX)?.state?.running).toBeDefined();
    expect(notReady.pod.metadata?.deletionTimestamp).toBeDefined();
    await deleting;
    // It was given the pod's grace (30 s) and left on its own after its 3 s.
    const end = statusOf(current(h, 'e22'), BUSYBOX)?.state?.terminated;
    expect(end?.exitCode).toBe(0);
    expect(eventsWith(h, 'e22', 'Killing', `Stopping container ${BUSYBOX}`)).not.toEqual([]);
    expect(eventsWith(h, 'e22', 'Unhealthy', 'Readiness probe failed')).not.toEqual([]);
  }, 30_000);

  it('E23: readiness goes False and liveness stops killing while the pod is terminating', async ({ task }) => {
    const h = startKubelet(task.id);
    const [admitted] = run(h, terminatingApp(h, 'e23', true));
    if (!admitted) throw new Error('not admitted');
    await until(async () => ((await probeCount(h, 'e23', BUSYBOX, 'Liveness', 'successful')) >= 1 ? true : undefined), 15_000);
    const { notReady, deleting } = await deleteAndWatch(h, admitted);
    expect(statusOf(notReady.pod, BUSYBOX)?.state?.running).toBeDefined();
    await deleting;
    await pause(1_000);
    // The liveness file was gone for 3 s with a period of 1 s and failure threshold 1.
    expect(eventsWith(h, 'e23', 'Killing', 'failed liveness probe')).toEqual([]);
    expect(eventsWith(h, 'e23', 'Unhealthy', 'Readiness probe failed')).not.toEqual([]);
    expect(statusOf(current(h, 'e23'), BUSYBOX)?.state?.terminated?.exitCode).toBe(0);
    expect(restarts(h, 'e23', BUSYBOX)).toBe(0);
  }, 30_000);
});
