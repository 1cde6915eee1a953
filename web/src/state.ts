/**
 * The dashboard's model: what the stream said, folded into maps. The server sends a
 * `snapshot` first, then `pod`, `event` and `probe` changes; nothing here talks to the
 * network or the DOM.
 */
import type { Event, Pod } from '../../src/api/types.js';
import type { ProbeAttemptRecord, ProbeHistory, ProbeRingInfo, ProbeTransitionRecord, RecorderEntry } from '../../src/prober/recorder.js';
import type { StreamSnapshot } from '../../src/server/stream.js';

/** Attempts kept per lane in the page (the server's rings hold 100 by default; the page keeps a little more history). */
const MAX_ATTEMPTS_PER_LANE = 300;
const MAX_TRANSITIONS_PER_LANE = 100;
const MAX_EVENTS = 500;

export interface Lane {
  key: string;
  info: ProbeRingInfo;
  /** Oldest first. */
  attempts: ProbeAttemptRecord[];
  transitions: ProbeTransitionRecord[];
}

export interface Model {
  live: boolean;
  pods: Map<string, Pod>;
  /** By event name (a re-counted event replaces its earlier copy). */
  events: Map<string, Event>;
  lanes: Map<string, Lane>;
}

export function emptyModel(): Model {
  return { live: true, pods: new Map(), events: new Map(), lanes: new Map() };
}

export function laneKey(info: Pick<ProbeRingInfo, 'podUID' | 'container' | 'probeType'>): string {
  return `${info.podUID}/${info.container}/${info.probeType}`;
}

export function applySnapshot(model: Model, snapshot: StreamSnapshot): void {
  model.live = snapshot.live;
  model.pods.clear();
  model.events.clear();
  model.lanes.clear();
  for (const pod of snapshot.pods as Pod[]) applyPod(model, pod);
  for (const event of snapshot.events as Event[]) applyEvent(model, event);
  for (const history of snapshot.probes as ProbeHistory[]) {
    const { attempts, transitions, total: _t, failures: _f, errored: _e, firstSuccessAt: _s, ...info } = history;
    model.lanes.set(laneKey(info), { key: laneKey(info), info, attempts: [...attempts].reverse(), transitions: [...transitions].reverse() });
  }
}

export function applyPod(model: Model, pod: Pod): void {
  model.pods.set(pod.metadata?.uid ?? pod.metadata?.name ?? '', pod);
}

export function applyEvent(model: Model, event: Event): void {
  const name = event.metadata?.name ?? `${event.reason ?? ''}/${event.lastTimestamp ?? ''}`;
  model.events.delete(name);
  model.events.set(name, event);
  if (model.events.size > MAX_EVENTS) {
    const oldest = model.events.keys().next();
    if (!oldest.done) model.events.delete(oldest.value);
  }
}

export function applyProbe(model: Model, entry: RecorderEntry): void {
  const key = laneKey(entry.ring);
  let lane = model.lanes.get(key);
  if (lane === undefined) {
    lane = { key, info: entry.ring, attempts: [], transitions: [] };
    model.lanes.set(key, lane);
  }
  if (entry.kind === 'attempt') {
    lane.attempts.push(entry.attempt);
    if (lane.attempts.length > MAX_ATTEMPTS_PER_LANE) lane.attempts.shift();
  } else {
    lane.transitions.push(entry.transition);
    if (lane.transitions.length > MAX_TRANSITIONS_PER_LANE) lane.transitions.shift();
  }
}

/** Time of an event in ms (the API's times are whole seconds). */
export function eventTime(event: Event): number {
  return Date.parse(event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp ?? '') || 0;
}
