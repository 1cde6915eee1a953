import { describe, expect, it } from 'vitest';
import type { Event, Pod } from '../../src/api/types.js';
import { createEventRecorder, formatEvent, humanDuration } from '../../src/kubelet/events.js';
import { FakeClock } from '../../src/util/clock.js';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5);

function pod(name = 'web', namespace = 'shop'): Pod {
  return {
    metadata: { name, namespace, uid: `uid-${name}` },
    spec: {
      initContainers: [{ name: 'migrate' }],
      containers: [{ name: 'app' }, { name: 'sidecar' }],
    },
  };
}

describe('createEventRecorder', () => {
  it('builds a core/v1 Event about the Pod, narrowed to the container, from the kubelet on this host', () => {
    const clock = new FakeClock(T0);
    const recorder = createEventRecorder({ clock, host: 'node-1' });
    recorder.event({ pod: pod(), containerName: 'app' }, 'Warning', 'Unhealthy', 'Liveness probe failed: boom');
    const [e, ...rest] = recorder.list();
    expect(rest).toEqual([]);
    expect(e).toMatchObject({
      metadata: { namespace: 'shop' },
      involvedObject: {
        kind: 'Pod',
        apiVersion: 'v1',
        name: 'web',
        namespace: 'shop',
        uid: 'uid-web',
        fieldPath: 'spec.containers{app}',
      },
      type: 'Warning',
      reason: 'Unhealthy',
      message: 'Liveness probe failed: boom',
      source: { component: 'kubelet', host: 'node-1' },
      reportingComponent: 'kubelet',
      reportingInstance: 'node-1',
      count: 1,
      firstTimestamp: '2025-01-02T03:04:05Z',
      lastTimestamp: '2025-01-02T03:04:05Z',
    });
    // client-go's name: <object name>.<unix nanoseconds in hex>
    expect(e?.metadata.name).toBe(`web.${(BigInt(T0) * 1_000_000n).toString(16)}`);
  });

  it('uses spec.initContainers{name} for init containers, no fieldPath without a container, and the implicit path for unknown ones', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    recorder.event({ pod: pod(), containerName: 'migrate' }, 'Normal', 'Started', 'Started container migrate');
    recorder.event({ pod: pod(), containerName: 'sidecar' }, 'Normal', 'Started', 'Started container sidecar');
    recorder.event({ pod: pod() }, 'Normal', 'Scheduled', 'whole pod');
    recorder.event({ pod: pod(), containerName: 'ghost' }, 'Normal', 'Started', 'x');
    const paths = recorder.list().map((e) => e.involvedObject.fieldPath);
    expect(paths).toEqual([
      'spec.initContainers{migrate}',
      'spec.containers{sidecar}',
      undefined,
      'implicitly required container ghost',
    ]);
    expect(recorder.list()[2]?.involvedObject).not.toHaveProperty('fieldPath');
  });

  it('takes a null container list (decoded JSON/YAML) as empty: the implicit path, not a crash', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    const withNulls = { ...pod(), spec: { containers: [{ name: 'app' }], initContainers: null, ephemeralContainers: null } } as unknown as Pod;
    recorder.event({ pod: withNulls, containerName: 'ghost' }, 'Normal', 'Started', 'x');
    recorder.event({ pod: withNulls, containerName: 'app' }, 'Normal', 'Started', 'y');
    expect(recorder.list().map((e) => e.involvedObject.fieldPath)).toEqual(['implicitly required container ghost', 'spec.containers{app}']);
  });

  it('aggregates identical repeats: count goes up, lastTimestamp moves, firstTimestamp and name stay', async () => {
    const clock = new FakeClock(T0);
    const recorder = createEventRecorder({ clock, host: 'h' });
    const ref = { pod: pod(), containerName: 'app' };
    recorder.event(ref, 'Warning', 'Unhealthy', 'Liveness probe failed: boom');
    const name = recorder.list()[0]?.metadata.name;
    await clock.advance(10_000);
    recorder.event(ref, 'Warning', 'Unhealthy', 'Liveness probe failed: boom');
    await clock.advance(10_000);
    recorder.event(ref, 'Warning', 'Unhealthy', 'Liveness probe failed: boom');
    const events = recorder.list();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      metadata: { name },
      count: 3,
      firstTimestamp: '2025-01-02T03:04:05Z',
      lastTimestamp: '2025-01-02T03:04:25Z',
    });
  });

  it('keeps events apart when any part of the key differs (message, type, reason, container, pod)', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    const ref = { pod: pod(), containerName: 'app' };
    recorder.event(ref, 'Warning', 'Unhealthy', 'Liveness probe failed: a');
    recorder.event(ref, 'Warning', 'Unhealthy', 'Liveness probe failed: b');
    recorder.event(ref, 'Normal', 'Unhealthy', 'Liveness probe failed: a');
    recorder.event(ref, 'Warning', 'ProbeWarning', 'Liveness probe failed: a');
    recorder.event({ pod: pod(), containerName: 'sidecar' }, 'Warning', 'Unhealthy', 'Liveness probe failed: a');
    recorder.event({ pod: pod('api'), containerName: 'app' }, 'Warning', 'Unhealthy', 'Liveness probe failed: a');
    const events = recorder.list();
    expect(events).toHaveLength(6);
    expect(events.every((e) => e.count === 1)).toBe(true);
    expect(new Set(events.map((e) => e.metadata.name)).size).toBe(6);
  });

  it('lists least recently seen first; a repeat moves its event to the end', async () => {
    const clock = new FakeClock(T0);
    const recorder = createEventRecorder({ clock, host: 'h' });
    const ref = { pod: pod() };
    recorder.event(ref, 'Normal', 'A', 'a');
    await clock.advance(1000);
    recorder.event(ref, 'Normal', 'B', 'b');
    await clock.advance(1000);
    recorder.event(ref, 'Normal', 'A', 'a');
    expect(recorder.list().map((e) => e.reason)).toEqual(['B', 'A']);
  });

  it('keeps only the newest `limit` events', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h', limit: 3 });
    for (let i = 0; i < 5; i++) recorder.event({ pod: pod() }, 'Normal', 'R', `m${i}`);
    expect(recorder.list().map((e) => e.message)).toEqual(['m2', 'm3', 'm4']);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => createEventRecorder({ limit: 0 })).toThrow(RangeError);
    expect(() => createEventRecorder({ limit: 1.5 })).toThrow(/positive integer/);
  });

  it('filters by pod name and namespace', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    recorder.event({ pod: pod('web', 'shop') }, 'Normal', 'R', '1');
    recorder.event({ pod: pod('api', 'shop') }, 'Normal', 'R', '2');
    recorder.event({ pod: pod('web', 'blog') }, 'Normal', 'R', '3');
    expect(recorder.list({ podName: 'web' }).map((e) => e.message)).toEqual(['1', '3']);
    expect(recorder.list({ namespace: 'shop' }).map((e) => e.message)).toEqual(['1', '2']);
    expect(recorder.list({ podName: 'web', namespace: 'blog' }).map((e) => e.message)).toEqual(['3']);
    expect(recorder.list({ podName: 'nope' })).toEqual([]);
  });

  it('puts events of a pod without namespace in "default", as client-go does', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    recorder.event({ pod: { metadata: { name: 'bare' } } }, 'Normal', 'R', 'm');
    expect(recorder.list({ namespace: 'default' })).toHaveLength(1);
  });

  it('hands out copies: mutating a listed event does not change the store', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    recorder.event({ pod: pod() }, 'Normal', 'R', 'm');
    const [e] = recorder.list();
    if (e) e.count = 99;
    expect(recorder.list()[0]?.count).toBe(1);
  });

  it('tells subscribers about every new and every aggregated event, until they unsubscribe', async () => {
    const clock = new FakeClock(T0);
    const recorder = createEventRecorder({ clock, host: 'h' });
    const seen: Event[] = [];
    const unsubscribe = recorder.subscribe((e) => seen.push(e));
    const throwing = recorder.subscribe(() => {
      throw new Error('broken viewer');
    });
    const ref = { pod: pod(), containerName: 'app' };
    recorder.event(ref, 'Warning', 'Unhealthy', 'x');
    await clock.advance(5000);
    recorder.event(ref, 'Warning', 'Unhealthy', 'x');
    recorder.event(ref, 'Normal', 'Killing', 'y');
    unsubscribe();
    throwing();
    recorder.event(ref, 'Normal', 'Killing', 'z');
    expect(seen.map((e) => [e.reason, e.count, e.lastTimestamp])).toEqual([
      ['Unhealthy', 1, '2025-01-02T03:04:05Z'],
      ['Unhealthy', 2, '2025-01-02T03:04:10Z'],
      ['Killing', 1, '2025-01-02T03:04:10Z'],
    ]);
    expect(recorder.list()).toHaveLength(3);
  });

  it('gives unique names to events recorded at the same instant', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    recorder.event({ pod: pod() }, 'Normal', 'R', 'a');
    recorder.event({ pod: pod() }, 'Normal', 'R', 'b');
    const [a, b] = recorder.list().map((e) => e.metadata.name);
    expect(a).not.toBe(b);
  });
});

