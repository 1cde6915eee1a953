/** The details panel: everything the recorder kept about one attempt, as text. */
import type { ProbeAttemptRecord, ProbeRingInfo } from '../../src/prober/recorder.js';
import { clock, h } from './dom.js';

export function renderDetails(panel: HTMLElement, info: ProbeRingInfo, a: ProbeAttemptRecord): void {
  const rows: Array<[string, string, string?]> = [
    ['probe', `${info.pod}/${info.container} ${info.probeType} (${info.handler}, timeout ${info.timeoutSeconds}s, every ${info.periodSeconds}s)`],
    ['attempt', `#${a.seq}${a.attempt > 1 ? ` after ${a.attempt - 1} errored run(s)` : ''}`],
    ['due', clock(a.due)],
    ['started', `${clock(a.start)} (late ${a.latenessMs} ms)`],
    ['duration', `${a.durationMs} ms`],
    ['outcome', a.errored ? 'errored' : (a.outcome ?? a.verdict), 'outcome'],
    ['verdict', a.verdict],
    ['cached result', a.result ?? '—'],
    ['container', a.containerID],
  ];
  const d = a.details ?? {};
  if (d.statusCode !== undefined) rows.push(['status code', String(d.statusCode), 'status-code']);
  for (const [name, value] of Object.entries(d.headers ?? {})) rows.push([name, value]);
  if (d.redirect !== undefined) rows.push(['refused redirect', d.redirect]);
  if (d.connectMs !== undefined) rows.push(['connected in', `${d.connectMs} ms`]);
  if (d.errorCode !== undefined) rows.push(['error', d.errorCode]);
  if (d.servingStatus !== undefined) rows.push(['serving status', d.servingStatus]);
  if (d.grpcCode !== undefined) rows.push(['gRPC code', String(d.grpcCode)]);
  if (d.exitCode !== undefined) rows.push(['exit code', String(d.exitCode), 'exit-code']);

  const list = h('dl');
  for (const [term, value, cls] of rows) list.append(h('dt', {}, term), h('dd', cls ? { class: cls } : {}, value));
  panel.replaceChildren(
    h('h2', {}, 'Attempt'),
    list,
    h('h3', {}, 'Message'),
    h('pre', { class: 'message' }, a.message || '(none)'),
    ...(d.body !== undefined ? [h('h3', {}, 'Body'), h('pre', { class: 'body' }, d.body || '(empty)')] : []),
  );
}
