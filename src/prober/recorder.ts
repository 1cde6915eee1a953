/**
 * The flight recorder: for every (pod, container, probe kind) a bounded ring of the last
 * probe attempts — when each was due and ran, how long it took, what the handler saw and
 * what the cached result became — plus the transitions around them (verdict changed,
 * threshold crossed, and what the kubelet did next: Killing, Ready → False, a restart).
 *
 * Why it looks the way it does: it is on by default, so it must cost nothing measurable
 * when nobody reads it. A worker gets its ring at its first probe (an idle worker holds
 * none); a ring's slots are plain objects written in place and reused once it has wrapped,
 * and the prober and the handlers write straight into the slot (`ProbeNote`,
 * `HandlerObservation`), so recording an attempt allocates nothing of its own. Copies
 * (`ProbeAttemptRecord`) are made only when someone reads: the API, a listener.
 */
import { UNSEEN, type HandlerObservation, type Outcome, type ProbeOutcome } from '../probe/types.js';
import type { Clock } from '../util/clock.js';
import type { ProbeNote } from './prober.js';
import type { ProbeType, Result } from './types.js';

/** Attempts kept per (pod, container, probe kind) unless `capacity` says otherwise. */
export const DEFAULT_FLIGHT_RECORDER_CAPACITY = 100;
/** Transitions kept per ring: rarer than attempts, so fewer. */
export const TRANSITIONS_PER_RING = 32;
/** Rings kept in all; beyond it the oldest ring without a running worker is dropped. */
export const DEFAULT_MAX_RINGS = 1024;
/** Characters of a message or body a record carries (the handler read up to 10 KiB). */
export const RECORDED_TEXT_CHARS = 1024;

export interface FlightRecorderOptions {
  /** Attempts kept per (pod, container, probe kind); default 100. */
  capacity?: number;
  /** Rings kept in all (those of running workers are never dropped); default 1024. */
  maxRings?: number;
}

/** Which handler a probe uses, named as its field in the Probe spec. */
export type ProbeHandlerKind = 'httpGet' | 'tcpSocket' | 'grpc' | 'exec' | 'none';

/** What a ring is about: fixed when the ring is made (from the worker's pod and probe spec). */
export interface ProbeRingInfo {
  podUID: string;
  pod: string;
  namespace: string;
  container: string;
  probeType: ProbeType;
  handler: ProbeHandlerKind;
  periodSeconds: number;
  timeoutSeconds: number;
  successThreshold: number;
  failureThreshold: number;
}

/** One attempt, as read (a copy; the ring's slot is reused). Times are ms on the kubelet's clock (epoch ms with the real clock). */
export interface ProbeAttemptRecord {
  /** 1 for the ring's first attempt, counting up; gaps mean the ring wrapped. */
  seq: number;
  containerID: string;
  /** When the attempt was due (its tick, or the moment a trigger or the first probe asked for it). */
  due: number;
  start: number;
  durationMs: number;
  /** `start - due`: how late the probe ran. */
  latenessMs: number;
  /** Handler runs inside the prober's retries (1–3; errored attempts are retried); 0 if the prober did not say. */
  attempt: number;
  /** The last handler run's outcome; undefined when the prober did not say (a replaced prober). */
  outcome: Outcome | undefined;
  /** The prober's verdict for this attempt. */
  verdict: Result;
  /** Every handler run errored: the verdict was discarded (it never counts). */
  errored: boolean;
  /** The cached result after the attempt (what the kubelet acts on). */
  result: Result | undefined;
  /** The handler's output or error message (first {@link RECORDED_TEXT_CHARS} characters). */
  message: string;
  /** What the handler saw; absent when it reported nothing. */
  details?: HandlerObservation;
}

export type TransitionKind = 'verdict' | 'threshold' | 'action';

export interface ProbeTransitionRecord {
  time: number;
  /** `verdict`: the probe's verdict changed; `threshold`: the cached result changed; `action`: what the kubelet did. */
  kind: TransitionKind;
  /** The attempt it followed (0 for an action before any attempt). */
  seq: number;
  from?: string;
  to?: string;
  /** For actions: the kubelet's event reason or status change (`Killing`, `Started`, `Ready`). */
  reason?: string;
  message: string;
}

/** A ring, as read: its identity, counters over its whole life, and its contents newest first. */
export interface ProbeHistory extends ProbeRingInfo {
  /** Attempts recorded in all (the ring keeps the last `capacity`). */
  total: number;
  /** Attempts whose verdict was failure (errored ones not included). */
  failures: number;
  errored: number;
  /** When the cached result first became success (startup/readiness: "started", "ready"). */
  firstSuccessAt?: number;
  attempts: ProbeAttemptRecord[];
  transitions: ProbeTransitionRecord[];
}

