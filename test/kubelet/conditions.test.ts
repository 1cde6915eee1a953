import { describe, expect, it } from 'vitest';
import type { Container, ContainerStatus, Pod, PodStatus } from '../../src/api/types.js';
import {
  allContainerStatuses,
  generateContainersReadyCondition,
  generatePodConditions,
  generatePodInitializedCondition,
  generatePodReadyCondition,
  generatePodReadyToStartContainersCondition,
  generatePodScheduledCondition,
} from '../../src/kubelet/conditions.js';

function pod(containers: string[], init: Container[] = [], extra: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'uid-1' },
    spec: { containers: containers.map((name) => ({ name })), initContainers: init, ...extra },
  };
}

const sidecar = (name: string): Container => ({ name, restartPolicy: 'Always' });
const plainInit = (name: string): Container => ({ name });

function cs(name: string, fields: Partial<ContainerStatus> = {}): ContainerStatus {
  return { name, image: 'img', imageID: '', ready: false, restartCount: 0, ...fields };
}

const running = { state: { running: { startedAt: '2024-01-01T00:00:00Z' } } };

describe('generateContainersReadyCondition', () => {
  it('is True when every container is ready', () => {
    const p = pod(['a', 'b']);
    const status: PodStatus = { containerStatuses: [cs('a', { ready: true }), cs('b', { ready: true })] };
    expect(generateContainersReadyCondition(p, status)).toEqual({ type: 'ContainersReady', status: 'True' });
  });

  it('reports UnknownContainerStatuses when there are no statuses at all', () => {
    expect(generateContainersReadyCondition(pod(['a']), {})).toEqual({
      type: 'ContainersReady',
      status: 'False',
      reason: 'UnknownContainerStatuses',
    });
  });

  it('lists containers without a status', () => {
    const status: PodStatus = { containerStatuses: [cs('b', { ready: true })] };
    expect(generateContainersReadyCondition(pod(['a', 'b', 'c']), status)).toEqual({
      type: 'ContainersReady',
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unknown status: [a c]',
    });
  });

  it('lists unready containers', () => {
    const status: PodStatus = { containerStatuses: [cs('a', { ready: true }), cs('c')] };
    expect(generateContainersReadyCondition(pod(['a', 'c']), status)).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [c]',
    });
  });

  it('puts unknown before unready, joined by ", "', () => {
    const status: PodStatus = { containerStatuses: [cs('c'), cs('d')] };
    expect(generateContainersReadyCondition(pod(['a', 'b', 'c', 'd']), status).message).toBe(
      'containers with unknown status: [a b], containers with unready status: [c d]',
    );
  });

  it('says PodCompleted for a Succeeded pod whose containers are all known, even if unready', () => {
    const status: PodStatus = { phase: 'Succeeded', containerStatuses: [cs('a')] };
    expect(generateContainersReadyCondition(pod(['a']), status)).toEqual({
      type: 'ContainersReady',
      status: 'False',
      reason: 'PodCompleted',
    });
  });

  it('keeps the unknown message for a Succeeded pod with an unknown container', () => {
    const status: PodStatus = { phase: 'Succeeded', containerStatuses: [cs('a')] };
    expect(generateContainersReadyCondition(pod(['a', 'b']), status)).toMatchObject({
      reason: 'ContainersNotReady',
      message: 'containers with unknown status: [b], containers with unready status: [a]',
    });
  });

  it('checks for missing statuses before the phase', () => {
    expect(generateContainersReadyCondition(pod(['a']), { phase: 'Failed' }).reason).toBe('UnknownContainerStatuses');
  });

  it('says PodFailed for a Failed pod, even with ready or unknown containers', () => {
    const status: PodStatus = { phase: 'Failed', containerStatuses: [cs('a', { ready: true })] };
    expect(generateContainersReadyCondition(pod(['a', 'b']), status)).toEqual({
      type: 'ContainersReady',
      status: 'False',
      reason: 'PodFailed',
    });
  });

  it('counts sidecars like regular containers (first), and ignores plain init containers', () => {
    const p = pod(['app'], [plainInit('setup'), sidecar('proxy'), sidecar('log')]);
    const status: PodStatus = {
      initContainerStatuses: [cs('setup'), cs('proxy')],
      containerStatuses: [cs('app')],
    };
    expect(generateContainersReadyCondition(p, status).message).toBe(
      'containers with unknown status: [log], containers with unready status: [proxy app]',
    );
    const ready: PodStatus = {
      initContainerStatuses: [cs('setup'), cs('proxy', { ready: true }), cs('log', { ready: true })],
      containerStatuses: [cs('app', { ready: true })],
    };
    expect(generateContainersReadyCondition(p, ready).status).toBe('True');
  });

  it('stamps observedGeneration from metadata.generation', () => {
    const p = pod(['a']);
    p.metadata = { ...p.metadata, generation: 3 };
    const status: PodStatus = { containerStatuses: [cs('a', { ready: true })] };
    expect(generateContainersReadyCondition(p, status)).toEqual({
      type: 'ContainersReady',
      status: 'True',
      observedGeneration: 3,
    });
  });
});

