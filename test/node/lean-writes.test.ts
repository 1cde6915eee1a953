/**
 * `probelet node --runtime simulated --lean-writes`: a starting pod's statuses folded into one
 * write (when it turns Ready, or the status manager's sync period after its first status), and
 * the routine start events kept out of the API; without it, every change is written as the
 * kubelet's status manager writes it. The API is the one seam faked here, as in
 * status-sink.test.ts; time is a FakeClock.
 */
import { describe, expect, it } from 'vitest';
import type { Event, Pod, PodStatus } from '../../src/api/types.js';
import { isRoutineStartEvent } from '../../src/node/event-sink.js';
import type { KubeClients } from '../../src/node/kube.js';
import { createStatusSink, LEAN_HOLD_MS } from '../../src/node/status-sink.js';
import { FakeClock } from '../../src/util/clock.js';

function fakeApi(): { clients: KubeClients; bodies: Array<{ status: PodStatus }> } {
  const bodies: Array<{ status: PodStatus }> = [];
  const core = {
    patchNamespacedPodStatus: async (request: { body: { status: PodStatus } }) => {
      bodies.push(request.body);
      return {};
    },
  };
  return { clients: { core } as unknown as KubeClients, bodies };
}

const at = '2026-01-01T00:00:00Z';
const creating: PodStatus = { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady', lastTransitionTime: at }] };
const running: PodStatus = { phase: 'Running', conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady', lastTransitionTime: at }] };
const ready: PodStatus = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at }] };
const pod = (status: PodStatus): Pod => ({ metadata: { uid: 'u1', name: 'p', namespace: 'ns' }, status });

/** Offers the three statuses of a start, `gapMs` apart, and returns the phases and Ready of what was written. */
async function start(lean: boolean, gapMs: number): Promise<{ written: string[]; clock: FakeClock; sink: ReturnType<typeof createStatusSink>; api: ReturnType<typeof fakeApi> }> {
  const clock = new FakeClock(0);
  const api = fakeApi();
  const sink = createStatusSink(api.clients, '10.0.0.1', () => undefined, { clock, lean });
  sink.track('u1', 'ns', 'p');
  for (const status of [creating, running, ready]) {
    sink.offer(pod(status));
    // The scheduler's and the kubelet's own watch events meanwhile reconcile against the API.
    sink.reconcile(pod({ phase: 'Pending' }));
    await clock.advance(gapMs);
  }
  const written = api.bodies.map((b) => `${b.status.phase ?? ''}/${b.status.conditions?.[0]?.status ?? ''}`);
  return { written, clock, sink, api };
}

describe('--lean-writes', () => {
  it('off (the default): the kubelet\'s write per change, Pending, Running not Ready, Ready', async () => {
    const { written } = await start(false, 1000);
    expect(written).toEqual(['Pending/False', 'Running/False', 'Running/True']);
  });

  it('on: a pod Ready within the hold is written once, Ready; later changes are written as they come', async () => {
    const { written, sink, api, clock } = await start(true, 1000);
    expect(written).toEqual(['Running/True']);
    sink.offer(pod(running));
    await clock.advance(1);
    expect(api.bodies).toHaveLength(2);
    expect(api.bodies[1]?.status.conditions?.[0]?.status).toBe('False');
  });

  it('on: a pod not Ready within the hold has its newest status written when the hold ends, then its Ready', async () => {
    // Pending at 0, Running at 4.999 s, Ready at 9.998 s: Ready came before the hold ended.
    expect((await start(true, LEAN_HOLD_MS / 2 - 1)).written).toEqual(['Running/True']);
    // Pending at 0, Running at 6 s, written when the hold ends at 10 s; Ready at 12 s.
    expect((await start(true, LEAN_HOLD_MS * 0.6)).written).toEqual(['Running/False', 'Running/True']);
  });

  it('on: a stop still writes a held status (flush), and an untracked pod\'s hold ends with nothing written', async () => {
    const clock = new FakeClock(0);
    const api = fakeApi();
    const sink = createStatusSink(api.clients, '10.0.0.1', () => undefined, { clock, lean: true });
    sink.track('u1', 'ns', 'p');
    sink.offer(pod(running));
    await sink.flush('u1');
    expect(api.bodies).toHaveLength(1);
    sink.track('u2', 'ns', 'q');
    sink.offer({ ...pod(running), metadata: { uid: 'u2', name: 'q', namespace: 'ns' } });
    sink.untrack('u2');
    await clock.advance(LEAN_HOLD_MS * 2);
    expect(api.bodies).toHaveLength(1);
  });

  it('keeps only the routine start events out of the API: Normal Pulled, Created, Started', () => {
    const event = (type: 'Normal' | 'Warning', reason: string): Event => ({ metadata: {}, involvedObject: {}, type, reason });
    expect(['Pulled', 'Created', 'Started'].map((r) => isRoutineStartEvent(event('Normal', r)))).toEqual([true, true, true]);
    expect(isRoutineStartEvent(event('Normal', 'Killing'))).toBe(false);
    expect(isRoutineStartEvent(event('Warning', 'Unhealthy'))).toBe(false);
    expect(isRoutineStartEvent(event('Warning', 'Failed'))).toBe(false);
  });
});