export interface HistoryFilter {
  /** Pod name. */
  pod?: string;
  podUID?: string;
  container?: string;
  probeType?: ProbeType;
  /** Attempts per ring (newest first); default all kept. */
  limit?: number;
}

/** What listeners get: an attempt just recorded, or a transition. Made only when someone listens. */
export type RecorderEntry =
  | { kind: 'attempt'; ring: ProbeRingInfo; attempt: ProbeAttemptRecord }
  | { kind: 'transition'; ring: ProbeRingInfo; transition: ProbeTransitionRecord };

/** One ring slot: written in place by the worker, the prober and the handler, reused after wrap-around. */
export interface AttemptSlot extends ProbeNote {
  seq: number;
  containerID: string;
  due: number;
  start: number;
  durationMs: number;
  attempts: number;
  outcome: ProbeOutcome | undefined;
  readonly seen: HandlerObservation;
  handlerResult: Outcome | undefined;
  verdict: Result;
  errored: boolean;
  result: Result | undefined;
  message: string;
}

/** The ring of one (pod, container, probe kind). Made by {@link FlightRecorder.ringFor}. */
export class ProbeRing {
  readonly info: ProbeRingInfo;
  /** A worker is recording into it (rings without one may be dropped, oldest first). */
  live = true;
  total = 0;
  failures = 0;
  errored = 0;
  firstSuccessAt: number | undefined;

  private readonly slots: AttemptSlot[] = [];
  private next = 0;
  private readonly transitions: ProbeTransitionRecord[] = [];
  private nextTransition = 0;
  private lastVerdict: Result | undefined;
  /** Actions noted while an attempt's verdict is being counted: recorded after its transitions (see `countingVerdict`). */
  private heldActions: ProbeTransitionRecord[] | undefined;
  /**
   * The last attempt's message, body and headers. A steady probe answers the same every
   * time: an attempt equal to the last keeps these instead of its own copies, so a full
   * ring holds one of each, not 100 (the soak measured ≈ 310 B an attempt without this).
   * Shared safely: nothing changes a stored value in place (a slot's fields are replaced,
   * readers get copies).
   */
  private lastMessage = '';
  private lastBody: string | undefined;
  private lastHeaders: Record<string, string> | undefined;

  constructor(
    info: ProbeRingInfo,
    private readonly capacity: number,
    private readonly owner: FlightRecorder,
  ) {
    this.info = info;
  }

  /** The slot for a new attempt, cleared: the oldest one once the ring is full. */
  begin(due: number, start: number, containerID: string): AttemptSlot {
    let slot = this.slots[this.next];
    if (slot === undefined) {
      slot = newSlot();
      this.slots.push(slot);
    } else {
      clearSlot(slot);
    }
    this.next = (this.next + 1) % this.capacity;
    slot.seq = ++this.total;
    slot.containerID = containerID;
    slot.due = due;
    slot.start = start;
    return slot;
  }

  /**
   * Completes an attempt begun with `begin`: the verdict, whether it errored, and the
   * cached result before and after the worker counted it. Records the transitions.
   */
  commit(
    slot: AttemptSlot,
    end: number,
    verdict: Result,
    error: Error | undefined,
    before: Result | undefined,
    after: Result | undefined,
  ): void {
    slot.durationMs = end - slot.start;
    slot.verdict = verdict;
    slot.errored = error !== undefined;
    slot.result = after;
    const outcome = slot.outcome;
    slot.handlerResult = outcome?.result;
    const message = clip(error?.message ?? outcome?.output ?? '');
    slot.message = message === this.lastMessage ? this.lastMessage : (this.lastMessage = message);
    // Only what the record needs stays: the outcome (and its full output) may go.
    slot.outcome = undefined;
    const seen = slot.seen;
    if (seen.body !== undefined) {
      const body = clip(seen.body);
      seen.body = body === this.lastBody ? this.lastBody : (this.lastBody = body);
    }
    if (seen.headers !== undefined) {
      if (this.lastHeaders !== undefined && sameHeaders(seen.headers, this.lastHeaders)) seen.headers = this.lastHeaders;
      else this.lastHeaders = seen.headers;
    }

    if (slot.errored) this.errored++;
    else if (verdict === 'failure') this.failures++;
    if (this.owner.listening()) this.owner.emit({ kind: 'attempt', ring: this.info, attempt: toRecord(slot) });

    if (!slot.errored && this.lastVerdict !== undefined && verdict !== this.lastVerdict) {
      const message = `probe ${verdict === 'success' ? 'succeeded' : 'failed'} after ${this.lastVerdict}`;
      this.addTransition({ time: end, kind: 'verdict', seq: slot.seq, from: this.lastVerdict, to: verdict, message });
    }
    if (!slot.errored) this.lastVerdict = verdict;
    if (after !== before && after !== undefined) {
      if (after === 'success' && this.firstSuccessAt === undefined) this.firstSuccessAt = end;
      const threshold =
        after === 'success' ? `successThreshold ${this.info.successThreshold}` : `failureThreshold ${this.info.failureThreshold}`;
      this.addTransition({
        time: end,
        kind: 'threshold',
        seq: slot.seq,
        ...(before !== undefined ? { from: before } : {}),
        to: after,
        message: `${threshold} reached: result ${before ?? 'none'} → ${after}`,
      });
    }
    const held = this.heldActions;
    this.heldActions = undefined;
    if (held !== undefined) for (const t of held) this.addTransition({ ...t, seq: slot.seq });
  }

