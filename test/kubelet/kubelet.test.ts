/**
 * The local kubelet's state machine over a scripted runtime and a scripted prober, driven by
 * the FakeClock: back-off sequence and reset, probe-triggered kills and their grace periods,
 * the sync ordering, sidecars, init containers and termination (§3.9, §10).
 */
import { describe, expect, it, vi } from 'vitest';
import type { Container, Pod } from '../../src/api/types.js';
import { Kubelet, killGracePeriodSeconds } from '../../src/kubelet/kubelet.js';
import type { ProbeType, Result } from '../../src/prober/types.js';
import { FakeClock } from '../../src/util/clock.js';
import { FakeRuntime } from '../helpers/fake-runtime.js';
import { closeKubeletsAfterEach } from '../helpers/kubelets.js';

const T0 = Date.UTC(2026, 0, 1);

/** Probe verdicts by `<container>/<kind>`, changeable while the test runs; default success. */
function scriptedProber(): { verdicts: Map<string, Result>; probe: (t: ProbeType, p: Pod, s: unknown, c: Container) => Promise<{ result: Result }> } {
  const verdicts = new Map<string, Result>();
  return {
    verdicts,
    probe: async (t, _p, _s, c) => ({ result: verdicts.get(`${c.name}/${t}`) ?? 'success' }),
  };
}

interface Harness {
  clock: FakeClock;
  runtime: FakeRuntime;
  kubelet: Kubelet;
  verdicts: Map<string, Result>;
  pod(name?: string): Pod;
  events(): string[];
}

const harnesses = closeKubeletsAfterEach();

/**
 * `random` 0.5 unless a test says otherwise; the back-off tests pass 0, so that the pod worker
 * requeues a throttled pod at the back-off's expiry itself (no +50 % jitter) and the steps show.
 */
function harness(pods: Pod[], options: { maxContainerRestartPeriodMs?: number; random?: () => number } = {}): Harness {
  const clock = new FakeClock(T0);
  const runtime = new FakeRuntime(clock);
  const prober = scriptedProber();
  const kubelet = new Kubelet({ runtime, clock, random: () => 0.5, prober, ...options });
  harnesses.push(kubelet);
  const result = kubelet.addPods(pods);
  expect(result.errors).toEqual([]);
  return {
    clock,
    runtime,
    kubelet,
    verdicts: prober.verdicts,
    pod: (name = pods[0]?.metadata?.name) => {
      const p = kubelet.listPods().find((x) => x.metadata?.name === name);
      if (!p) throw new Error(`no pod ${name}`);
      return p;
    },
    events: () => kubelet.listEvents().map((e) => `${e.type} ${e.reason} ${e.message}${(e.count ?? 1) > 1 ? ` (x${e.count})` : ''}`),
  };
}

function podOf(containers: Container[], extra: Partial<NonNullable<Pod['spec']>> = {}, name = 'web'): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: `uid-${name}` }, spec: { containers, ...extra } };
}

const app = (extra: Partial<Container> = {}): Container => ({ name: 'app', image: 'img', command: ['app'], ...extra });

async function settle(clock: FakeClock, ms = 0): Promise<void> {
  await clock.advance(ms);
}

