/**
 * Pods and their probe lanes on one time axis: a row per pod (phase, conditions), a block
 * per container, a lane per probe where every attempt is a mark colored by its outcome, and
 * across the container's lanes what the kubelet did — kills, restarts, back-off waits and
 * Ready changes — at the times the flight recorder noted them.
 */
import type { ContainerStatus, Pod } from '../../src/api/types.js';
import type { ProbeAttemptRecord, ProbeTransitionRecord } from '../../src/prober/recorder.js';
import { clock, h, s } from './dom.js';
import type { Lane, Model } from './state.js';

export interface TimeWindow {
  from: number;
  to: number;
}

export type Pick = (lane: Lane, attempt: ProbeAttemptRecord, sticky: boolean) => void;

const LANE_HEIGHT = 20;
const KIND_ORDER = ['startup', 'readiness', 'liveness'];
const ACTION_CLASS: Record<string, string> = { Killing: 'kill', Started: 'restart', BackOff: 'backoff', Ready: 'ready' };

export function renderPods(root: HTMLElement, model: Model, window: TimeWindow, width: number, selected: string | undefined, pick: Pick): void {
  const pods = [...model.pods.values()].sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  if (pods.length === 0) {
    root.replaceChildren(h('p', { class: 'hint' }, 'No pods yet.'));
    return;
  }
  const x = (t: number): number => ((t - window.from) / Math.max(1, window.to - window.from)) * width;
  root.replaceChildren(...pods.map((pod) => renderPod(pod, model, window, width, x, selected, pick)));
}

function renderPod(pod: Pod, model: Model, window: TimeWindow, width: number, x: (t: number) => number, selected: string | undefined, pick: Pick): HTMLElement {
  const name = pod.metadata?.name ?? '';
  const uid = pod.metadata?.uid ?? '';
  const status = pod.status;
  const head = h(
    'div',
    { class: 'pod-head' },
    h('h2', {}, name),
    h('span', { class: `phase ${(status?.phase ?? 'Pending').toLowerCase()}` }, pod.metadata?.deletionTimestamp ? 'Terminating' : (status?.phase ?? 'Pending')),
    ...(status?.conditions ?? []).map((c) => h('span', { class: `condition ${c.status === 'True' ? 'true' : 'false'}`, title: c.message ?? c.reason ?? '' }, c.type)),
  );
  const statuses = [...(status?.initContainerStatuses ?? []), ...(status?.containerStatuses ?? [])];
  const names = [...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always'), ...(pod.spec?.containers ?? [])].map((c) => c.name);
  const containers = names.map((container) => {
    const lanes = [...model.lanes.values()]
      .filter((l) => l.info.podUID === uid && l.info.container === container)
      .sort((a, b) => KIND_ORDER.indexOf(a.info.probeType) - KIND_ORDER.indexOf(b.info.probeType));
    return renderContainer(container, statuses.find((c) => c.name === container), lanes, window, width, x, selected, pick);
  });
  return h('div', { class: 'pod', 'data-pod': name }, head, renderAxis(window, width, x), ...containers);
}

function renderAxis(window: TimeWindow, width: number, x: (t: number) => number): HTMLElement {
  const svg = s('svg', { class: 'axis', width, height: 18 });
  const span = window.to - window.from;
  const step = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600].map((n) => n * 1000).find((n) => span / n <= 8) ?? 7_200_000;
  for (let t = Math.ceil(window.from / step) * step; t <= window.to; t += step) {
    svg.append(s('line', { x1: x(t), x2: x(t), y1: 12, y2: 18, class: 'tick' }));
    const label = s('text', { x: x(t) + 2, y: 10, class: 'tick-label' });
    label.textContent = clock(t).slice(0, 8);
    svg.append(label);
  }
  return h('div', { class: 'lane-row axis-row' }, h('span', { class: 'lane-label' }, ''), svg);
}

