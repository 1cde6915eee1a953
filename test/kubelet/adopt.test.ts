/**
 * The kubelet after a restart takes over what the runtime still holds of its pods
 * (`adoptPod`, the seam `probelet node --runtime cri` fills): the newest instance of each
 * container is current with the runtime's restart count, the exited one before it is
 * `lastState`, nothing is started again and no event recorded; probes and restarts go on from
 * there. Scripted runtime and prober on a FakeClock.
 */
import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/api/types.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import type { ProbeType, Result } from '../../src/prober/types.js';
import type { AdoptedPod, RuntimeContainerStatus } from '../../src/runtime/types.js';
import { FakeClock } from '../../src/util/clock.js';
import { FakeRuntime } from '../helpers/fake-runtime.js';
import { closeKubeletsAfterEach } from '../helpers/kubelets.js';

const T0 = Date.UTC(2026, 0, 1);
const harnesses = closeKubeletsAfterEach();

const app: Container = { name: 'app', image: 'img', command: ['app'], livenessProbe: { exec: { command: ['true'] }, periodSeconds: 1, failureThreshold: 1 } };

function podOf(status?: Pod['status']): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: 'uid-web' }, spec: { containers: [app] }, ...(status ? { status } : {}) };
}

/** A runtime holding, from an earlier run, a running instance (attempt 3) of `app` and the exited one before it. */
function leftRuntime(clock: FakeClock): { runtime: FakeRuntime; adopted: AdoptedPod; asked: string[] } {
  const runtime = new FakeRuntime(clock);
  const earlier = T0 - 120_000;
  const exited: RuntimeContainerStatus = { id: 'fake://old-2', podUID: 'uid-web', name: 'app', attempt: 2, image: 'img', state: 'exited', createdAt: earlier - 60_000, startedAt: earlier - 60_000, finishedAt: earlier, exitCode: 137, reason: 'Error' };
  const running: RuntimeContainerStatus = { id: 'fake://old-3', podUID: 'uid-web', name: 'app', attempt: 3, image: 'img', state: 'running', createdAt: earlier, startedAt: earlier };
  for (const c of [exited, running]) runtime.containers.set(c.id, { ...c });
  const adopted: AdoptedPod = { sandbox: { id: 'sandbox-old', podUID: 'uid-web', podIP: '10.1.2.3' }, containers: [running, exited] };
  const asked: string[] = [];
  Object.assign(runtime, {
    adoptPod: async (pod: Pod) => {
      asked.push(pod.metadata?.uid ?? '');
      return asked.length === 1 ? adopted : undefined;
    },
  });
  return { runtime, adopted, asked };
}

function scriptedProber(): { verdicts: Map<string, Result>; probe: (t: ProbeType, p: Pod, s: unknown, c: Container) => Promise<{ result: Result }> } {
  const verdicts = new Map<string, Result>();
  return { verdicts, probe: async (t, _p, _s, c) => ({ result: verdicts.get(`${c.name}/${t}`) ?? 'success' }) };
}

describe('a restarted kubelet adopts what the runtime holds of its pods', () => {
  it('the running instance goes on (same ID, startedAt, restartCount 3, lastState the exited one), nothing is started, no event', async () => {
    const clock = new FakeClock(T0);
    const { runtime, asked } = leftRuntime(clock);
    const prober = scriptedProber();
    const kubelet = new Kubelet({ runtime, clock, random: () => 0.5, prober, kubeletRestart: true });
    harnesses.push(kubelet);
    expect(kubelet.addPods([podOf()]).errors).toEqual([]);
    await clock.advance(0);
    const status = kubelet.listPods()[0]?.status;
    expect(asked).toEqual(['uid-web']);
    expect(status?.podIP).toBe('10.1.2.3');
    expect(status?.phase).toBe('Running');
    const cs = status?.containerStatuses?.[0];
    expect(cs?.containerID).toBe('fake://old-3');
    expect(cs?.restartCount).toBe(3);
    expect(cs?.state?.running?.startedAt).toBe(new Date(T0 - 120_000).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    expect(cs?.lastState?.terminated).toMatchObject({ containerID: 'fake://old-2', exitCode: 137 });
    expect(runtime.calls.filter((c) => c.startsWith('runPodSandbox') || c.startsWith('start '))).toEqual([]);
    expect(kubelet.listEvents()).toEqual([]);
  });

  it('its probes go on: a liveness failure kills the adopted instance and starts attempt 4 (restartCount 4)', async () => {
    const clock = new FakeClock(T0);
    const { runtime } = leftRuntime(clock);
    const prober = scriptedProber();
    const kubelet = new Kubelet({ runtime, clock, random: () => 0.5, prober, kubeletRestart: true });
    harnesses.push(kubelet);
    kubelet.addPods([podOf()]);
    await clock.advance(0);
    prober.verdicts.set('app/liveness', 'failure');
    for (let i = 0; i < 50 && !runtime.calls.includes('start app#4'); i++) await clock.advance(100);
    prober.verdicts.delete('app/liveness');
    await clock.advance(1_000);
    expect(runtime.calls).toContain('stop app grace=30000');
    expect(runtime.calls).toContain('start app#4');
    const cs = kubelet.listPods()[0]?.status?.containerStatuses?.[0];
    expect(cs?.restartCount).toBe(4);
    expect(cs?.lastState?.terminated?.containerID).toBe('fake://old-3');
    expect(kubelet.listEvents().map((e) => `${e.reason} ${e.message}`)).toContain('Killing Container app failed liveness probe, will be restarted');
  });

  it('nothing left in the runtime: the pod starts as usual', async () => {
    const clock = new FakeClock(T0);
    const runtime = Object.assign(new FakeRuntime(clock), { adoptPod: async () => undefined });
    const kubelet = new Kubelet({ runtime, clock, random: () => 0.5, prober: scriptedProber(), kubeletRestart: true });
    harnesses.push(kubelet);
    kubelet.addPods([podOf()]);
    await clock.advance(0);
    expect(runtime.calls.slice(0, 2)).toEqual(['runPodSandbox web', 'start app#0']);
  });
});