describe('crash-loop back-off (§10.7)', () => {
  it('restarts at once, then after 10 s, 20 s, 40 s … capped at 300 s, with CrashLoopBackOff and BackOff events', async () => {
    const h = harness([podOf([app()])], { random: () => 0 });
    await settle(h.clock);
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const running = h.runtime.running('app');
      expect(running).toBeDefined();
      h.runtime.exit(running!.id, 1);
      const exitedAt = h.clock.now();
      await settle(h.clock);
      let waited = 0;
      while (h.runtime.running('app') === undefined) {
        await h.clock.advance(1000);
        waited = h.clock.now() - exitedAt;
        if (waited > 400_000) throw new Error('never restarted');
      }
      delays.push(Math.round(waited / 1000));
    }
    expect(delays).toEqual([0, 10, 20, 40, 80, 160, 300, 300]);
    expect(h.pod().status?.containerStatuses?.[0]?.restartCount).toBe(8);
    expect(h.events()).toContainEqual(expect.stringMatching(/^Warning BackOff Back-off restarting failed container app in pod web_default\(uid-web\)/));
  });

  it('CrashLoopBackOff shows from the sync after the one that backed off (reasonCache): terminated until then', async () => {
    // kubelet.go SyncPod: generateAPIPodStatus first, the runtime's SyncPod (doBackOff) next,
    // reasonCache.Update last — so the waiting reason reaches the status only at the pod's
    // next sync: here (no probe, no other trigger) the requeue at the back-off's expiry,
    // where the container restarts at once. A crash loop reads 'Error' until then.
    const h = harness([podOf([app()])], { random: () => 0 });
    await settle(h.clock);
    const seen: string[] = [];
    h.kubelet.onPodStatus((p) => {
      const state = p.status?.containerStatuses?.[0]?.state;
      const s = state?.waiting ? `waiting ${state.waiting.reason} ${state.waiting.message ?? ''}` : state?.terminated ? `terminated ${state.terminated.exitCode}` : 'running';
      if (seen.at(-1) !== s) seen.push(s);
    });
    // 1st crash: restart at once (no entry). 2nd: 10 s back-off.
    h.runtime.exit(h.runtime.running('app')!.id, 1);
    await settle(h.clock, 1000);
    seen.length = 0;
    h.runtime.exit(h.runtime.running('app')!.id, 1);
    await settle(h.clock, 5000);
    expect(h.events()).toContainEqual(expect.stringMatching(/^Warning BackOff Back-off restarting failed container app in pod web_default\(uid-web\)/));
    expect(h.pod().status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(1);
    expect(seen).toEqual(['terminated 1']);
    await settle(h.clock, 6000);
    expect(h.runtime.running('app')).toBeDefined();
    expect(seen).toEqual(['terminated 1', 'waiting CrashLoopBackOff back-off 10s restarting failed container=app pod=web_default(uid-web)', 'running']);
    expect(h.pod().status?.containerStatuses?.[0]?.lastState?.terminated?.exitCode).toBe(1);
  });

  it('starts over at the initial delay after a container ran for more than 600 s', async () => {
    const h = harness([podOf([app()])], { random: () => 0 });
    await settle(h.clock);
    const crash = async (): Promise<number> => {
      h.runtime.exit(h.runtime.running('app')!.id, 1);
      const at = h.clock.now();
      await settle(h.clock);
      while (!h.runtime.running('app')) await h.clock.advance(1000);
      return Math.round((h.clock.now() - at) / 1000);
    };
    expect([await crash(), await crash(), await crash()]).toEqual([0, 10, 20]);
    await h.clock.advance(601_000);
    expect(await crash()).toBe(0);
    expect(await crash()).toBe(10);
  });

  it('a lower node cap (crashLoopBackOff.maxContainerRestartPeriod) lowers both the steps and the initial delay', async () => {
    const h = harness([podOf([app()])], { maxContainerRestartPeriodMs: 2000, random: () => 0 });
    await settle(h.clock);
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      h.runtime.exit(h.runtime.running('app')!.id, 1);
      const at = h.clock.now();
      await settle(h.clock);
      while (!h.runtime.running('app')) await h.clock.advance(500);
      delays.push((h.clock.now() - at) / 1000);
    }
    expect(delays).toEqual([0, 2, 2, 2]);
  });

  it('the pod worker requeues a throttled pod at the expiry, capped at the 60 s resync, jittered up to +50 % (completeWork)', async () => {
    for (const [random, expected] of [
      [0, [0, 10, 20, 40, 80, 160, 300]],
      // 1.5 × the remaining step, the remaining time capped at 60 s at each requeue:
      // 80 → 60 × 1.5 = 90; 160 → 90, then 70 left → 60 × 1.5 = 90 → 180; 300 → 90, 90, 90, then 30 → 45: 315.
      [1, [0, 15, 30, 60, 90, 180, 315]],
    ] as const) {
      const h = harness([podOf([app()])], { random: () => random });
      await settle(h.clock);
      const delays: number[] = [];
      for (let i = 0; i < expected.length; i++) {
        h.runtime.exit(h.runtime.running('app')!.id, 1);
        const at = h.clock.now();
        await settle(h.clock);
        while (!h.runtime.running('app')) await h.clock.advance(1000);
        delays.push(Math.round((h.clock.now() - at) / 1000));
      }
      expect(delays).toEqual(expected);
    }
  });
});

describe('the pod worker after a back-off (completeWork)', () => {
  it('a sync that backs off is requeued once, by the back-off: no resync of its own that could come earlier', async () => {
    // completeWork enqueues the back-off's requeue *instead of* the resync. Crashes 1–4 take
    // the steps 0, 10, 20, 40 s; the 5th crash meets an 80 s step. Its sync draws 1 for the
    // requeue (60 s cap × 1.5 = 90 s); the next draw is 0. Upstream restarts at 90 s; a
    // resync drawn beside it (60 s × 1.0) would sync at 60 s, requeue the 20 s left and restart at 80 s.
    const draws: number[] = [];
    const h = harness([podOf([app()])], { random: () => draws.shift() ?? 0 });
    await settle(h.clock);
    const crash = async (): Promise<number> => {
      h.runtime.exit(h.runtime.running('app')!.id, 1);
      const at = h.clock.now();
      await settle(h.clock);
      while (!h.runtime.running('app')) await h.clock.advance(1000);
      return Math.round((h.clock.now() - at) / 1000);
    };
    expect([await crash(), await crash(), await crash(), await crash()]).toEqual([0, 10, 20, 40]);
    draws.push(1, 0);
    expect(await crash()).toBe(90);
  });
});

