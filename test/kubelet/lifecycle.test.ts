/**
 * Lifecycle hooks in the kubelet's sync loop, on the FakeClock and the scripted runtime
 * (kuberuntime_container.go: startContainer's step 4, killContainer → executePreStopHook):
 * a preStop uses up whole seconds of the grace period, the stop gets what is left (at
 * least 2 s), failures are `FailedPreStopHook` / `FailedPostStartHook` events with upstream's
 * fixed messages, a failed postStart kills the container and leaves it waiting in
 * `PostStartHookError`, and a deletion never waits on a hook that does not return.
 */
import { describe, expect, it } from 'vitest';
import type { Container, LifecycleHandler, Pod } from '../../src/api/types.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import { createHandlerRunner, type HandlerRunner, type HookTarget } from '../../src/kubelet/lifecycle.js';
import { killWaitSeconds } from '../../src/prober/kill-policy.js';
import type { ProbeType, Result } from '../../src/prober/types.js';
import { FakeClock } from '../../src/util/clock.js';
import { FakeRuntime } from '../helpers/fake-runtime.js';
import { closeKubeletsAfterEach } from '../helpers/kubelets.js';

const T0 = Date.UTC(2026, 0, 1);
const kubelets = closeKubeletsAfterEach();

/**
 * The real runner for `sleep` (on the FakeClock); `exec` hooks answer from `execAnswers` by
 * their first word: a message fails the hook, `'hang'` never returns (until aborted).
 */
function scriptedRunner(clock: FakeClock, execAnswers: Map<string, string>): { runner: HandlerRunner; ran: string[] } {
  const ran: string[] = [];
  const real = createHandlerRunner({ execSync: () => Promise.resolve({ output: '', exitCode: 0 }), clock });
  const runner: HandlerRunner = {
    run(target: HookTarget, handler: LifecycleHandler) {
      ran.push(`${target.container.name} ${handler.exec ? `exec ${handler.exec.command?.join(' ')}` : handler.sleep ? `sleep ${handler.sleep.seconds}` : 'other'} at ${(clock.now() - T0) / 1000}`);
      if (!handler.exec) return real.run(target, handler);
      const answer = execAnswers.get(handler.exec.command?.[0] ?? '');
      if (answer === 'hang') {
        return new Promise((resolve) => target.signal.addEventListener('abort', () => resolve('aborted'), { once: true }));
      }
      return Promise.resolve(answer);
    },
  };
  return { runner, ran };
}

interface Harness {
  clock: FakeClock;
  runtime: FakeRuntime;
  kubelet: Kubelet;
  verdicts: Map<string, Result>;
  ran: string[];
  events(): string[];
  pod(): Pod;
}

function harness(pod: Pod, execAnswers = new Map<string, string>()): Harness {
  const clock = new FakeClock(T0);
  const runtime = new FakeRuntime(clock);
  const verdicts = new Map<string, Result>();
  const prober = { probe: async (t: ProbeType, _p: Pod, _s: unknown, c: Container) => ({ result: verdicts.get(`${c.name}/${t}`) ?? 'success' }) };
  const { runner, ran } = scriptedRunner(clock, execAnswers);
  const kubelet = new Kubelet({ runtime, clock, random: () => 0.5, prober, lifecycleHandlers: runner });
  kubelets.push(kubelet);
  expect(kubelet.addPods([pod]).errors).toEqual([]);
  return {
    clock,
    runtime,
    kubelet,
    verdicts,
    ran,
    events: () => kubelet.listEvents().map((e) => `${e.type} ${e.reason} ${e.message}`),
    pod: () => kubelet.listPods()[0]!,
  };
}

function podOf(container: Partial<Container>, grace = 30): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
    spec: { terminationGracePeriodSeconds: grace, containers: [{ name: 'app', image: 'img', command: ['app'], ...container }] },
  };
}

const liveness = { exec: { command: ['check'] }, periodSeconds: 1, failureThreshold: 1 };

/** Fails liveness once the container runs, and waits until the kill has reached the runtime. */
async function killByLiveness(h: Harness): Promise<number> {
  await h.clock.advance(0);
  h.verdicts.set('app/liveness', 'failure');
  const from = h.clock.now();
  for (let i = 0; i < 120 && !h.runtime.calls.some((c) => c.startsWith('stop app')); i++) await h.clock.advance(500);
  return from;
}

