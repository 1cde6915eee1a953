/**
 * client-go's EventCorrelator (tools/record/events_cache.go) as probelet's recorder applies it:
 * the cases of upstream's events_cache_test.go (TestEventCorrelator, TestEventSpamFilter) on a
 * FakeClock, plus what the kubelet's Events show through it (a burst of 25 per pod and type).
 */
import { describe, expect, it } from 'vitest';
import type { Event, Pod } from '../../src/api/types.js';
import { AGGREGATE_INTERVAL_MS, AGGREGATE_MAX_EVENTS, COMBINED_PREFIX, SPAM_BURST } from '../../src/kubelet/event-correlator.js';
import { createEventRecorder } from '../../src/kubelet/events.js';
import { FakeClock } from '../../src/util/clock.js';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5);

function pod(name = 'web'): Pod {
  return { metadata: { name, namespace: 'shop', uid: `uid-${name}` }, spec: { containers: [{ name: 'app' }, { name: 'side' }] } };
}

const app = { pod: pod(), containerName: 'app' };
const total = (events: Event[], type?: string): number => events.filter((e) => type === undefined || e.type === type).reduce((n, e) => n + (e.count ?? 0), 0);

describe('the spam filter (EventSourceObjectSpamFilter: burst 25, then one per 5 minutes)', () => {
  it('passes 25 Warning events of a pod, whatever their reason, container or message, and drops the 26th', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    for (let i = 0; i < 20; i++) recorder.event(app, 'Warning', 'Unhealthy', 'Liveness probe failed: ');
    for (let i = 0; i < 4; i++) recorder.event({ pod: pod(), containerName: 'side' }, 'Warning', 'BackOff', 'Back-off restarting failed container side');
    recorder.event(app, 'Warning', 'ProbeWarning', 'Readiness probe warning: x');
    recorder.event(app, 'Warning', 'Unhealthy', 'Readiness probe failed: y');
    recorder.event(app, 'Warning', 'Unhealthy', 'Liveness probe failed: ');
    const events = recorder.list();
    expect(total(events, 'Warning')).toBe(SPAM_BURST);
    expect(events.find((e) => e.message === 'Liveness probe failed: ')?.count).toBe(20);
    expect(events.some((e) => e.message === 'Readiness probe failed: y')).toBe(false);
  });

  it('keeps a bucket per pod and per type: Normal events and another pod are not held back by a pod full of Warnings', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    for (let i = 0; i < 30; i++) recorder.event(app, 'Warning', 'Unhealthy', `m${i % 3}`);
    recorder.event(app, 'Normal', 'Killing', 'Stopping container app');
    recorder.event({ pod: pod('api'), containerName: 'app' }, 'Warning', 'Unhealthy', 'm0');
    const events = recorder.list();
    expect(total(events.filter((e) => e.involvedObject.name === 'web'), 'Warning')).toBe(25);
    expect(events.filter((e) => e.reason === 'Killing')).toHaveLength(1);
    expect(events.filter((e) => e.involvedObject.name === 'api')).toHaveLength(1);
  });

  it('takes a token for a count update too (the-same-event-is-spam-if-happens-too-frequently)', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    const seen: number[] = [];
    recorder.subscribe((e) => seen.push(e.count ?? 0));
    for (let i = 0; i < SPAM_BURST + 1; i++) recorder.event(app, 'Warning', 'Unhealthy', 'same');
    expect(seen).toEqual(Array.from({ length: SPAM_BURST }, (_, i) => i + 1));
    expect(recorder.list()[0]?.count).toBe(SPAM_BURST);
  });

  it('lets one more through per 300 s, and that one carries the count of the dropped repeats (eventObserve counts before the filter)', async () => {
    const clock = new FakeClock(T0);
    const recorder = createEventRecorder({ clock, host: 'h' });
    for (let i = 0; i < 33; i++) {
      recorder.event(app, 'Warning', 'Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503');
      await clock.advance(1000);
    }
    // 25 tokens at first, and 33 s of refill is a ninth of one: ×25, the later 8 dropped.
    expect(recorder.list()[0]).toMatchObject({ count: 25, lastTimestamp: '2025-01-02T03:04:29Z' });
    // The bucket refills from the first event on: at 299 s it still lacks a little of a token.
    await clock.advance(299_000 - 33_000);
    recorder.event(app, 'Warning', 'Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503');
    expect(recorder.list()[0]?.count).toBe(25);
    await clock.advance(1000);
    recorder.event(app, 'Warning', 'Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503');
    expect(recorder.list()[0]?.count).toBe(35);
    await clock.advance(1000);
    recorder.event(app, 'Warning', 'Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503');
    // The token came from 300 s of refill: exactly one.
    expect(recorder.list()[0]).toMatchObject({ count: 35, firstTimestamp: '2025-01-02T03:04:05Z', lastTimestamp: '2025-01-02T03:09:05Z' });
  });

  it('a first event the filter dropped is created by the next accepted one, with both counted', async () => {
    const clock = new FakeClock(T0);
    const recorder = createEventRecorder({ clock, host: 'h' });
    for (let i = 0; i < SPAM_BURST; i++) recorder.event(app, 'Warning', 'Unhealthy', 'a');
    recorder.event(app, 'Warning', 'BackOff', 'b');
    expect(recorder.list().map((e) => e.reason)).toEqual(['Unhealthy']);
    await clock.advance(300_000);
    recorder.event(app, 'Warning', 'BackOff', 'b');
    expect(recorder.list().find((e) => e.reason === 'BackOff')).toMatchObject({ count: 2, firstTimestamp: '2025-01-02T03:04:05Z', lastTimestamp: '2025-01-02T03:09:05Z' });
  });

  it('the log view (subscribeLog) sees every event, the dropped ones too', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    const log: Event[] = [];
    const api: Event[] = [];
    recorder.subscribeLog((e) => log.push(e));
    recorder.subscribe((e) => api.push(e));
    for (let i = 0; i < 30; i++) recorder.event(app, 'Normal', 'Started', 'Container started');
    expect(log).toHaveLength(30);
    expect(log.every((e) => e.count === 1)).toBe(true);
    expect(api).toHaveLength(25);
  });

  it('spamFilter: false keeps every event (aggregation stays)', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h', spamFilter: false });
    for (let i = 0; i < 40; i++) recorder.event(app, 'Warning', 'Unhealthy', 'same');
    expect(recorder.list()[0]?.count).toBe(40);
  });
});