describe('back-off after a probe kill (doBackOff reads the status from before the kill)', () => {
  /** Kills, starts and BackOff events (seconds from the first start) of a container whose liveness always fails. */
  async function probeKillTimeline(h: Harness, spanMs: number): Promise<{ starts: number[]; kills: number[]; firstBackOff: number | undefined }> {
    await settle(h.clock);
    const t0 = h.clock.now();
    const starts: number[] = [];
    const kills: number[] = [];
    let firstBackOff: number | undefined;
    h.kubelet.recorder.subscribeLog((e) => {
      const t = Math.round((h.clock.now() - t0) / 1000);
      if (e.reason === 'Started') starts.push(t);
      if (e.reason === 'Killing') kills.push(t);
      if (e.reason === 'BackOff') firstBackOff ??= t;
    });
    h.verdicts.set('app/liveness', 'failure');
    for (let ms = 0; ms < spanMs; ms += 1000) await h.clock.advance(1000);
    return { starts, kills, firstBackOff };
  }

  it('restarts at once while the back-off step is shorter than a run, then CrashLoopBackOff from the older exit', async () => {
    // liveness P=10 F=3 that never passes: every instance lives 30 s. The kubelet restarts at
    // once for the 1st kill (no exited instance: no entry), then the gate measures from the
    // exit *before* the killed one (30 s ago) against 10 s, 20 s, 40 s: only at the 5th kill
    // (150 s) is 30 s < 40 s, and the restart waits until 150 + 40.
    const h = harness([podOf([app({ livenessProbe: { exec: { command: ['x'] }, periodSeconds: 10, failureThreshold: 3 } })])], { random: () => 0 });
    const { starts, kills, firstBackOff } = await probeKillTimeline(h, 600_000);
    const first = kills[0] ?? NaN;
    expect(first).toBe(30);
    expect(kills.slice(0, 5)).toEqual([30, 60, 90, 120, 150]);
    // Restarts at once for the first four kills; from the fifth, the step since the kill.
    const waits = kills.map((k) => (starts.find((s) => s >= k) ?? NaN) - k);
    expect(waits.slice(0, 7)).toEqual([0, 0, 0, 0, 40, 80, 160]);
    expect((firstBackOff ?? NaN) - first).toBe(120);
  });

  it('a sidecar (restartable init container) killed by liveness follows the same rule: at once for four kills, back-off from the fifth', async () => {
    // computeInitContainerActions kills it and puts it in InitContainersToStart in one pass; its
    // start goes through the same doBackOff over the status read before the kill.
    const proxy: Container = {
      name: 'proxy',
      image: 'img',
      command: ['proxy'],
      restartPolicy: 'Always',
      livenessProbe: { exec: { command: ['x'] }, periodSeconds: 10, failureThreshold: 3 },
    };
    const h = harness([podOf([app()], { initContainers: [proxy] })], { random: () => 0 });
    await settle(h.clock);
    const t0 = h.clock.now();
    const starts: number[] = [];
    const kills: number[] = [];
    h.kubelet.recorder.subscribeLog((e) => {
      const t = Math.round((h.clock.now() - t0) / 1000);
      if (e.involvedObject?.fieldPath !== 'spec.initContainers{proxy}') return;
      if (e.reason === 'Started') starts.push(t);
      if (e.reason === 'Killing') kills.push(t);
    });
    h.verdicts.set('proxy/liveness', 'failure');
    for (let ms = 0; ms < 400_000; ms += 1000) await h.clock.advance(1000);
    expect(kills.slice(0, 5)).toEqual([30, 60, 90, 120, 150]);
    const waits = kills.map((k) => (starts.find((s) => s >= k) ?? NaN) - k);
    expect(waits.slice(0, 6)).toEqual([0, 0, 0, 0, 40, 80]);
    expect(h.events()).toContainEqual(expect.stringMatching(/^Normal Killing Init container proxy failed liveness probe/));
  });

  it('a sidecar in back-off after exiting 0 shows terminated (Completed), not CrashLoopBackOff; after a non-zero exit, CrashLoopBackOff (never Error: each exit comes with a back-off or a restart)', async () => {
    // convertToAPIContainerStatuses (kubelet_pods.go): for init containers, the reasonCache's
    // waiting reason is skipped when the newest instance exited 0 — sidecars included, although
    // they are restarted (the oracle's sidecar-liveness-kill: `trap "exit 0" TERM`).
    const waitingOf = async (onTerm: number): Promise<string[]> => {
      const proxy: Container = {
        name: 'proxy',
        image: 'img',
        command: ['proxy'],
        restartPolicy: 'Always',
        livenessProbe: { exec: { command: ['x'] }, periodSeconds: 2, failureThreshold: 1 },
      };
      const h = harness([podOf([app()], { initContainers: [proxy] }, `web-${onTerm}`)], { random: () => 0 });
      h.runtime.behaviour.set('proxy', { onTerm });
      await settle(h.clock);
      const seen = new Set<string>();
      h.kubelet.onPodStatus((p) => {
        const s = p.status?.initContainerStatuses?.[0]?.state;
        seen.add(s?.waiting ? `waiting ${s.waiting.reason}` : s?.terminated ? `terminated ${s.terminated.reason}` : 'running');
      });
      h.verdicts.set('proxy/liveness', 'failure');
      for (let ms = 0; ms < 60_000; ms += 1000) await h.clock.advance(1000);
      expect(h.events()).toContainEqual(expect.stringMatching(/^Warning BackOff Back-off restarting failed container proxy/));
      return [...seen].sort();
    };
    expect(await waitingOf(0)).toEqual(['running', 'terminated Completed']);
    expect(await waitingOf(143)).toEqual(['running', 'waiting CrashLoopBackOff']);
  });

  it('a crash (no probe) still measures from the instance that exited: restarts at once, then after 10 s, 20 s', async () => {
    const h = harness([podOf([app({ livenessProbe: { exec: { command: ['x'] }, periodSeconds: 10, failureThreshold: 3 } })])], { random: () => 0 });
    await settle(h.clock);
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      h.runtime.exit(h.runtime.running('app')!.id, 1);
      const at = h.clock.now();
      await settle(h.clock);
      while (!h.runtime.running('app')) await h.clock.advance(1000);
      delays.push(Math.round((h.clock.now() - at) / 1000));
    }
    expect(delays).toEqual([0, 10, 20]);
  });
});

