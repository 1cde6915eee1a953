/** The events list beside the lanes, newest first, filtered by text and type. */
import type { Event } from '../../src/api/types.js';
import { clock, h } from './dom.js';
import { eventTime } from './state.js';

export interface EventFilter {
  text: string;
  type: string;
}

export function renderEvents(list: HTMLElement, events: Iterable<Event>, filter: EventFilter): void {
  const needle = filter.text.trim().toLowerCase();
  const rows = [...events]
    .filter((e) => filter.type === '' || e.type === filter.type)
    .map((e) => ({ e, object: objectOf(e), at: eventTime(e) }))
    .filter(({ e, object }) => needle === '' || `${e.reason ?? ''} ${object} ${e.message ?? ''}`.toLowerCase().includes(needle))
    .sort((a, b) => b.at - a.at)
    .slice(0, 200);
  list.replaceChildren(
    ...rows.map(({ e, object, at }) =>
      h(
        'li',
        { class: `event ${e.type === 'Warning' ? 'warning' : 'normal'}` },
        h('span', { class: 'time' }, clock(at).slice(0, 8)),
        h('span', { class: 'reason' }, `${e.reason ?? ''}${(e.count ?? 1) > 1 ? ` ×${e.count ?? 1}` : ''}`),
        h('span', { class: 'object' }, object),
        h('span', { class: 'message' }, e.message ?? ''),
      ),
    ),
  );
}

function objectOf(e: Event): string {
  const container = /\{(.+)\}$/.exec(e.involvedObject.fieldPath ?? '')?.[1];
  return `${e.involvedObject.name ?? ''}${container ? `/${container}` : ''}`;
}