describe('allContainerStatuses (Go append semantics)', () => {
  it('is undefined only when init statuses are absent and regular ones add nothing', () => {
    expect(allContainerStatuses({})).toBeUndefined();
    expect(allContainerStatuses({ containerStatuses: [] })).toBeUndefined();
    expect(allContainerStatuses({ initContainerStatuses: [] })).toEqual([]);
    expect(allContainerStatuses({ initContainerStatuses: [cs('i')], containerStatuses: [cs('a')] })?.map((s) => s.name)).toEqual([
      'i',
      'a',
    ]);
  });

  it('so an explicitly empty init list makes every container unknown instead', () => {
    const status: PodStatus = { initContainerStatuses: [], containerStatuses: [] };
    expect(generateContainersReadyCondition(pod(['a']), status)).toMatchObject({
      reason: 'ContainersNotReady',
      message: 'containers with unknown status: [a]',
    });
  });
});

describe('generatePodReadyCondition', () => {
  const readyStatus: PodStatus = { containerStatuses: [cs('a', { ready: true })] };

  it('copies ContainersReady when it is not True', () => {
    const status: PodStatus = { containerStatuses: [cs('a')] };
    expect(generatePodReadyCondition(pod(['a']), status, [])).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [a]',
    });
    expect(generatePodReadyCondition(pod(['a']), { phase: 'Failed', containerStatuses: [cs('a')] }, [])).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'PodFailed',
    });
  });

  it('is True when containers are ready and there are no gates', () => {
    expect(generatePodReadyCondition(pod(['a']), readyStatus, undefined)).toEqual({ type: 'Ready', status: 'True' });
  });

  it('reports missing and non-True readiness gates in gate order', () => {
    const p = pod(['a'], [], {
      readinessGates: [
        { conditionType: 'example.com/lb' },
        { conditionType: 'example.com/dns' },
        { conditionType: 'example.com/ok' },
      ],
    });
    const conditions = [
      { type: 'example.com/dns', status: 'False' },
      { type: 'example.com/ok', status: 'True' },
    ];
    expect(generatePodReadyCondition(p, readyStatus, conditions)).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'ReadinessGatesNotReady',
      message:
        'corresponding condition of pod readiness gate "example.com/lb" does not exist., ' +
        'the status of pod readiness gate "example.com/dns" is not "True", but False',
    });
  });

  it('is True when every gate condition is True', () => {
    const p = pod(['a'], [], { readinessGates: [{ conditionType: 'g' }] });
    expect(generatePodReadyCondition(p, readyStatus, [{ type: 'g', status: 'True' }]).status).toBe('True');
    expect(generatePodReadyCondition(p, readyStatus, [{ type: 'g', status: 'Unknown' }]).message).toBe(
      'the status of pod readiness gate "g" is not "True", but Unknown',
    );
  });
});