describe('the PLEG relist (relistPhaseMs, as simulate runs the kubelet)', () => {
  it("a pod's next sync waits for the first relist after its last sync ended: a new container shows from then on", async () => {
    const clock = new FakeClock(T0);
    const runtime = new FakeRuntime(clock);
    const kubelet = new Kubelet({ runtime, clock, random: () => 0.5, prober: scriptedProber(), relistPhaseMs: 300 });
    harnesses.push(kubelet);
    kubelet.addPods([podOf([app()])]);
    const state = (): string => Object.keys(kubelet.listPods()[0]?.status?.containerStatuses?.[0]?.state ?? {}).join();
    await clock.advance(0);
    // The first sync started the container at once; the status that shows it waits for the relist at +300 ms.
    expect(runtime.running('app')).toBeDefined();
    expect(state()).toBe('waiting');
    await clock.advance(299);
    expect(state()).toBe('waiting');
    await clock.advance(1);
    expect(state()).toBe('running');
    // A crash is acted on at once when a relist has come since the last sync ended…
    await clock.advance(2_000);
    runtime.exit(runtime.running('app')!.id, 1);
    await clock.advance(0);
    expect(runtime.running('app')).toBeDefined();
    // …and its restart shows at the next relist, a second later (the crash came at a relist instant).
    expect(state()).toBe('terminated');
    await clock.advance(999);
    expect(state()).toBe('terminated');
    await clock.advance(1);
    expect(state()).toBe('running');
  });
});

describe('the PLEG relist sees a crash (relistPhaseMs)', () => {
  it('a container that exits between relists is restarted at the next relist, not at its exit', async () => {
    const clock = new FakeClock(T0);
    const runtime = new FakeRuntime(clock);
    const kubelet = new Kubelet({ runtime, clock, random: () => 0.5, prober: scriptedProber(), relistPhaseMs: 300 });
    harnesses.push(kubelet);
    kubelet.addPods([podOf([app()])]);
    await clock.advance(2_600);
    const first = runtime.running('app')!;
    // Exits at +2.6 s; the relists fall at +3.3 s, +4.3 s …: nothing knows of it before +3.3 s.
    runtime.exit(first.id, 1);
    await clock.advance(699);
    expect(runtime.running('app')).toBeUndefined();
    await clock.advance(1);
    expect(runtime.running('app')?.id).not.toBe(first.id);
    expect(runtime.running('app')).toBeDefined();
  });
});

