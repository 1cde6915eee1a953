/**
 * The live view's one line when the kubelet's event spam filter starts dropping a pod's
 * events (25 per object and type, then one per 5 minutes): told once per pod and type, and
 * not before the 26th event of a kind.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { watchSpamFilter } from '../../src/cli/run/spam-notice.js';
import { createEventRecorder } from '../../src/kubelet/events.js';
import { FakeClock } from '../../src/util/clock.js';

const pod: Pod = { metadata: { name: 'demo', namespace: 'default', uid: 'u1' }, spec: { containers: [{ name: 'app' }] } };

describe('the spam filter notice', () => {
  it('says once, at the first event the filter drops, that the kubelet drops them', async () => {
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
    const recorder = createEventRecorder({ clock, host: 'h' });
    const said: string[] = [];
    const off = watchSpamFilter(recorder, (text) => said.push(text));
    for (let i = 0; i < 25; i++) {
      recorder.event({ pod, containerName: 'app' }, 'Warning', 'Unhealthy', `Liveness probe failed: ${i}`);
      await clock.advance(1000);
    }
    expect(said).toEqual([]);
    for (let i = 0; i < 5; i++) {
      recorder.event({ pod, containerName: 'app' }, 'Warning', 'Unhealthy', `Liveness probe failed: more ${i}`);
      await clock.advance(1000);
    }
    expect(said).toEqual([
      "probelet: the kubelet's event spam filter has spent its 25 Warning events for pod/demo: more come one per 5 minutes, counts jump (kills and restarts go on: see the status), as on a cluster",
    ]);
    off();
  });
});
