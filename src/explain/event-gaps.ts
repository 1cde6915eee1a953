/**
 * What the events cannot tell, added to every diagnosis: starts that restartCount implies but
 * no `Started` event is left for (expired after the API server's `--event-ttl`, or dropped by
 * the kubelet's spam filter), and runs known only by restartCount.
 */
import type { Statement } from './causes.js';
import { EVENT_TTL_SECONDS, fmt, ms, plural } from './causes/common.js';
import type { DiagnoseOptions } from './diagnosis.js';
import type { ContainerTimeline } from './timeline.js';

export function eventGaps(t: ContainerTimeline, options: DiagnoseOptions): Statement[] {
  const out: Statement[] = [];
  const starts = t.starts?.count ?? 0;
  const expected = t.restartCount + (t.instances.some((i) => i.from === 'state' && i.state !== 'waiting') ? 1 : 0);
  if (t.restartCount > 0 && starts < expected) {
    const missing = expected - starts;
    const oldest = t.starts?.first;
    const age = oldest === undefined ? undefined : Math.round((options.nowMs - (ms(oldest) ?? options.nowMs)) / 1000);
    const why =
      starts === 0
        ? `no Started event is left: events expire after ${fmt(EVENT_TTL_SECONDS)} (kube-apiserver --event-ttl)`
        : age !== undefined && age >= EVENT_TTL_SECONDS - 60
          ? `the oldest left is ${fmt(age)} old: the earlier ones expired`
          : `the kubelet's event spam filter (25 events per pod, then one per 5 min) may have dropped some`;
    out.push({ text: `${plural(missing, 'start')} of the ${expected} that restartCount implies ${missing === 1 ? 'has' : 'have'} no event; ${why}; what is said of ${missing === 1 ? 'it' : 'them'} comes from restartCount and lastState only`, confidence: 'certain', from: 'events' });
  }
  if (t.unseenInstances > 0) {
    out.push({ text: `${plural(t.unseenInstances, 'earlier run')} known only by restartCount: the status keeps no exit code or times for ${t.unseenInstances === 1 ? 'it' : 'them'}`, confidence: 'certain', from: 'status' });
  }
  return out;
}