describe('probe-driven kills (§10.4, §10.6)', () => {
  it('liveness Failure: Killing event, probe-level grace beats the pod grace, restart, new container probed afresh', async () => {
    const h = harness([
      podOf([app({ livenessProbe: { exec: { command: ['x'] }, periodSeconds: 1, failureThreshold: 3, terminationGracePeriodSeconds: 5 } })], {
        terminationGracePeriodSeconds: 500,
      }),
    ]);
    h.runtime.behaviour.set('app', { onTerm: undefined }); // ignores SIGTERM
    await settle(h.clock);
    const first = h.runtime.running('app')!;
    h.verdicts.set('app/liveness', 'failure');
    await h.clock.advance(3000);
    expect(h.events()).toContain('Normal Killing Container app failed liveness probe, will be restarted');
    expect(h.runtime.calls).toContain('stop app grace=5000');
    await h.clock.advance(5000);
    const second = h.runtime.running('app');
    expect(second?.id).not.toBe(first.id);
    const cs = h.pod().status?.containerStatuses?.[0];
    expect(cs?.restartCount).toBe(1);
    expect(cs?.lastState?.terminated?.exitCode).toBe(137);
  });

  it('restartPolicy Never, the only container: the pod is killed (KillPod: "Stopping container app"), not restarted, pod Failed', async () => {
    const h = harness([podOf([app({ livenessProbe: { exec: { command: ['x'] }, periodSeconds: 1, failureThreshold: 1 } })], { restartPolicy: 'Never' })]);
    await settle(h.clock);
    h.verdicts.set('app/liveness', 'failure');
    await h.clock.advance(2000);
    // computePodActions: keepCount 0 and nothing to start → KillPod (the real kubelet, scenario never-liveness-kill).
    expect(h.events()).toContain('Normal Killing Stopping container app');
    expect(h.events().some((e) => e.includes('failed liveness probe'))).toBe(false);
    await h.clock.advance(30_000);
    expect(h.runtime.running('app')).toBeUndefined();
    expect(h.runtime.calls.filter((c) => c.startsWith('start app'))).toHaveLength(1);
    expect(h.pod().status?.phase).toBe('Failed');
  });

  it('restartPolicy Never beside a container that keeps running: killed without ", will be restarted"', async () => {
    const h = harness([
      podOf([app({ livenessProbe: { exec: { command: ['x'] }, periodSeconds: 1, failureThreshold: 1 } }), { ...app(), name: 'other' }], { restartPolicy: 'Never' }),
    ]);
    await settle(h.clock);
    h.verdicts.set('app/liveness', 'failure');
    await h.clock.advance(2000);
    expect(h.events()).toContain('Normal Killing Container app failed liveness probe');
    expect(h.runtime.running('other')).toBeDefined();
  });

  it('startup Failure kills with the startup message and the startup probe grace', async () => {
    const h = harness([
      podOf(
        [app({ startupProbe: { exec: { command: ['x'] }, periodSeconds: 1, failureThreshold: 2, terminationGracePeriodSeconds: 3 } })],
        { terminationGracePeriodSeconds: 500 },
      ),
    ]);
    await settle(h.clock);
    h.verdicts.set('app/startup', 'failure');
    await h.clock.advance(2000);
    expect(h.events()).toContain('Normal Killing Container app failed startup probe, will be restarted');
    expect(h.runtime.calls).toContain('stop app grace=3000');
  });

  it('a pod that finished (restartPolicy Never, exit 1): its sandbox is stopped, so PodReadyToStartContainers turns False and its IP stays (the kubelet, scenario never-exit-1 side by side)', async () => {
    const h = harness([podOf([app()], { restartPolicy: 'Never' })]);
    await settle(h.clock);
    const ready = () => h.pod().status?.conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.status;
    expect(ready()).toBe('True');
    const ip = h.pod().status?.podIP;
    h.runtime.exit(h.runtime.running('app')!.id, 1);
    await h.clock.advance(5000);
    expect(h.pod().status?.phase).toBe('Failed');
    expect(ready()).toBe('False');
    expect(h.pod().status?.podIP).toBe(ip);
  });

  it('a non-running container with a liveness Failure cached is not killed (D4)', async () => {
    const h = harness([podOf([app({ livenessProbe: { exec: { command: ['x'] }, periodSeconds: 1 } })], { restartPolicy: 'Never' })]);
    await settle(h.clock);
    h.runtime.exit(h.runtime.running('app')!.id, 0);
    await h.clock.advance(5000);
    expect(h.events().filter((e) => e.includes('Killing'))).toEqual([]);
    expect(h.pod().status?.phase).toBe('Succeeded');
  });

  it('killGracePeriodSeconds: deletion grace, probe grace, pod grace, floor of 2 s', () => {
    const c: Container = { name: 'c', livenessProbe: { terminationGracePeriodSeconds: 7 }, startupProbe: {} };
    const pod = (spec: Partial<NonNullable<Pod['spec']>>, deletion?: number): Pod => ({
      metadata: { name: 'p', ...(deletion !== undefined ? { deletionGracePeriodSeconds: deletion } : {}) },
      spec: { containers: [c], ...spec },
    });
    expect(killGracePeriodSeconds(pod({ terminationGracePeriodSeconds: 30 }), c, 'liveness')).toBe(7);
    expect(killGracePeriodSeconds(pod({ terminationGracePeriodSeconds: 30 }), c, 'startup')).toBe(30);
    expect(killGracePeriodSeconds(pod({ terminationGracePeriodSeconds: 30 }, 9), c, 'liveness')).toBe(9);
    expect(killGracePeriodSeconds(pod({ terminationGracePeriodSeconds: 1 }), { name: 'c' }, 'liveness')).toBe(2);
    expect(killGracePeriodSeconds(pod({}), { name: 'c' }, 'liveness')).toBe(2);
  });
});

