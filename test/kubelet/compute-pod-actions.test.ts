import { describe, expect, it } from 'vitest';
import type { ContainerWithRules, Pod } from '../../src/api/types.js';
import {
  computePodActions,
  podActions,
  type ObservedContainer,
  type ObservedInstance,
  type PodActionsInput,
} from '../../src/kubelet/compute-pod-actions.js';
import type { Result } from '../../src/prober/types.js';

// computePodActions is called here as `explain` will call it: plain data in, a plan out — no
// runtime, clock or kubelet.

const NOW = 1_000_000;
const running = (id: string): ObservedInstance => ({ id, state: 'running' });
const exited = (id: string, exitCode: number, finishedAt = NOW - 1_000): ObservedInstance => ({ id, state: 'exited', exitCode, finishedAt });

function pod(restartPolicy: 'Always' | 'OnFailure' | 'Never', containers: ContainerWithRules[], initContainers: ContainerWithRules[] = []): Pod {
  return { metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { restartPolicy, containers, initContainers } };
}

function input(
  p: Pod,
  containers: ObservedContainer[],
  options: { initialized?: boolean; liveness?: Record<string, Result>; startup?: Record<string, Result>; backOff?: PodActionsInput['backOff'] } = {},
): PodActionsInput {
  return {
    pod: p,
    containers,
    initialized: options.initialized ?? false,
    liveness: new Map(Object.entries(options.liveness ?? {})),
    startup: new Map(Object.entries(options.startup ?? {})),
    backOff: options.backOff ?? { nowMs: NOW, entries: {} },
  };
}

const app: ContainerWithRules = { name: 'app', image: 'x' };
const db: ContainerWithRules = { name: 'db', image: 'x' };
const setup: ContainerWithRules = { name: 'setup', image: 'x' };
const side: ContainerWithRules = { name: 'side', image: 'x', restartPolicy: 'Always' };
const sideWithStartup: ContainerWithRules = { ...side, startupProbe: { exec: { command: ['true'] } } };