describe('preStop (killContainer → executePreStopHook)', () => {
  it('a sleep of 5 s uses up 5 s of a 30 s grace: the stop comes 5 s after Killing, with 25 s', async () => {
    const h = harness(podOf({ livenessProbe: liveness, lifecycle: { preStop: { sleep: { seconds: 5 } } } }));
    await killByLiveness(h);
    const killing = h.kubelet.listEvents().find((e) => e.reason === 'Killing');
    expect(killing?.message).toBe('Container app failed liveness probe, will be restarted');
    expect(h.runtime.calls.filter((c) => c.startsWith('stop'))).toEqual(['stop app grace=25000']);
    expect(h.ran.length, h.ran.join('; ')).toBeGreaterThanOrEqual(1);
    const hookAt = Number(h.ran[0]!.split(' at ')[1]);
    const killedAt = (Date.parse(String(killing?.firstTimestamp)) - T0) / 1000;
    expect(hookAt).toBeCloseTo(killedAt, 0);
    expect(h.events().some((e) => e.includes('FailedPreStopHook'))).toBe(false);
  });

  it('a hook longer than the grace is waited for the grace, then the stop still gets 2 s (minimumGracePeriodInSeconds), and no event', async () => {
    // The sleep fits the pod's 60 s (validation) but not the probe's 10 s.
    const h = harness(podOf({ livenessProbe: { ...liveness, terminationGracePeriodSeconds: 10 }, lifecycle: { preStop: { sleep: { seconds: 60 } } } }, 60));
    await killByLiveness(h);
    expect(h.runtime.calls.filter((c) => c.startsWith('stop'))).toEqual(['stop app grace=2000']);
    await h.clock.advance(70_000);
    expect(h.events().some((e) => e.includes('FailedPreStopHook'))).toBe(false);
  });

  it('the probe-level terminationGracePeriodSeconds is what the hook takes its time from', async () => {
    const h = harness(podOf({ livenessProbe: { ...liveness, terminationGracePeriodSeconds: 8 }, lifecycle: { preStop: { sleep: { seconds: 3 } } } }, 60));
    await killByLiveness(h);
    expect(h.runtime.calls.filter((c) => c.startsWith('stop'))).toEqual(['stop app grace=5000']);
  });

  it('a failing hook records FailedPreStopHook "PreStopHook failed" (never its message) and the stop gets the whole grace', async () => {
    const h = harness(
      podOf({ livenessProbe: liveness, lifecycle: { preStop: { exec: { command: ['drain', '--secret=s3cr3t'] } } } }),
      new Map([['drain', 'Exec lifecycle hook ([drain --secret=s3cr3t]) … failed']]),
    );
    await killByLiveness(h);
    expect(h.events()).toContain('Warning FailedPreStopHook PreStopHook failed');
    expect(h.events().join('\n')).not.toContain('s3cr3t');
    expect(h.runtime.calls.filter((c) => c.startsWith('stop'))).toEqual(['stop app grace=30000']);
  });

  it('a pod deletion runs the preStop of each running container with the deletion grace', async () => {
    const h = harness(podOf({ lifecycle: { preStop: { sleep: { seconds: 4 } } } }, 20));
    await h.clock.advance(0);
    const deleting = h.kubelet.deletePod('uid-web');
    await h.clock.advance(10_000);
    await deleting;
    expect(h.events()).toContain('Normal Killing Stopping container app');
    expect(h.runtime.calls.filter((c) => c.startsWith('stop'))).toEqual(['stop app grace=16000']);
  });

  it('a pod with a sidecar: every Killing and preStop at once; the sidecar stops after the app (terminationOrdering), with what is left', async () => {
    const pod = podOf({}, 10);
    pod.spec!.initContainers = [{ name: 'proxy', image: 'img', command: ['proxy'], restartPolicy: 'Always', lifecycle: { preStop: { sleep: { seconds: 3 } } } }];
    const h = harness(pod);
    h.runtime.behaviour.set('app', { onTerm: undefined }); // ignores SIGTERM: gone at the grace's end
    await h.clock.advance(0);
    const deleting = h.kubelet.deletePod('uid-web');
    await h.clock.advance(15_000);
    await deleting;
    expect(h.ran).toEqual(['proxy sleep 3 at 0']);
    const killing = h.kubelet.listEvents().filter((e) => e.reason === 'Killing').map((e) => `${e.message} ${(Date.parse(String(e.firstTimestamp)) - T0) / 1000}`);
    expect(killing.sort()).toEqual(['Stopping container app 0', 'Stopping container proxy 0']);
    // app: the whole 10 s; proxy: 10 − 3 (its hook) − 7 (its turn, when app was gone) → the 2 s floor.
    expect(h.runtime.calls.filter((c) => c.startsWith('stop'))).toEqual(['stop app grace=10000', 'stop proxy grace=2000']);
  });

  it('no hook when the grace is 0 (a forced deletion): the stop gets the 2 s floor at once', async () => {
    const h = harness(podOf({ lifecycle: { preStop: { sleep: { seconds: 4 } } } }, 20));
    await h.clock.advance(0);
    await h.kubelet.deletePod('uid-web', 0);
    expect(h.ran).toEqual([]);
    expect(h.runtime.calls.filter((c) => c.startsWith('stop'))).toEqual(['stop app grace=2000']);
  });
});