describe('the sync loop (§3.9, §10.1)', () => {
  it('calls updatePodStatus before addPod on a pod sync, and cleanupPods every 2 s', async () => {
    const clock = new FakeClock(T0);
    const kubelet = new Kubelet({ runtime: new FakeRuntime(clock), clock, prober: scriptedProber() });
    harnesses.push(kubelet);
    const order: string[] = [];
    vi.spyOn(kubelet.probeManager, 'updatePodStatus').mockImplementation(function (this: unknown) {
      order.push('updatePodStatus');
    });
    const addPod = vi.spyOn(kubelet.probeManager, 'addPod').mockImplementation(() => void order.push('addPod'));
    const cleanup = vi.spyOn(kubelet.probeManager, 'cleanupPods');
    kubelet.addPods([podOf([app({ readinessProbe: { exec: { command: ['x'] } } })])]);
    await clock.advance(0);
    expect(order.slice(0, 2)).toEqual(['updatePodStatus', 'addPod']);
    expect(addPod).toHaveBeenCalled();
    await clock.advance(4000);
    expect(cleanup).toHaveBeenCalledTimes(2);
    expect([...(cleanup.mock.calls[0]?.[0] ?? [])]).toEqual(['uid-web']);
  });

  it('readiness results drive ready, ContainersReady and Ready; readiness never probes before started', async () => {
    const h = harness([podOf([app({ readinessProbe: { exec: { command: ['x'] }, periodSeconds: 10, failureThreshold: 1 } })])]);
    h.verdicts.set('app/readiness', 'failure');
    await settle(h.clock);
    const ready = (): string | undefined => h.pod().status?.conditions?.find((c) => c.type === 'Ready')?.status;
    expect(ready()).toBe('False');
    h.verdicts.set('app/readiness', 'success');
    await h.clock.advance(10_000);
    expect(ready()).toBe('True');
    expect(h.pod().status?.containerStatuses?.[0]?.ready).toBe(true);
    h.verdicts.set('app/readiness', 'failure');
    await h.clock.advance(10_000);
    expect(ready()).toBe('False');
    expect(h.pod().status?.conditions?.find((c) => c.type === 'ContainersReady')?.reason).toBe('ContainersNotReady');
  });

  it('startup success marks the container started and triggers readiness at once (E17)', async () => {
    const h = harness([
      podOf([
        app({
          startupProbe: { exec: { command: ['x'] }, periodSeconds: 5, failureThreshold: 100 },
          readinessProbe: { exec: { command: ['x'] }, periodSeconds: 30 },
        }),
      ]),
    ]);
    h.verdicts.set('app/startup', 'failure');
    await settle(h.clock);
    await h.clock.advance(31_000);
    expect(h.pod().status?.containerStatuses?.[0]?.started).toBe(false);
    h.verdicts.set('app/startup', 'success');
    await h.clock.advance(5000);
    const cs = h.pod().status?.containerStatuses?.[0];
    expect(cs?.started).toBe(true);
    expect(cs?.ready).toBe(true);
  });
});

describe('init containers and sidecars (§10.5)', () => {
  it('runs init containers in order to completion before the app; a failed init with Never fails the pod', async () => {
    const init = (name: string): Container => ({ name, image: 'img', command: ['init'] });
    const h = harness([podOf([app()], { initContainers: [init('one'), init('two')], restartPolicy: 'Never' })]);
    await settle(h.clock);
    expect(h.pod().status?.phase).toBe('Pending');
    expect(h.runtime.calls.filter((c) => c.startsWith('start'))).toEqual(['start one#0']);
    h.runtime.exit(h.runtime.running('one')!.id, 0);
    await settle(h.clock);
    expect(h.runtime.calls.filter((c) => c.startsWith('start'))).toEqual(['start one#0', 'start two#0']);
    h.runtime.exit(h.runtime.running('two')!.id, 2);
    await h.clock.advance(60_000);
    expect(h.runtime.running('app')).toBeUndefined();
    expect(h.pod().status?.phase).toBe('Failed');
  });

  it('a sidecar must be started (startup probe success) before the app starts, and is restarted on liveness failure whatever the pod policy', async () => {
    const sidecar: Container = {
      name: 'proxy',
      image: 'img',
      command: ['proxy'],
      restartPolicy: 'Always',
      startupProbe: { exec: { command: ['x'] }, periodSeconds: 1, failureThreshold: 100 },
      livenessProbe: { exec: { command: ['x'] }, periodSeconds: 1, failureThreshold: 1 },
    };
    const h = harness([podOf([app()], { initContainers: [sidecar], restartPolicy: 'Never' })]);
    h.verdicts.set('proxy/startup', 'failure');
    await h.clock.advance(3000);
    expect(h.runtime.running('app')).toBeUndefined();
    h.verdicts.set('proxy/startup', 'success');
    await h.clock.advance(2000);
    expect(h.runtime.running('app')).toBeDefined();
    h.verdicts.set('proxy/liveness', 'failure');
    await h.clock.advance(2000);
    expect(h.events()).toContainEqual(expect.stringMatching(/^Normal Killing Init container proxy failed liveness probe( \(x\d+\))?$/));
    h.verdicts.set('proxy/liveness', 'success');
    await h.clock.advance(3000);
    // Killed twice in those 2 s and restarted at once both times: the first kill had no earlier
    // exit (no back-off entry made), the second is measured from the first exit with no entry yet.
    expect(h.runtime.calls.filter((c) => c.startsWith('start proxy'))).toHaveLength(3);
    expect(h.pod().status?.initContainerStatuses?.[0]?.restartCount).toBe(2);
  });
});