function renderContainer(
  name: string,
  status: ContainerStatus | undefined,
  lanes: Lane[],
  window: TimeWindow,
  width: number,
  x: (t: number) => number,
  selected: string | undefined,
  pick: Pick,
): HTMLElement {
  const state = status?.state?.running ? 'running' : status?.state?.terminated ? `terminated (${status.state.terminated.reason ?? status.state.terminated.exitCode})` : (status?.state?.waiting?.reason ?? 'waiting');
  const facts = `${state}${status?.ready ? ', ready' : ''}, restarts ${status?.restartCount ?? 0}`;
  const actions = containerActions(lanes);
  const rows = lanes.length === 0 ? [h('div', { class: 'lane-row' }, h('span', { class: 'lane-label' }, 'no probes'))] : lanes.map((lane) => renderLane(lane, actions, window, width, x, selected, pick));
  return h(
    'div',
    { class: 'container', 'data-container': name },
    h('div', { class: 'container-head' }, h('strong', {}, name), h('span', { class: 'facts' }, facts)),
    ...rows,
  );
}

/** The kubelet's actions on this container, once each (a restart is noted on every lane). */
function containerActions(lanes: Lane[]): ProbeTransitionRecord[] {
  const seen = new Set<string>();
  const out: ProbeTransitionRecord[] = [];
  for (const lane of lanes) {
    for (const t of lane.transitions) {
      if (t.kind !== 'action') continue;
      const key = `${t.reason ?? ''}@${t.time}@${t.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(t);
    }
  }
  return out.sort((a, b) => a.time - b.time);
}

function renderLane(lane: Lane, actions: ProbeTransitionRecord[], window: TimeWindow, width: number, x: (t: number) => number, selected: string | undefined, pick: Pick): HTMLElement {
  const { info } = lane;
  const svg = s('svg', { class: 'lane', width, height: LANE_HEIGHT, 'data-container': info.container, 'data-probe': info.probeType });
  // Back-off waits: from a BackOff to the next start of the container.
  actions.forEach((t, i) => {
    if (t.reason !== 'BackOff') return;
    const end = actions.slice(i + 1).find((n) => n.reason === 'Started')?.time ?? window.to;
    svg.append(s('rect', { class: 'backoff-wait', x: x(t.time), y: 0, width: Math.max(1, x(end) - x(t.time)), height: LANE_HEIGHT }, `back-off wait: ${t.message}`));
  });
  for (const t of lane.transitions) {
    if (t.kind === 'threshold' && t.time >= window.from) {
      svg.append(s('line', { class: `threshold ${t.to ?? ''}`, x1: x(t.time), x2: x(t.time), y1: 0, y2: 4 }, t.message));
    }
  }
  for (const a of lane.attempts) {
    if (a.start + a.durationMs < window.from) continue;
    const outcome = a.errored ? 'errored' : (a.outcome ?? a.verdict);
    const key = `${lane.key}#${a.seq}`;
    const mark = s(
      'rect',
      {
        class: `mark ${outcome}${selected === key ? ' selected' : ''}`,
        x: x(a.start),
        y: 4,
        width: Math.max(4, x(a.start + a.durationMs) - x(a.start)),
        height: LANE_HEIGHT - 8,
        rx: 1.5,
        'data-seq': a.seq,
        tabindex: 0,
      },
      `${clock(a.start)} ${outcome}${a.message ? `: ${a.message.slice(0, 120)}` : ''}`,
    );
    mark.addEventListener('mouseenter', () => pick(lane, a, false));
    mark.addEventListener('click', () => pick(lane, a, true));
    mark.addEventListener('focus', () => pick(lane, a, true));
    svg.append(mark);
  }
  for (const t of actions) {
    if (t.time < window.from) continue;
    const cls = ACTION_CLASS[t.reason ?? ''] ?? 'action';
    const ready = t.reason === 'Ready' ? (t.message.endsWith('True') ? ' true' : ' false') : '';
    svg.append(s('line', { class: `marker ${cls}${ready}`, x1: x(t.time), x2: x(t.time), y1: 0, y2: LANE_HEIGHT }, `${clock(t.time)} ${t.reason ?? ''}: ${t.message}`));
  }
  return h(
    'div',
    { class: 'lane-row' },
    h('span', { class: 'lane-label', title: `timeout ${info.timeoutSeconds}s, period ${info.periodSeconds}s` }, `${info.probeType} · ${info.handler}`),
    svg,
  );
}
