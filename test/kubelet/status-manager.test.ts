import { beforeEach, describe, expect, it } from 'vitest';
import type { ContainerStatus, Pod, PodCondition, PodStatus } from '../../src/api/types.js';
import { toKubeTime as kubeTime } from '../../src/api/time.js';
import { StatusManager } from '../../src/kubelet/status-manager.js';
import { FakeClock } from '../../src/util/clock.js';

const UID = 'uid-1';
const T0 = Date.UTC(2024, 0, 1, 0, 0, 0);

function makePod(): Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: UID },
    spec: {
      initContainers: [{ name: 'proxy', restartPolicy: 'Always' }, { name: 'setup' }],
      containers: [{ name: 'app' }, { name: 'side' }],
    },
  };
}

function cs(name: string, id: string, fields: Partial<ContainerStatus> = {}): ContainerStatus {
  return { name, containerID: id, image: 'img', imageID: '', ready: false, restartCount: 0, ...fields };
}

/** A status as the kubelet generates it: sidecar + plain init done, two regular containers not ready. */
function makeStatus(): PodStatus {
  return {
    phase: 'Running',
    conditions: [
      { type: 'Initialized', status: 'True' },
      { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [proxy app side]' },
      { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [proxy app side]' },
      { type: 'PodScheduled', status: 'True' },
    ],
    initContainerStatuses: [
      cs('proxy', 'test://proxy', { started: true }),
      cs('setup', 'test://setup', { ready: true, started: false }),
    ],
    containerStatuses: [cs('app', 'test://app', { started: true }), cs('side', 'test://side', { started: true })],
  };
}

/** Conditions that regeneration would rewrite: a setter that is not a no-op shows up. */
function staleStatus(): PodStatus {
  const status = makeStatus();
  status.conditions = [{ type: 'Ready', status: 'False', reason: 'Stale' }];
  return status;
}

function cond(status: PodStatus | undefined, type: string): PodCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

describe('StatusManager', () => {
  let clock: FakeClock;
  let sm: StatusManager;
  let notified: Array<[string, PodStatus]>;

  beforeEach(() => {
    clock = new FakeClock(T0);
    sm = new StatusManager({ clock });
    notified = [];
    sm.subscribe((uid, status) => notified.push([uid, status]));
  });

  describe('setPodStatus / getPodStatus', () => {
    it('stores a copy: later changes to the argument do not leak in', () => {
      const status = makeStatus();
      sm.setPodStatus(makePod(), status);
      status.phase = 'Failed';
      expect(sm.getPodStatus(UID)?.phase).toBe('Running');
      expect(sm.getPod(UID)?.metadata?.name).toBe('web');
    });

    it('hands out one frozen object per change (no copy per read) that cannot be mutated', () => {
      sm.setPodStatus(makePod(), makeStatus());
      const a = sm.getPodStatus(UID);
      expect(sm.getPodStatus(UID)).toBe(a);
      expect(() => {
        (a as PodStatus).phase = 'Failed';
      }).toThrow(TypeError);
      expect(() => {
        (a?.containerStatuses?.[0] as ContainerStatus).ready = true;
      }).toThrow(TypeError);
      expect(() => {
        (sm.getPod(UID) as Pod).spec = undefined;
      }).toThrow(TypeError);
      // A clone is editable and can be stored back.
      const edited = structuredClone(a as PodStatus);
      edited.phase = 'Succeeded';
      sm.setPodStatus(makePod(), edited);
      expect(sm.getPodStatus(UID)).not.toBe(a);
      expect(sm.getPodStatus(UID)?.phase).toBe('Succeeded');
      expect(a?.phase).toBe('Running');
    });

    it('returns undefined for unknown pods and pods without a status', () => {
      expect(sm.getPodStatus('nope')).toBeUndefined();
      sm.addPod(makePod());
      expect(sm.getPod(UID)).toBeDefined();
      expect(sm.getPodStatus(UID)).toBeUndefined();
    });

    it('sets lastTransitionTime on new conditions and keeps it until the status flips', async () => {
      sm.setPodStatus(makePod(), makeStatus());
      const t0 = kubeTime(T0);
      expect(t0).toBe(kubeTime(T0));
      expect(cond(sm.getPodStatus(UID), 'Ready')?.lastTransitionTime).toBe(t0);
      expect(cond(sm.getPodStatus(UID), 'PodScheduled')?.lastTransitionTime).toBe(t0);

      await clock.advance(5_500);
      const next = makeStatus();
      const ready = next.conditions?.[1] as PodCondition;
      ready.message = 'containers with unready status: [app]'; // same status, new message
      (next.conditions?.[2] as PodCondition).status = 'True'; // ContainersReady flips
      sm.setPodStatus(makePod(), next);
      expect(cond(sm.getPodStatus(UID), 'Ready')).toMatchObject({
        lastTransitionTime: t0,
        message: 'containers with unready status: [app]',
      });
      expect(cond(sm.getPodStatus(UID), 'ContainersReady')?.lastTransitionTime).toBe('2024-01-01T00:00:05.500Z');
    });

    it('takes the first previous status from pod.status (the API status)', () => {
      const pod: Pod = {
        ...makePod(),
        status: {
          conditions: [
            { type: 'PodScheduled', status: 'True', lastTransitionTime: '2023-12-31T00:00:00Z' },
            { type: 'Ready', status: 'True', lastTransitionTime: '2023-12-31T00:00:00Z' },
          ],
          startTime: '2023-12-31T00:00:00Z',
        },
      };
      sm.setPodStatus(pod, makeStatus());
      const status = sm.getPodStatus(UID);
      expect(cond(status, 'PodScheduled')?.lastTransitionTime).toBe('2023-12-31T00:00:00Z');
      expect(cond(status, 'Ready')?.lastTransitionTime).toBe(kubeTime(T0)); // flipped True -> False
      expect(status?.startTime).toBe('2023-12-31T00:00:00Z');
    });

    it('leaves the lastTransitionTime of conditions the kubelet does not own as given', () => {
      const status = makeStatus();
      status.conditions?.push({ type: 'example.com/gate', status: 'True', lastTransitionTime: '2020-01-01T00:00:00Z' });
      sm.setPodStatus(makePod(), status);
      expect(cond(sm.getPodStatus(UID), 'example.com/gate')?.lastTransitionTime).toBe('2020-01-01T00:00:00Z');
    });

    it('sets startTime once and never changes it', async () => {
      sm.setPodStatus(makePod(), makeStatus());
      expect(sm.getPodStatus(UID)?.startTime).toBe(kubeTime(T0));
      await clock.advance(60_000);
      sm.setPodStatus(makePod(), { ...makeStatus(), startTime: '2030-01-01T00:00:00Z' });
      expect(sm.getPodStatus(UID)?.startTime).toBe(kubeTime(T0));
    });

    it('notifies synchronously, only on real changes', async () => {
      sm.setPodStatus(makePod(), makeStatus());
      expect(notified).toHaveLength(1);
      expect(notified[0]?.[0]).toBe(UID);
      expect(notified[0]?.[1]).toBe(sm.getPodStatus(UID));
      await clock.advance(10_000);
      sm.setPodStatus(makePod(), makeStatus()); // same content; time passing alone changes nothing
      expect(notified).toHaveLength(1);
      sm.setPodStatus(makePod(), { ...makeStatus(), phase: 'Succeeded' });
      expect(notified).toHaveLength(2);
    });

    it('unsubscribe stops notifications', () => {
      const unsubscribe = sm.subscribe(() => {
        throw new Error('must not be called');
      });
      unsubscribe();
      sm.setPodStatus(makePod(), makeStatus());
      expect(notified).toHaveLength(1);
    });

    it('removePod forgets pod and status', () => {
      sm.setPodStatus(makePod(), makeStatus());
      sm.removePod(UID);
      expect(sm.getPodStatus(UID)).toBeUndefined();
      expect(sm.getPod(UID)).toBeUndefined();
      sm.setContainerReadiness(UID, 'test://app', true);
      expect(sm.getPodStatus(UID)).toBeUndefined();
    });

    it('rejects a pod without a uid', () => {
      expect(() => sm.setPodStatus({ metadata: { name: 'x' } }, {})).toThrow('pod has no metadata.uid');
    });
  });

  describe('setContainerReadiness', () => {
    it('is a no-op for an unknown pod', () => {
      sm.setContainerReadiness(UID, 'test://app', true);
      expect(sm.getPodStatus(UID)).toBeUndefined();
      expect(notified).toHaveLength(0);
    });

    it('is a no-op before the pod has a status', () => {
      sm.addPod(makePod());
      sm.setContainerReadiness(UID, 'test://app', true);
      expect(sm.getPodStatus(UID)).toBeUndefined();
      expect(notified).toHaveLength(0);
    });

    it('is a no-op for an unknown container ID', () => {
      sm.setPodStatus(makePod(), staleStatus());
      const before = sm.getPodStatus(UID);
      sm.setContainerReadiness(UID, 'test://gone', true);
      expect(sm.getPodStatus(UID)).toBe(before);
      expect(notified).toHaveLength(1);
    });

    it('is a no-op when the value is unchanged', () => {
      sm.setPodStatus(makePod(), staleStatus());
      const before = sm.getPodStatus(UID);
      sm.setContainerReadiness(UID, 'test://app', false);
      expect(sm.getPodStatus(UID)).toBe(before);
      expect(notified).toHaveLength(1);
    });

    it('sets ready and regenerates Ready and ContainersReady, counting sidecars', () => {
      sm.setPodStatus(makePod(), makeStatus());
      sm.setContainerReadiness(UID, 'test://app', true);
      let status = sm.getPodStatus(UID);
      expect(status?.containerStatuses?.[0]?.ready).toBe(true);
      expect(cond(status, 'ContainersReady')).toMatchObject({
        status: 'False',
        reason: 'ContainersNotReady',
        message: 'containers with unready status: [proxy side]',
      });
      expect(cond(status, 'Ready')?.message).toBe('containers with unready status: [proxy side]');
      expect(notified).toHaveLength(2);

      sm.setContainerReadiness(UID, 'test://side', true);
      // Init statuses are searched after regular ones: the sidecar is found by its ID.
      sm.setContainerReadiness(UID, 'test://proxy', true);
      status = sm.getPodStatus(UID);
      expect(status?.initContainerStatuses?.[0]?.ready).toBe(true);
      expect(cond(status, 'ContainersReady')).toMatchObject({ type: 'ContainersReady', status: 'True' });
      expect(cond(status, 'ContainersReady')?.reason).toBeUndefined();
      expect(cond(status, 'Ready')).toMatchObject({ type: 'Ready', status: 'True' });
      expect(notified).toHaveLength(4);
      // Nothing else changed.
      expect(status?.containerStatuses?.map((c) => c.started)).toEqual([true, true]);
      expect(cond(status, 'Initialized')).toEqual(cond(notified[0]?.[1], 'Initialized'));
    });

    it('changes lastTransitionTime only when a condition status flips', async () => {
      sm.setPodStatus(makePod(), makeStatus());
      const t0 = kubeTime(T0);
      await clock.advance(3_000);
      sm.setContainerReadiness(UID, 'test://app', true); // still False, message changes
      expect(cond(sm.getPodStatus(UID), 'Ready')?.lastTransitionTime).toBe(t0);
      expect(cond(sm.getPodStatus(UID), 'ContainersReady')?.lastTransitionTime).toBe(t0);
      await clock.advance(4_000);
      sm.setContainerReadiness(UID, 'test://side', true);
      sm.setContainerReadiness(UID, 'test://proxy', true); // flips to True at T0 + 7 s
      expect(cond(sm.getPodStatus(UID), 'Ready')?.lastTransitionTime).toBe(kubeTime(T0 + 7000));
      expect(cond(sm.getPodStatus(UID), 'ContainersReady')?.lastTransitionTime).toBe(kubeTime(T0 + 7000));
      expect(cond(sm.getPodStatus(UID), 'Initialized')?.lastTransitionTime).toBe(t0);
      await clock.advance(2_000);
      sm.setContainerReadiness(UID, 'test://app', false); // flips back
      expect(cond(sm.getPodStatus(UID), 'Ready')).toMatchObject({
        status: 'False',
        lastTransitionTime: kubeTime(T0 + 9000),
        message: 'containers with unready status: [app]',
      });
    });

    it('applies readiness gates from the status conditions and appends missing conditions', () => {
      const pod = makePod();
      pod.spec = { ...pod.spec, containers: [{ name: 'app' }], initContainers: [], readinessGates: [{ conditionType: 'lb' }] };
      sm.setPodStatus(pod, { phase: 'Running', containerStatuses: [cs('app', 'test://app')] });
      sm.setContainerReadiness(UID, 'test://app', true);
      expect(cond(sm.getPodStatus(UID), 'ContainersReady')?.status).toBe('True');
      expect(cond(sm.getPodStatus(UID), 'Ready')).toMatchObject({
        status: 'False',
        reason: 'ReadinessGatesNotReady',
        message: 'corresponding condition of pod readiness gate "lb" does not exist.',
        lastTransitionTime: kubeTime(T0),
      });
    });
  });

  describe('setContainerStartup', () => {
    it('is a no-op for an unknown pod, before the first status, for an unknown container, and when unchanged', () => {
      sm.setContainerStartup(UID, 'test://app', true);
      sm.addPod(makePod());
      sm.setContainerStartup(UID, 'test://app', true);
      expect(sm.getPodStatus(UID)).toBeUndefined();
      sm.setPodStatus(makePod(), makeStatus());
      const before = sm.getPodStatus(UID);
      sm.setContainerStartup(UID, 'test://gone', false);
      sm.setContainerStartup(UID, 'test://app', true);
      sm.setContainerStartup(UID, 'test://setup', false);
      expect(sm.getPodStatus(UID)).toBe(before);
      expect(notified).toHaveLength(1);
    });

    it('changes only started (regular, then init statuses), never conditions', async () => {
      sm.setPodStatus(makePod(), makeStatus());
      await clock.advance(5_000);
      const before = sm.getPodStatus(UID);
      sm.setContainerStartup(UID, 'test://app', false);
      const after = sm.getPodStatus(UID);
      expect(after?.containerStatuses?.[0]?.started).toBe(false);
      expect(after?.conditions).toEqual(before?.conditions);
      expect(notified).toHaveLength(2);
      sm.setContainerStartup(UID, 'test://proxy', false);
      expect(sm.getPodStatus(UID)?.initContainerStatuses?.[0]?.started).toBe(false);
      expect(cond(sm.getPodStatus(UID), 'Initialized')?.status).toBe('True'); // not regenerated
    });

    it('writes false over an absent started (absent is not "unchanged")', () => {
      const status = makeStatus();
      delete status.containerStatuses?.[0]?.started;
      sm.setPodStatus(makePod(), status);
      sm.setContainerStartup(UID, 'test://app', false);
      expect(sm.getPodStatus(UID)?.containerStatuses?.[0]?.started).toBe(false);
      expect(notified).toHaveLength(2);
    });
  });
});