describe('status details', () => {
  it('waits with PodInitializing in every container of a pod with init containers, ContainerCreating otherwise', async () => {
    const init: Container = { name: 'init', image: 'img', command: ['init'] };
    const h = harness([podOf([app()], { initContainers: [init] }, 'with-init'), podOf([app()], {}, 'plain')]);
    const first = new Map<string, string[]>();
    h.kubelet.onPodStatus((p) => {
      const name = p.metadata?.name ?? '';
      if (first.has(name)) return;
      const all = [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])];
      first.set(name, all.map((c) => c.state?.waiting?.reason ?? 'none'));
    });
    await settle(h.clock);
    expect(first.get('with-init')).toEqual(['PodInitializing', 'PodInitializing']);
    expect(first.get('plain')).toEqual(['ContainerCreating']);
  });

  it('tells its listeners when deletion starts, and close() called twice waits for the same shutdown', async () => {
    const h = harness([podOf([app()], { terminationGracePeriodSeconds: 10 })]);
    h.runtime.behaviour.set('app', { onTerm: undefined });
    await settle(h.clock);
    const seen: Array<string | undefined> = [];
    h.kubelet.onPodStatus((p) => seen.push(p.metadata?.deletionTimestamp));
    let first = false;
    let second = false;
    void h.kubelet.close().then(() => (first = true));
    void h.kubelet.close().then(() => (second = true));
    await h.clock.advance(100);
    expect(seen[0]).toMatch(/^2026-01-01T00:00:00Z$/);
    expect([first, second]).toEqual([false, false]);
    await h.clock.advance(10_000);
    expect([first, second]).toEqual([true, true]);
  });
});