describe('computePodActions: regular containers', () => {
  it('starts a container that never ran, once the pod is initialized (no init containers: at once)', () => {
    const plan = computePodActions(input(pod('Always', [app]), [{ spec: app, kind: 'regular' }]));
    expect(plan.actions).toEqual([{ type: 'initialized' }, { type: 'start', container: 'app' }]);
    expect(plan).toMatchObject({ initialized: true, podDone: false });
  });

  it('restarts an exited container at once when the back-off has no entry for it', () => {
    const plan = computePodActions(input(pod('Always', [app]), [{ spec: app, kind: 'regular', current: exited('c1', 1) }], { initialized: true }));
    expect(plan.actions).toEqual([{ type: 'restart', container: 'app', latestExited: exited('c1', 1), backOff: { inBackOff: false } }]);
  });

  it('holds the restart in back-off while the exit is inside the step, and says until when', () => {
    const finishedAt = NOW - 4_000;
    const plan = computePodActions(
      input(pod('Always', [app]), [{ spec: app, kind: 'regular', current: exited('c2', 1, finishedAt), previous: exited('c1', 1, NOW - 30_000) }], {
        initialized: true,
        backOff: { nowMs: NOW, entries: { app: { backoffMs: 20_000, lastUpdateMs: NOW - 20_000 } } },
      }),
    );
    expect(plan.actions).toEqual([
      { type: 'restart', container: 'app', latestExited: exited('c2', 1, finishedAt), backOff: { inBackOff: true, stepMs: 20_000, untilMs: finishedAt + 20_000 } },
    ]);
    expect(plan.podDone).toBe(false);
  });

  it('restarts at once once the step has passed, and after an exit more than 600 s after the last step (the entry expired)', () => {
    const after = computePodActions(
      input(pod('Always', [app]), [{ spec: app, kind: 'regular', current: exited('c2', 1, NOW - 25_000) }], {
        initialized: true,
        backOff: { nowMs: NOW, entries: { app: { backoffMs: 20_000, lastUpdateMs: NOW - 30_000 } } },
      }),
    );
    expect(after.actions[0]).toMatchObject({ type: 'restart', backOff: { inBackOff: false } });
    const expired = computePodActions(
      input(pod('Always', [app]), [{ spec: app, kind: 'regular', current: exited('c2', 1, NOW - 1_000) }], {
        initialized: true,
        backOff: { nowMs: NOW, entries: { app: { backoffMs: 300_000, lastUpdateMs: NOW - 700_000 } } },
      }),
    );
    expect(expired.actions[0]).toMatchObject({ type: 'restart', backOff: { inBackOff: false } });
  });

  it('restartPolicy Never: an exited container stays exited and the pod is done', () => {
    const plan = computePodActions(input(pod('Never', [app]), [{ spec: app, kind: 'regular', current: exited('c1', 1) }], { initialized: true }));
    expect(plan).toEqual({ actions: [], initialized: true, podDone: true });
  });

  it('restartPolicy OnFailure: a success stays, a failure restarts', () => {
    const ok = computePodActions(input(pod('OnFailure', [app]), [{ spec: app, kind: 'regular', current: exited('c1', 0) }], { initialized: true }));
    expect(ok).toEqual({ actions: [], initialized: true, podDone: true });
    const failed = computePodActions(input(pod('OnFailure', [app]), [{ spec: app, kind: 'regular', current: exited('c1', 2) }], { initialized: true }));
    expect(failed.actions).toEqual([{ type: 'restart', container: 'app', latestExited: exited('c1', 2), backOff: { inBackOff: false } }]);
    expect(failed.podDone).toBe(false);
  });

  it("a container's restart rules win over the pod's policy (KEP-5307)", () => {
    const rules: ContainerWithRules = { ...app, restartPolicy: 'Never', restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }] };
    const p = pod('Never', [rules]);
    expect(computePodActions(input(p, [{ spec: rules, kind: 'regular', current: exited('c1', 42) }], { initialized: true })).actions).toHaveLength(1);
    expect(computePodActions(input(p, [{ spec: rules, kind: 'regular', current: exited('c1', 1) }], { initialized: true })).actions).toEqual([]);
  });

  it('a failed liveness probe kills the container and, the first time, restarts it at once (no earlier exit to measure from)', () => {
    const plan = computePodActions(input(pod('Always', [app]), [{ spec: app, kind: 'regular', current: running('c1') }], { initialized: true, liveness: { c1: 'failure' } }));
    expect(plan.actions).toEqual([
      { type: 'kill', container: 'app', probe: 'liveness', message: 'Container app failed liveness probe, will be restarted', restart: true },
      { type: 'restart', container: 'app', latestExited: undefined, backOff: { inBackOff: false } },
    ]);
  });

  it('after an earlier exit, the restart after a kill is measured from that exit (not from the kill)', () => {
    const before = exited('c1', 137, NOW - 5_000);
    const plan = computePodActions(
      input(pod('Always', [app]), [{ spec: app, kind: 'regular', current: running('c2'), previous: before }], {
        initialized: true,
        liveness: { c2: 'failure' },
        backOff: { nowMs: NOW, entries: { app: { backoffMs: 10_000, lastUpdateMs: NOW - 5_000 } } },
      }),
    );
    expect(plan.actions[1]).toEqual({ type: 'restart', container: 'app', latestExited: before, backOff: { inBackOff: true, stepMs: 10_000, untilMs: NOW + 5_000 } });
  });

  it('a failed startup probe kills like liveness; liveness is asked first', () => {
    const startup = computePodActions(input(pod('Always', [app]), [{ spec: app, kind: 'regular', current: running('c1') }], { initialized: true, startup: { c1: 'failure' } }));
    expect(startup.actions[0]).toMatchObject({ type: 'kill', probe: 'startup', message: 'Container app failed startup probe, will be restarted' });
    const both = computePodActions(
      input(pod('Always', [app]), [{ spec: app, kind: 'regular', current: running('c1') }], { initialized: true, liveness: { c1: 'failure' }, startup: { c1: 'failure' } }),
    );
    expect(both.actions[0]).toMatchObject({ probe: 'liveness' });
  });

  it('restartPolicy Never: a probe kill of the only container kills the pod (KillPod), which is then done', () => {
    const plan = computePodActions(input(pod('Never', [app]), [{ spec: app, kind: 'regular', current: running('c1') }], { initialized: true, liveness: { c1: 'failure' } }));
    expect(plan).toEqual({ actions: [{ type: 'killPod', container: 'app', probe: 'liveness' }], initialized: true, podDone: true });
  });

  it('restartPolicy Never with another container kept: only the condemned one is killed, not restarted', () => {
    const plan = computePodActions(
      input(
        pod('Never', [app, db]),
        [
          { spec: app, kind: 'regular', current: running('c1') },
          { spec: db, kind: 'regular', current: running('d1') },
        ],
        { initialized: true, liveness: { c1: 'failure' } },
      ),
    );
    expect(plan).toEqual({
      actions: [{ type: 'kill', container: 'app', probe: 'liveness', message: 'Container app failed liveness probe', restart: false }],
      initialized: true,
      podDone: false,
    });
  });

  it('running containers without a failed probe are left alone', () => {
    const plan = computePodActions(input(pod('Always', [app]), [{ spec: app, kind: 'regular', current: running('c1') }], { initialized: true, liveness: { c1: 'success' } }));
    expect(plan).toEqual({ actions: [], initialized: true, podDone: false });
  });
});

