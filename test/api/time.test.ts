import { describe, expect, it } from 'vitest';
import { serializeTimes, toKubeTime, toSerializedTime } from '../../src/api/time.js';

describe('Kubernetes times', () => {
  it('keeps milliseconds in memory and whole seconds on the wire', () => {
    expect(toKubeTime(Date.UTC(2026, 0, 1, 0, 0, 4, 806))).toBe('2026-01-01T00:00:04.806Z');
    expect(toSerializedTime(Date.UTC(2026, 0, 1, 0, 0, 4, 806))).toBe('2026-01-01T00:00:04Z');
  });

  it('serializeTimes cuts every metav1.Time field and nothing else, without touching its input', () => {
    const pod = {
      metadata: { name: 'p', deletionTimestamp: '2026-01-01T00:00:09.999Z' },
      spec: { containers: [{ name: 'c', env: [{ name: 'AT', value: '2026-01-01T00:00:01.500Z' }] }] },
      status: {
        startTime: '2026-01-01T00:00:00.100Z',
        conditions: [{ type: 'Ready', lastTransitionTime: '2026-01-01T00:00:06.001Z' }],
        containerStatuses: [{ state: { running: { startedAt: '2026-01-01T00:00:04.806Z' } }, lastState: { terminated: { finishedAt: '2026-01-01T00:00:03.5Z' } } }],
      },
    };
    const out = serializeTimes(pod);
    expect(out.metadata.deletionTimestamp).toBe('2026-01-01T00:00:09Z');
    expect(out.status.startTime).toBe('2026-01-01T00:00:00Z');
    expect(out.status.conditions[0]?.lastTransitionTime).toBe('2026-01-01T00:00:06Z');
    expect(out.status.containerStatuses[0]?.state.running.startedAt).toBe('2026-01-01T00:00:04Z');
    expect(out.status.containerStatuses[0]?.lastState.terminated.finishedAt).toBe('2026-01-01T00:00:03Z');
    expect(out.spec.containers[0]?.env[0]?.value).toBe('2026-01-01T00:00:01.500Z');
    expect(pod.status.startTime).toBe('2026-01-01T00:00:00.100Z');
  });
});