describe('the aggregator (EventAggregate: 10 distinct messages of a reason within 10 minutes)', () => {
  const similar = (recorder: ReturnType<typeof createEventRecorder>, n: number, containerName = 'app'): void => {
    for (let i = 0; i < n; i++) recorder.event({ pod: pod(), containerName }, 'Warning', 'Unhealthy', `Liveness probe failed: output ${i}`);
  };

  it('combines the 10th distinct message into one Event "(combined from similar events): …" (similar-events-should-aggregate-event)', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    similar(recorder, AGGREGATE_MAX_EVENTS);
    const events = recorder.list();
    expect(events).toHaveLength(AGGREGATE_MAX_EVENTS);
    expect(events.at(-1)).toMatchObject({ count: 1, message: `${COMBINED_PREFIX}Liveness probe failed: output 9`, involvedObject: { fieldPath: 'spec.containers{app}' } });
    expect(events.at(-1)).not.toHaveProperty('reportingComponent');
  });

  it('counts further similar events on the combined Event (similar-events-many-times-should-count-the-aggregate)', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    similar(recorder, AGGREGATE_MAX_EVENTS);
    recorder.event(app, 'Warning', 'Unhealthy', 'Liveness probe failed: output 10');
    const combined = recorder.list().filter((e) => e.message?.startsWith(COMBINED_PREFIX));
    expect(combined).toHaveLength(1);
    expect(combined[0]).toMatchObject({ count: 2, message: `${COMBINED_PREFIX}Liveness probe failed: output 10` });
  });

  it('counts an identical repeat as a repeat, however often (the-same-event-should-just-count-even-if-more-than-aggregate)', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    for (let i = 0; i < AGGREGATE_MAX_EVENTS + 1; i++) recorder.event(app, 'Warning', 'Unhealthy', 'same');
    expect(recorder.list()).toMatchObject([{ count: AGGREGATE_MAX_EVENTS + 1, message: 'same' }]);
  });

  it('keys on the pod, not the container: messages of two containers add up', () => {
    const recorder = createEventRecorder({ clock: new FakeClock(T0), host: 'h' });
    similar(recorder, 5, 'app');
    for (let i = 5; i < AGGREGATE_MAX_EVENTS; i++) recorder.event({ pod: pod(), containerName: 'side' }, 'Warning', 'Unhealthy', `Liveness probe failed: output ${i}`);
    expect(recorder.list().at(-1)?.message).toBe(`${COMBINED_PREFIX}Liveness probe failed: output 9`);
  });

  it('forgets after 10 quiet minutes (similar-events-whose-interval-is-greater-than-aggregate-interval-do-not-aggregate)', async () => {
    const clock = new FakeClock(T0);
    const recorder = createEventRecorder({ clock, host: 'h', spamFilter: false });
    for (let i = 0; i < AGGREGATE_MAX_EVENTS - 1; i++) {
      recorder.event(app, 'Warning', 'Unhealthy', `m${i}`);
      await clock.advance(AGGREGATE_INTERVAL_MS + 1);
    }
    recorder.event(app, 'Warning', 'Unhealthy', 'last');
    expect(recorder.list().some((e) => e.message?.startsWith(COMBINED_PREFIX))).toBe(false);
  });
});