describe('computePodActions: init containers and sidecars', () => {
  it('starts the first init container and nothing after it', () => {
    const plan = computePodActions(
      input(pod('Always', [app], [setup]), [
        { spec: setup, kind: 'init' },
        { spec: app, kind: 'regular' },
      ]),
    );
    expect(plan).toEqual({ actions: [{ type: 'start', container: 'setup' }], initialized: false, podDone: false });
  });

  it('a failed init container is restarted by the pod policy (OnFailure) and holds the rest; with Never it is not', () => {
    const containers: ObservedContainer[] = [
      { spec: setup, kind: 'init', current: exited('s1', 1) },
      { spec: app, kind: 'regular' },
    ];
    expect(computePodActions(input(pod('OnFailure', [app], [setup]), containers)).actions).toEqual([
      { type: 'restart', container: 'setup', latestExited: exited('s1', 1), backOff: { inBackOff: false } },
    ]);
    expect(computePodActions(input(pod('Never', [app], [setup]), containers))).toEqual({ actions: [], initialized: false, podDone: false });
  });

  it('once every init container succeeded, the pod is initialized and the regular containers start', () => {
    const plan = computePodActions(
      input(pod('Always', [app], [setup]), [
        { spec: setup, kind: 'init', current: exited('s1', 0) },
        { spec: app, kind: 'regular' },
      ]),
    );
    expect(plan.actions).toEqual([{ type: 'initialized' }, { type: 'start', container: 'app' }]);
  });

  it('an initialized pod does not look at its init containers again', () => {
    const plan = computePodActions(
      input(
        pod('Always', [app], [setup]),
        [
          { spec: setup, kind: 'init', current: exited('s1', 1) },
          { spec: app, kind: 'regular', current: running('c1') },
        ],
        { initialized: true },
      ),
    );
    expect(plan.actions).toEqual([]);
  });

  it('a sidecar without a startup probe lets the next init container start in the same sync once it runs', () => {
    const plan = computePodActions(
      input(pod('Always', [app], [side, setup]), [
        { spec: side, kind: 'sidecar' },
        { spec: setup, kind: 'init' },
        { spec: app, kind: 'regular' },
      ]),
    );
    expect(plan.actions).toEqual([
      { type: 'start', container: 'side' },
      { type: 'start', container: 'setup' },
    ]);
  });

  it('a sidecar with a startup probe holds the next init container until its startup probe succeeded', () => {
    const containers = (current?: ObservedInstance): ObservedContainer[] => [
      { spec: sideWithStartup, kind: 'sidecar', ...(current ? { current } : {}) },
      { spec: setup, kind: 'init' },
    ];
    const p = pod('Always', [], [sideWithStartup, setup]);
    expect(computePodActions(input(p, containers())).actions).toEqual([{ type: 'start', container: 'side' }]);
    expect(computePodActions(input(p, containers(running('x1')))).actions).toEqual([]);
    expect(computePodActions(input(p, containers(running('x1')), { startup: { x1: 'success' } })).actions).toEqual([{ type: 'start', container: 'setup' }]);
  });

  it('a sidecar is restarted whatever the pod policy, and holds the init containers after it meanwhile', () => {
    const plan = computePodActions(
      input(pod('Never', [app], [side, setup]), [
        { spec: side, kind: 'sidecar', current: exited('x1', 0) },
        { spec: setup, kind: 'init' },
        { spec: app, kind: 'regular' },
      ]),
    );
    expect(plan.actions).toEqual([{ type: 'restart', container: 'side', latestExited: exited('x1', 0), backOff: { inBackOff: false } }]);
  });

  it("a sidecar's failed liveness kills and restarts it (its own message) without holding the rest; a failed startup holds it", () => {
    const p = pod('Always', [app], [side]);
    const liveness = computePodActions(
      input(
        p,
        [
          { spec: side, kind: 'sidecar', current: running('x1') },
          { spec: app, kind: 'regular' },
        ],
        { liveness: { x1: 'failure' } },
      ),
    );
    expect(liveness.actions).toEqual([
      { type: 'kill', container: 'side', probe: 'liveness', message: 'Init container side failed liveness probe', restart: true },
      { type: 'restart', container: 'side', latestExited: undefined, backOff: { inBackOff: false } },
      { type: 'initialized' },
      { type: 'start', container: 'app' },
    ]);
    const startup = computePodActions(
      input(
        p,
        [
          { spec: side, kind: 'sidecar', current: running('x1') },
          { spec: app, kind: 'regular' },
        ],
        { startup: { x1: 'failure' } },
      ),
    );
    expect(startup.actions.map((a) => a.type)).toEqual(['kill', 'restart']);
    expect(startup.initialized).toBe(false);
  });

  it('the pod is done when every regular container has finished for good, whatever its sidecars do', () => {
    const plan = computePodActions(
      input(
        pod('Never', [app], [side]),
        [
          { spec: side, kind: 'sidecar', current: running('x1') },
          { spec: app, kind: 'regular', current: exited('c1', 0) },
        ],
        { initialized: true },
      ),
    );
    expect(plan).toEqual({ actions: [], initialized: true, podDone: true });
  });
});