describe('formatEvent', () => {
  it('renders a repeated event like kubectl describe: last seen (xN over first seen)', async () => {
    const clock = new FakeClock(T0);
    const recorder = createEventRecorder({ clock, host: 'h' });
    const ref = { pod: pod(), containerName: 'app' };
    for (let i = 0; i < 3; i++) {
      recorder.event(ref, 'Warning', 'Unhealthy', 'Liveness probe failed: HTTP probe failed with statuscode: 500\n');
      await clock.advance(10_000);
    }
    const [e] = recorder.list();
    if (!e) throw new Error('no event');
    expect(formatEvent(e, clock.now())).toBe(
      'Warning  Unhealthy  10s (x3 over 30s)  kubelet  Liveness probe failed: HTTP probe failed with statuscode: 500',
    );
  });

  it('renders a single event with its age only', async () => {
    const clock = new FakeClock(T0);
    const recorder = createEventRecorder({ clock, host: 'h' });
    recorder.event({ pod: pod(), containerName: 'app' }, 'Normal', 'Killing', 'Stopping container app');
    await clock.advance(125_000);
    const [e] = recorder.list();
    if (!e) throw new Error('no event');
    expect(formatEvent(e, clock.now())).toBe('Normal  Killing  2m5s  kubelet  Stopping container app');
  });

  it('falls back to reportingComponent and <unknown> ages, and reads series like kubectl', () => {
    const now = Date.parse('2025-01-01T00:10:00Z');
    expect(formatEvent({ metadata: {}, involvedObject: {}, type: 'Normal', reason: 'R', reportingComponent: 'x', message: 'm' }, now)).toBe(
      'Normal  R  <unknown>  x  m',
    );
    const series: Event = {
      metadata: {},
      involvedObject: {},
      type: 'Warning',
      reason: 'R',
      eventTime: '2025-01-01T00:00:00.000000Z',
      series: { count: 4, lastObservedTime: '2025-01-01T00:09:30.000000Z' },
      source: { component: 'kubelet' },
      message: 'm',
    };
    expect(formatEvent(series, now)).toBe('Warning  R  30s (x4 over 10m)  kubelet  m');
  });
});

describe('humanDuration', () => {
  it.each([
    [-5000, '<invalid>'],
    [-1500, '0s'],
    [0, '0s'],
    [10_999, '10s'],
    [119_000, '119s'],
    [120_000, '2m'],
    [125_000, '2m5s'],
    [600_000, '10m'],
    [179 * 60_000, '179m'],
    [3 * 3_600_000, '3h'],
    [3 * 3_600_000 + 20 * 60_000, '3h20m'],
    [8 * 3_600_000 + 59 * 60_000, '8h'],
    [47 * 3_600_000, '47h'],
    [53 * 3_600_000, '2d5h'],
    [72 * 3_600_000, '3d'],
    [8 * 24 * 3_600_000, '8d'],
    [(2 * 365 + 3) * 24 * 3_600_000, '2y3d'],
    [9 * 365 * 24 * 3_600_000, '9y'],
  ])('%d ms -> %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});
