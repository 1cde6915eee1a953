/**
 * One line when the kubelet's event spam filter (client-go's: 25 events per object and type,
 * then one per 5 minutes) starts dropping a pod's events. The demo spends its 25 in about two
 * minutes; after that liveness failures stay at `x5` while kills go on and CrashLoopBackOff
 * comes without an event — the kubelet's behaviour, which a reader would take for probelet's
 * unless told. Told once per pod and event type.
 */
import type { Event } from '../../api/types.js';
import { SPAM_BURST } from '../../kubelet/event-correlator.js';

/** The two streams of the kubelet's recorder this needs: every event, and the ones the API would store. */
export interface RecordedEvents {
  subscribe(listener: (e: Event) => void): () => void;
  subscribeLog(listener: (e: Event) => void): () => void;
}

export function watchSpamFilter(recorder: RecordedEvents, notice: (text: string) => void): () => void {
  let pending: Event | undefined;
  const told = new Set<string>();
  // An event's fate is settled within the recorder's synchronous call: logged, then stored or not.
  const settle = (): void => {
    const dropped = pending;
    pending = undefined;
    if (dropped === undefined) return;
    const ref = dropped.involvedObject;
    const key = `${ref.namespace ?? ''}/${ref.name ?? ''}/${dropped.type ?? ''}`;
    if (told.has(key)) return;
    told.add(key);
    notice(
      `probelet: the kubelet's event spam filter has spent its ${SPAM_BURST} ${dropped.type ?? ''} events for ${ref.kind?.toLowerCase() ?? 'pod'}/${ref.name ?? ''}: ` +
        'more come one per 5 minutes, counts jump (kills and restarts go on: see the status), as on a cluster',
    );
  };
  const offStored = recorder.subscribe(() => {
    pending = undefined;
  });
  const offLog = recorder.subscribeLog((e) => {
    settle();
    pending = e;
    queueMicrotask(settle);
  });
  return () => {
    offStored();
    offLog();
  };
}