  /**
   * The worker is about to count a verdict and cache the result: what the kubelet does in
   * answer at once (readiness turns the container Ready) is caused by this attempt, so it is
   * kept until `commit` and recorded after the attempt's own transitions.
   */
  countingVerdict(): void {
    this.heldActions ??= [];
  }

  /** Records what the kubelet did about this probe (or its container). */
  action(time: number, reason: string, message: string): void {
    const t: ProbeTransitionRecord = { time, kind: 'action', seq: this.total, reason, message };
    if (this.heldActions !== undefined) this.heldActions.push(t);
    else this.addTransition(t);
  }

  /** Contents newest first (copies); `limit` attempts at most. */
  history(limit = this.capacity): ProbeHistory {
    const attempts: ProbeAttemptRecord[] = [];
    const n = this.slots.length;
    for (let i = 1; i <= n && attempts.length < limit; i++) {
      const slot = this.slots[(this.next - i + n * 2) % n];
      // A slot begun but not committed (a probe in flight) has no duration yet.
      if (slot !== undefined && slot.durationMs >= 0) attempts.push(toRecord(slot));
    }
    const transitions: ProbeTransitionRecord[] = [];
    const m = this.transitions.length;
    for (let i = 1; i <= m; i++) {
      const t = this.transitions[(this.nextTransition - i + m * 2) % m];
      if (t !== undefined) transitions.push({ ...t });
    }
    return {
      ...this.info,
      total: this.total,
      failures: this.failures,
      errored: this.errored,
      ...(this.firstSuccessAt !== undefined ? { firstSuccessAt: this.firstSuccessAt } : {}),
      attempts,
      transitions,
    };
  }

  private addTransition(t: ProbeTransitionRecord): void {
    if (this.transitions.length < TRANSITIONS_PER_RING) this.transitions.push(t);
    else this.transitions[this.nextTransition] = t;
    this.nextTransition = (this.nextTransition + 1) % TRANSITIONS_PER_RING;
    if (this.owner.listening()) this.owner.emit({ kind: 'transition', ring: this.info, transition: { ...t } });
  }
}

/**
 * Every ring of a probe manager, keyed by (pod UID, container, probe kind). Rings outlive
 * their workers (a finished run can still be read) and are dropped oldest first once more
 * than `maxRings` exist, or with {@link FlightRecorder.forgetPod}.
 */
export class FlightRecorder {
  readonly capacity: number;
  readonly maxRings: number;
  private readonly rings = new Map<string, ProbeRing>();
  /** Ring keys by pod UID, so that forgetting a pod does not read every ring (an agent forgets thousands). */
  private readonly keysByPod = new Map<string, Set<string>>();
  private readonly listeners = new Set<(entry: RecorderEntry) => void>();

  constructor(
    private readonly clock: Clock,
    options: FlightRecorderOptions = {},
  ) {
    this.capacity = positiveInteger(options.capacity ?? DEFAULT_FLIGHT_RECORDER_CAPACITY, 'flightRecorder.capacity');
    this.maxRings = positiveInteger(options.maxRings ?? DEFAULT_MAX_RINGS, 'flightRecorder.maxRings');
  }

  /**
   * The ring for `info`, made on first use (a worker's first probe). A worker of the same
   * key started later (the pod re-added) continues the same ring.
   */
  ringFor(info: ProbeRingInfo): ProbeRing {
    const key = ringKey(info.podUID, info.container, info.probeType);
    let ring = this.rings.get(key);
    if (ring === undefined) {
      ring = new ProbeRing(info, this.capacity, this);
      this.rings.set(key, ring);
      let keys = this.keysByPod.get(info.podUID);
      if (keys === undefined) this.keysByPod.set(info.podUID, (keys = new Set()));
      keys.add(key);
      if (this.rings.size > this.maxRings) this.dropOldestIdle();
    }
    ring.live = true;
    return ring;
  }

  /** Rings as read, in the order they were made; attempts and transitions newest first. */
  histories(filter: HistoryFilter = {}): ProbeHistory[] {
    return [...this.eachHistory(filter)];
  }