describe('generatePodInitializedCondition', () => {
  it('is True for a pod without init containers, statuses or not', () => {
    expect(generatePodInitializedCondition(pod(['a']), {})).toEqual({ type: 'Initialized', status: 'True' });
  });

  it('reports UnknownContainerStatuses when init containers exist but no statuses do', () => {
    expect(generatePodInitializedCondition(pod(['a'], [plainInit('i')]), {})).toEqual({
      type: 'Initialized',
      status: 'False',
      reason: 'UnknownContainerStatuses',
    });
  });

  it('needs plain init containers ready (exited 0) and lists unknown then incomplete ones', () => {
    const p = pod(['a'], [plainInit('i1'), plainInit('i2'), plainInit('i3')]);
    const status: PodStatus = { initContainerStatuses: [cs('i1', { ready: true }), cs('i2')], containerStatuses: [cs('a')] };
    expect(generatePodInitializedCondition(p, status)).toEqual({
      type: 'Initialized',
      status: 'False',
      reason: 'ContainersNotInitialized',
      message: 'containers with unknown status: [i3], containers with incomplete status: [i2]',
    });
  });

  it('needs sidecars started, not ready', () => {
    const p = pod(['a'], [sidecar('proxy')]);
    const notStarted: PodStatus = { initContainerStatuses: [cs('proxy', { ready: true, started: false })] };
    expect(generatePodInitializedCondition(p, notStarted)).toMatchObject({
      status: 'False',
      message: 'containers with incomplete status: [proxy]',
    });
    const started: PodStatus = { initContainerStatuses: [cs('proxy', { ready: false, started: true })] };
    expect(generatePodInitializedCondition(p, started)).toEqual({ type: 'Initialized', status: 'True' });
  });

  it('is True as soon as any regular container is running or has run, even with a restarting sidecar', () => {
    const p = pod(['a'], [sidecar('proxy')]);
    const status: PodStatus = {
      initContainerStatuses: [cs('proxy', { started: false })],
      containerStatuses: [cs('a', running)],
    };
    expect(generatePodInitializedCondition(p, status)).toEqual({ type: 'Initialized', status: 'True' });
    const terminated: PodStatus = {
      initContainerStatuses: [cs('proxy', { started: false })],
      containerStatuses: [cs('a', { state: { terminated: { exitCode: 1 } } })],
    };
    expect(generatePodInitializedCondition(p, terminated).status).toBe('True');
    const waiting: PodStatus = {
      initContainerStatuses: [cs('proxy', { started: false })],
      containerStatuses: [cs('a', { state: { waiting: { reason: 'PodInitializing' } } })],
    };
    expect(generatePodInitializedCondition(p, waiting).status).toBe('False');
  });

  it('says PodCompleted (True) for a Succeeded pod with every init container known', () => {
    const p = pod(['a'], [plainInit('i')]);
    expect(generatePodInitializedCondition(p, { phase: 'Succeeded', initContainerStatuses: [cs('i')] })).toEqual({
      type: 'Initialized',
      status: 'True',
      reason: 'PodCompleted',
    });
  });
});

describe('other kubelet-owned conditions', () => {
  it('PodReadyToStartContainers follows the sandbox; PodScheduled is always True', () => {
    expect(generatePodReadyToStartContainersCondition(pod(['a']), true)).toEqual({
      type: 'PodReadyToStartContainers',
      status: 'True',
    });
    expect(generatePodReadyToStartContainersCondition(pod(['a']), false).status).toBe('False');
    expect(generatePodScheduledCondition(pod(['a']))).toEqual({ type: 'PodScheduled', status: 'True' });
  });

  it('generatePodConditions keeps foreign conditions first, drops stale kubelet ones, and feeds gates to Ready', () => {
    const p: Pod = {
      ...pod(['a'], [], { readinessGates: [{ conditionType: 'g' }] }),
      status: {
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'g', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z' },
        ],
      },
    };
    const status: PodStatus = { containerStatuses: [cs('a', { ready: true, ...running })] };
    expect(generatePodConditions(p, status)).toEqual([
      { type: 'g', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z' },
      { type: 'PodReadyToStartContainers', status: 'True' },
      { type: 'Initialized', status: 'True' },
      { type: 'Ready', status: 'True' },
      { type: 'ContainersReady', status: 'True' },
      { type: 'PodScheduled', status: 'True' },
    ]);
  });
});