describe('robustness', () => {
  it('a spec the runtime refuses is retried every 10 s, never in a tight loop', async () => {
    const h = harness([podOf([app()])]);
    h.runtime.behaviour.set('app', { configError: 'spec.containers[0].env[0].valueFrom.secretKeyRef: not supported' });
    await settle(h.clock);
    const starts = (): number => h.runtime.calls.filter((c) => c.startsWith('start app')).length;
    const first = starts();
    expect(first).toBeLessThanOrEqual(2); // the attempt, and the status pass's retry with the same error
    expect(h.pod().status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('CreateContainerConfigError');
    await h.clock.advance(10_000);
    expect(starts()).toBe(first + 1);
    await h.clock.advance(10_000);
    expect(starts()).toBe(first + 2);
  });

  it('admission rejects env sources the local runtime cannot serve, naming the field', () => {
    const clock = new FakeClock(T0);
    const kubelet = new Kubelet({ runtime: new FakeRuntime(clock), clock, prober: scriptedProber() });
    harnesses.push(kubelet);
    const result = kubelet.addPods([
      podOf([app({ env: [{ name: 'A', value: 'x' }, { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] })]),
    ]);
    expect(result.pods).toEqual([]);
    expect(result.errors[0]?.errors.map(String)).toEqual([
      'spec.containers[0].env[1].valueFrom.secretKeyRef: Forbidden: not supported by the local runtime: Secrets need an API server; use a literal value',
    ]);
  });
});

describe('termination (§10.8)', () => {
  it('regular containers and then sidecars share one grace budget (each at least 2 s)', async () => {
    const sidecar: Container = { name: 'proxy', image: 'img', command: ['proxy'], restartPolicy: 'Always' };
    const h = harness([podOf([app()], { initContainers: [sidecar], terminationGracePeriodSeconds: 30 })]);
    h.runtime.behaviour.set('app', { onTerm: undefined });
    h.runtime.behaviour.set('proxy', { onTerm: undefined });
    await settle(h.clock);
    const closing = h.kubelet.deletePod('uid-web');
    await h.clock.advance(40_000);
    await closing;
    expect(h.runtime.calls.filter((c) => c.startsWith('stop'))).toEqual(['stop app grace=30000', 'stop proxy grace=2000']);
  });

  it('a pod that finishes on its own is terminated like a deleted one: sidecars stopped with events, workers removed', async () => {
    const sidecar: Container = {
      name: 'proxy',
      image: 'img',
      command: ['proxy'],
      restartPolicy: 'Always',
      readinessProbe: { exec: { command: ['x'] }, periodSeconds: 1 },
    };
    const h = harness([podOf([app()], { initContainers: [sidecar], restartPolicy: 'Never' })]);
    await h.clock.advance(2000);
    expect(h.kubelet.probeManager.workerCount()).toBe(1);
    h.runtime.exit(h.runtime.running('app')!.id, 0);
    await h.clock.advance(5000);
    expect(h.events()).toContain('Normal Killing Stopping container proxy');
    expect(h.runtime.running('proxy')).toBeUndefined();
    expect(h.kubelet.probeManager.workerCount()).toBe(0);
    expect(h.pod().status?.phase).toBe('Succeeded');
  });

  it('stops liveness first, keeps readiness probing through the grace period, then stops every worker', async () => {
    const h = harness([
      podOf(
        [
          app({
            readinessProbe: { exec: { command: ['x'] }, periodSeconds: 1 },
            livenessProbe: { exec: { command: ['x'] }, periodSeconds: 1, failureThreshold: 1 },
          }),
        ],
        { terminationGracePeriodSeconds: 20 },
      ),
    ]);
    h.runtime.behaviour.set('app', { onTerm: undefined });
    await h.clock.advance(2000);
    expect(h.pod().status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const deleting = h.kubelet.deletePod('uid-web');
    await h.clock.advance(100);
    expect(h.kubelet.probeManager.getWorker('uid-web', 'app', 'liveness')).toBeUndefined();
    expect(h.events()).toContain('Normal Killing Stopping container app');
    // The app stops being ready while it shuts down; liveness no longer counts.
    h.verdicts.set('app/readiness', 'failure');
    h.verdicts.set('app/liveness', 'failure');
    await h.clock.advance(3000);
    expect(h.runtime.running('app')).toBeDefined();
    expect(h.pod().status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    expect(h.events().some((e) => e.includes('failed liveness probe'))).toBe(false);
    await h.clock.advance(20_000);
    await deleting;
    expect(h.runtime.calls).toContain('stop app grace=20000');
    expect(h.kubelet.probeManager.workerCount()).toBe(0);
    expect(h.pod().status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(137);
    expect(h.pod().status?.phase).toBe('Failed');
  });
});

describe('admission', () => {
  it('rejects an invalid pod with every field error and runs the valid ones; a container needs a command', async () => {
    const clock = new FakeClock(T0);
    const runtime = new FakeRuntime(clock);
    const kubelet = new Kubelet({ runtime, clock, prober: scriptedProber() });
    harnesses.push(kubelet);
    const result = kubelet.addPods([
      podOf([{ name: 'app', image: 'img', livenessProbe: { exec: { command: ['x'] }, successThreshold: 2 } }], {}, 'bad'),
      podOf([app()], {}, 'good'),
    ]);
    expect(result.pods.map((p) => p.metadata?.name)).toEqual(['good']);
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]?.errors.map(String)).toEqual([
      'spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1',
    ]);
    const noCommand = kubelet.addPods([podOf([{ name: 'app', image: 'nginx' }], {}, 'nocmd')]);
    expect(noCommand.errors[0]?.errors.map(String)).toEqual([
      'spec.containers[0].command: Required value: the local kubelet runs processes, not images: set the command to run (args are appended)',
    ]);
    await clock.advance(0);
    expect(runtime.calls).toContain('start app#0');
    expect(kubelet.listPods().map((p) => p.metadata?.name)).toEqual(['good']);
  });

  it('a container that cannot start waits with RunContainerError, then CrashLoopBackOff, and the kubelet keeps going', async () => {
    const h = harness([podOf([app()])]);
    h.runtime.behaviour.set('app', { startError: 'exec: "app": executable file not found in $PATH' });
    const reasons: string[] = [];
    h.kubelet.onPodStatus((p) => {
      const reason = p.status?.containerStatuses?.[0]?.state?.waiting?.reason;
      if (reason && reasons.at(-1) !== reason) reasons.push(reason);
    });
    await settle(h.clock);
    // The back-off's waiting reason shows at the pod's next sync (the requeue at its expiry, 10 s × 1.25).
    expect(reasons).toEqual(['ContainerCreating', 'RunContainerError']);
    await settle(h.clock, 12_500);
    expect(reasons.slice(0, 3)).toEqual(['ContainerCreating', 'RunContainerError', 'CrashLoopBackOff']);
    const cs = h.pod().status?.containerStatuses?.[0];
    expect(cs?.lastState?.terminated).toMatchObject({ reason: 'StartError', exitCode: 128 });
    expect(h.events()).toContainEqual(
      expect.stringMatching(/^Warning Failed Error: exec: "app": executable file not found in \$PATH/),
    );
    await h.clock.advance(60_000);
    expect(h.pod().status?.containerStatuses?.[0]?.restartCount).toBeGreaterThanOrEqual(3);
  });
});

describe('removePod (a source that outlives its pods)', () => {
  it('forgets a terminated pod and its status; refuses one that still runs', async () => {
    const h = harness([podOf([app()])]);
    await settle(h.clock);
    expect(h.kubelet.hasPod('uid-web')).toBe(true);
    expect(() => h.kubelet.removePod('uid-web')).toThrow('pod web is not terminated: delete it first');
    const deleting = h.kubelet.deletePod('uid-web', 1);
    await h.clock.advance(2000);
    await deleting;
    h.kubelet.removePod('uid-web');
    expect(h.kubelet.hasPod('uid-web')).toBe(false);
    expect(h.kubelet.listPods()).toEqual([]);
    expect(h.kubelet.statusManager.getPodStatus('uid-web')).toBeUndefined();
    // The same UID may come again (a re-list): it runs as a new pod.
    h.kubelet.addPods([podOf([app()])]);
    await settle(h.clock);
    expect(h.kubelet.hasPod('uid-web')).toBe(true);
    expect(h.runtime.running('app')).toBeDefined();
  });
});

describe('observedGeneration (PodObservedGenerationTracking, on in 1.35)', () => {
  it('the status and the kubelet’s conditions carry the pod’s generation; a pod without one has none', async () => {
    const withGeneration = podOf([app()], {}, 'api');
    withGeneration.metadata = { ...withGeneration.metadata, generation: 3 };
    const h = harness([withGeneration, podOf([app()])]);
    await settle(h.clock);
    const api = h.pod('api').status as { observedGeneration?: number; conditions?: Array<{ type: string; observedGeneration?: number }> };
    expect(api.observedGeneration).toBe(3);
    expect(api.conditions?.find((c) => c.type === 'Ready')?.observedGeneration).toBe(3);
    expect('observedGeneration' in (h.pod('web').status ?? {})).toBe(false);
  });
});