  /**
   * The same, one ring at a time: the rings are those of the moment of the call, each copied
   * when it is reached, so a reader that writes them out as it goes (the API's `/probes`)
   * never holds every copy at once.
   */
  *eachHistory(filter: HistoryFilter = {}): Generator<ProbeHistory, void, undefined> {
    for (const ring of [...this.rings.values()]) {
      const i = ring.info;
      if (filter.pod !== undefined && i.pod !== filter.pod) continue;
      if (filter.podUID !== undefined && i.podUID !== filter.podUID) continue;
      if (filter.container !== undefined && i.container !== filter.container) continue;
      if (filter.probeType !== undefined && i.probeType !== filter.probeType) continue;
      yield ring.history(filter.limit);
    }
  }

  /**
   * Records what the kubelet did after a verdict: on the ring of `probeType`, or on every
   * ring of the container when the action concerns them all (a restart). No ring, no record.
   */
  noteAction(podUID: string, container: string, probeType: ProbeType | undefined, reason: string, message: string): void {
    const now = this.clock.now();
    for (const kind of probeType === undefined ? ALL_KINDS : [probeType]) {
      this.rings.get(ringKey(podUID, container, kind))?.action(now, reason, message);
    }
  }

  /** Drops every ring of the pod. */
  forgetPod(podUID: string): void {
    for (const key of this.keysByPod.get(podUID) ?? []) this.rings.delete(key);
    this.keysByPod.delete(podUID);
  }

  /** Calls `listener` with every attempt and transition from now on; returns the unsubscribe. */
  subscribe(listener: (entry: RecorderEntry) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** @internal */
  listening(): boolean {
    return this.listeners.size > 0;
  }

  /** @internal A throwing listener never reaches the worker that recorded. */
  emit(entry: RecorderEntry): void {
    for (const listener of this.listeners) {
      try {
        listener(entry);
      } catch (error) {
        process.emitWarning(`flight recorder listener failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  private dropOldestIdle(): void {
    for (const [key, ring] of this.rings) {
      if (!ring.live) {
        this.rings.delete(key);
        const keys = this.keysByPod.get(ring.info.podUID);
        keys?.delete(key);
        if (keys?.size === 0) this.keysByPod.delete(ring.info.podUID);
        return;
      }
    }
  }
}

const ALL_KINDS: readonly ProbeType[] = ['startup', 'readiness', 'liveness'];

function ringKey(podUID: string, container: string, probeType: ProbeType): string {
  return `${podUID}\u0000${container}\u0000${probeType}`;
}

function positiveInteger(value: number, field: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${field} must be a positive integer, got ${String(value)}`);
  return value;
}

function newSlot(): AttemptSlot {
  return {
    seq: 0,
    containerID: '',
    due: 0,
    start: 0,
    durationMs: -1,
    attempts: 0,
    outcome: undefined,
    seen: {},
    handlerResult: undefined,
    verdict: 'unknown',
    errored: false,
    result: undefined,
    message: '',
  };
}

/** Back to a fresh slot; `seen` cleared the way a retry clears it (UNSEEN: every key, set to undefined). */
function clearSlot(slot: AttemptSlot): void {
  slot.durationMs = -1;
  slot.attempts = 0;
  slot.outcome = undefined;
  slot.handlerResult = undefined;
  slot.verdict = 'unknown';
  slot.errored = false;
  slot.result = undefined;
  slot.message = '';
  Object.assign(slot.seen, UNSEEN);
}

function toRecord(slot: AttemptSlot): ProbeAttemptRecord {
  const record: ProbeAttemptRecord = {
    seq: slot.seq,
    containerID: slot.containerID,
    due: slot.due,
    start: slot.start,
    durationMs: slot.durationMs,
    latenessMs: Math.max(0, slot.start - slot.due),
    attempt: slot.attempts,
    outcome: slot.handlerResult,
    verdict: slot.verdict,
    errored: slot.errored,
    result: slot.result,
    message: slot.message,
  };
  let details: HandlerObservation | undefined;
  for (const key in slot.seen) {
    const value = slot.seen[key as keyof HandlerObservation];
    if (value === undefined) continue;
    details ??= {};
    (details as Record<string, unknown>)[key] = typeof value === 'object' ? { ...value } : value;
  }
  if (details !== undefined) record.details = details;
  return record;
}

/** The same header names with the same values (an attempt's few recorded headers). */
function sameHeaders(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) if (a[key] !== b[key] || !Object.hasOwn(b, key)) return false;
  return true;
}

/**
 * The first {@link RECORDED_TEXT_CHARS} characters, as a string of their own: a plain
 * `slice` of a long string may keep the whole original (up to 10 KiB) alive in the ring.
 */
function clip(text: string): string {
  if (text.length <= RECORDED_TEXT_CHARS) return text;
  return Buffer.from(text.slice(0, RECORDED_TEXT_CHARS), 'utf8').toString('utf8');
}