describe('postStart (startContainer, step 4)', () => {
  it('a failing hook: FailedPostStartHook, Killing "FailedPostStartHook", waiting PostStartHookError with the message; the next sync restarts it', async () => {
    const message = 'Exec lifecycle hook ([init]) for Container "app" in Pod "web_default(uid-web)" failed - error: command \'init\' exited with 1: , message: ""';
    const h = harness(podOf({ lifecycle: { postStart: { exec: { command: ['init'] } } } }), new Map([['init', message]]));
    await h.clock.advance(0);
    expect(h.events().slice(0, 4)).toEqual([
      'Normal Created Container created',
      'Normal Started Container started',
      'Warning FailedPostStartHook PostStartHook failed',
      'Normal Killing FailedPostStartHook',
    ]);
    expect(h.runtime.calls.filter((c) => c.startsWith('stop'))[0]).toBe('stop app grace=30000');
    const waiting = h.pod().status?.containerStatuses?.[0]?.state?.waiting;
    expect(waiting).toEqual({ reason: 'PostStartHookError', message });
    await h.clock.advance(2_000);
    expect(h.runtime.calls.filter((c) => c.startsWith('start app'))).toContain('start app#1');
  });

  it('a failing hook under restartPolicy Never: killed, and shown terminated (no PostStartHookError: it will not start again)', async () => {
    const pod = podOf({ lifecycle: { postStart: { exec: { command: ['init'] } } } });
    pod.spec!.restartPolicy = 'Never';
    pod.spec!.containers.push({ name: 'other', image: 'img', command: ['other'] });
    const h = harness(pod, new Map([['init', 'failed']]));
    await h.clock.advance(2_000);
    const app = h.pod().status?.containerStatuses?.find((s) => s.name === 'app');
    expect(app?.state?.waiting).toBeUndefined();
    expect(app?.state?.terminated).toBeDefined();
    expect(h.runtime.calls.filter((c) => c.startsWith('start app'))).toEqual(['start app#0']);
  });

  it('a successful hook runs once per start, before anything else of the sync', async () => {
    const h = harness(podOf({ lifecycle: { postStart: { exec: { command: ['warm'] } } } }));
    await h.clock.advance(0);
    expect(h.ran).toEqual(['app exec warm at 0']);
    expect(h.pod().status?.containerStatuses?.[0]?.state?.running).toBeDefined();
  });

  it('a hook that never returns does not hold a deletion up: the pod stops within its grace', async () => {
    const h = harness(podOf({ lifecycle: { postStart: { exec: { command: ['hang'] } } } }, 5), new Map([['hang', 'hang']]));
    await h.clock.advance(0);
    const deleting = h.kubelet.deletePod('uid-web');
    await h.clock.advance(10_000);
    await deleting;
    expect(h.runtime.calls.filter((c) => c.startsWith('stop'))).toEqual(['stop app grace=5000']);
    expect(h.events().some((e) => e.includes('FailedPostStartHook'))).toBe(false);
  });
});

describe('killWaitSeconds (what check adds for the kill) is how long the kubelet takes', () => {
  // A container that ignores SIGTERM is gone exactly when the kill's SIGKILL comes.
  const cases: { grace: number; hook: LifecycleHandler | undefined; expected: number }[] = [
    { grace: 10, hook: undefined, expected: 10 },
    { grace: 1, hook: undefined, expected: 2 },
    { grace: 10, hook: { sleep: { seconds: 3 } }, expected: 10 },
    { grace: 10, hook: { sleep: { seconds: 9 } }, expected: 11 },
    { grace: 10, hook: { sleep: { seconds: 10 } }, expected: 12 },
    { grace: 10, hook: { sleep: { seconds: 25 } }, expected: 12 },
    { grace: 10, hook: { exec: { command: ['hang'] } }, expected: 12 },
  ];
  for (const c of cases) {
    it(`grace ${c.grace} s, ${c.hook ? JSON.stringify(c.hook) : 'no hook'}: ${c.expected} s`, async () => {
      const container: Partial<Container> = { livenessProbe: { ...liveness, terminationGracePeriodSeconds: c.grace }, ...(c.hook ? { lifecycle: { preStop: c.hook } } : {}) };
      const h = harness(podOf(container, 60), new Map([['hang', 'hang']]));
      h.runtime.behaviour.set('app', { onTerm: undefined });
      await h.clock.advance(0);
      const first = h.runtime.running('app')!.id;
      h.verdicts.set('app/liveness', 'failure');
      for (let i = 0; i < 400 && h.runtime.containers.get(first)?.state === 'running'; i++) await h.clock.advance(100);
      const exited = h.runtime.containers.get(first)?.finishedAt ?? NaN;
      const killing = Date.parse(String(h.kubelet.listEvents().find((e) => e.reason === 'Killing')?.firstTimestamp));
      expect((exited - killing) / 1000).toBe(c.expected);
      expect(killWaitSeconds(h.pod(), h.pod().spec!.containers[0]!, 'liveness')).toBe(c.expected);
    });
  }
});
