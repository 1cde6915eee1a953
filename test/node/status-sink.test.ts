/**
 * The status sink's reconcile against what the API holds: a condition another writer changed
 * (the node lifecycle controller's Ready False while the node was out of reach) is written
 * again; a status that matches is not; a write that failed is tried again, when the API shows
 * the pod or after the status manager's sync period (10 s). The API is the one
 * seam faked here (the kubelet's status manager is tested with a fake client too).
 */
import { describe, expect, it } from 'vitest';
import type { Pod, PodStatus } from '../../src/api/types.js';
import type { KubeClients } from '../../src/node/kube.js';
import { createStatusSink, STATUS_RETRY_MS } from '../../src/node/status-sink.js';
import { FakeClock } from '../../src/util/clock.js';

function fakeApi(): { clients: KubeClients; bodies: Array<{ status: PodStatus }>; fail: { next: boolean } } {
  const bodies: Array<{ status: PodStatus }> = [];
  const fail = { next: false };
  const core = {
    patchNamespacedPodStatus: async (request: { body: { status: PodStatus } }) => {
      if (fail.next) {
        fail.next = false;
        throw new Error('connect ECONNREFUSED 127.0.0.1:6443');
      }
      bodies.push(request.body);
      return {};
    },
  };
  return { clients: { core } as unknown as KubeClients, bodies, fail };
}

const ready = (status: 'True' | 'False', reason?: string): PodStatus => ({
  phase: 'Running',
  conditions: [{ type: 'Ready', status, ...(reason ? { reason } : {}), lastTransitionTime: '2026-01-01T00:00:00Z' }],
});
const pod = (status: PodStatus): Pod => ({ metadata: { uid: 'u1', name: 'p', namespace: 'ns' }, status });

describe('the status sink against the API', () => {
  it('writes its status again when the API holds other conditions (Ready False from the node controller), and not when they match', async () => {
    const api = fakeApi();
    const sink = createStatusSink(api.clients, '10.0.0.1', () => undefined);
    sink.track('u1', 'ns', 'p');
    sink.offer(pod(ready('True')));
    await sink.flush('u1');
    expect(api.bodies).toHaveLength(1);
    sink.reconcile(pod(ready('True')));
    await sink.flush('u1');
    expect(api.bodies).toHaveLength(1);
    sink.reconcile(pod(ready('False', 'NodeNotReady')));
    await sink.flush('u1');
    expect(api.bodies).toHaveLength(2);
    expect(api.bodies[1]?.status.conditions?.[0]).toMatchObject({ type: 'Ready', status: 'True', reason: null });
    expect(sink.writes).toBe(2);
  });

  it('tries a failed write again when the API shows the pod (the re-list after its restart), not only at the next change', async () => {
    const lines: string[] = [];
    const api = fakeApi();
    const sink = createStatusSink(api.clients, '10.0.0.1', (line) => lines.push(line));
    sink.track('u1', 'ns', 'p');
    api.fail.next = true;
    sink.offer(pod(ready('False', 'ContainersNotReady')));
    // Not flush: it would try again itself.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(api.bodies).toHaveLength(0);
    expect(lines.join()).toContain('ECONNREFUSED');
    sink.reconcile(pod(ready('False', 'ContainersNotReady')));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(api.bodies).toHaveLength(1);
  });

  it('tries a failed write again after 10 s by itself (the status manager\'s syncBatch), logged once however often it fails, and not after close', async () => {
    const clock = new FakeClock(0);
    const api = fakeApi();
    const lines: string[] = [];
    const sink = createStatusSink(api.clients, '10.0.0.1', (line) => lines.push(line), { clock });
    sink.track('u1', 'ns', 'p');
    api.fail.next = true;
    sink.offer(pod(ready('True')));
    await clock.advance(STATUS_RETRY_MS - 1);
    expect(api.bodies).toHaveLength(0);
    api.fail.next = true;
    await clock.advance(1);
    expect(api.bodies).toHaveLength(0);
    await clock.advance(STATUS_RETRY_MS);
    expect(api.bodies).toHaveLength(1);
    expect(lines).toHaveLength(1);
    api.fail.next = true;
    sink.offer(pod(ready('False', 'ContainersNotReady')));
    await clock.advance(1);
    sink.close();
    await clock.advance(STATUS_RETRY_MS * 2);
    expect(api.bodies).toHaveLength(1);
  });
});