describe('computePodActions is pure; podActions reads as it goes', () => {
  it('leaves its input as it was and gives the same plan twice', () => {
    const containers: ObservedContainer[] = [
      { spec: side, kind: 'sidecar' },
      { spec: app, kind: 'regular', current: running('c1') },
    ];
    const given = input(pod('Never', [app, db], [side]), [...containers, { spec: db, kind: 'regular', current: running('d1') }], { liveness: { c1: 'failure', d1: 'failure' } });
    const copy = structuredClone({ ...given, liveness: undefined, startup: undefined });
    const first = computePodActions(given);
    expect(computePodActions(given)).toEqual(first);
    expect({ ...given, liveness: undefined, startup: undefined }).toEqual(copy);
    // Planned on the expected outcomes: the sidecar runs; neither regular container is kept,
    // so the first kill is the pod's, and db, stopped with it, needs nothing more.
    expect(first.actions).toEqual([
      { type: 'start', container: 'side' },
      { type: 'initialized' },
      { type: 'killPod', container: 'app', probe: 'liveness' },
    ]);
    expect(first.podDone).toBe(true);
  });

  it('podActions sees what the caller did: a sidecar that did not come up holds the next init container', () => {
    const live = { spec: side, kind: 'sidecar' as const, current: undefined as ObservedInstance | undefined };
    const p = pod('Always', [app], [side, setup]);
    const walk = podActions(input(p, [live, { spec: setup, kind: 'init' }, { spec: app, kind: 'regular' }]));
    expect(walk.next().value).toEqual({ type: 'start', container: 'side' });
    // The start failed (no instance): after the sidecar's mark the walk ends.
    expect(walk.next().value).toEqual({ type: 'sidecarSettled', container: 'side' });
    expect(walk.next()).toEqual({ done: true, value: undefined });
    const walk2 = podActions(input(p, [live, { spec: setup, kind: 'init' }, { spec: app, kind: 'regular' }]));
    walk2.next();
    live.current = running('x1');
    expect(walk2.next().value).toEqual({ type: 'sidecarSettled', container: 'side' });
    expect(walk2.next().value).toEqual({ type: 'start', container: 'setup' });
  });
});
