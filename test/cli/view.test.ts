/**
 * The NAME READY STATUS RESTARTS AGE columns, against kubectl's `printPod` cases, and the
 * two streaming forms of the live view (lines for a pipe, JSON for scripts).
 */
import { describe, expect, it } from 'vitest';
import type { ContainerStatus, Event, Pod, PodCondition } from '../../src/api/types.js';
import { createLiveView } from '../../src/cli/view/live-view.js';
import { renderScreen } from '../../src/cli/view/screen-view.js';
import { eventLine, eventObject, formatTable, podRowCells, summarizePod } from '../../src/cli/view/view.js';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString().replace('.000Z', 'Z');

interface PodParts {
  init?: { name: string; sidecar?: boolean }[];
  containers?: string[];
  phase?: string;
  initStatuses?: Partial<ContainerStatus>[];
  statuses?: Partial<ContainerStatus>[];
  conditions?: PodCondition[];
  deleting?: boolean;
}

function pod(parts: PodParts): Pod {
  const status = (s: Partial<ContainerStatus>): ContainerStatus => ({ name: '', image: '', imageID: '', ready: false, restartCount: 0, ...s });
  return {
    metadata: { name: 'web', uid: 'u1', creationTimestamp: at(0), ...(parts.deleting ? { deletionTimestamp: at(50) } : {}) },
    spec: {
      initContainers: (parts.init ?? []).map((c) => ({ name: c.name, ...(c.sidecar ? { restartPolicy: 'Always' } : {}) })),
      containers: (parts.containers ?? ['app']).map((name) => ({ name })),
    },
    status: {
      phase: parts.phase ?? 'Running',
      initContainerStatuses: (parts.initStatuses ?? []).map(status),
      containerStatuses: (parts.statuses ?? []).map(status),
      conditions: parts.conditions ?? [],
    },
  };
}

const running = { state: { running: { startedAt: at(1) } } };
const waiting = (reason: string) => ({ state: { waiting: { reason } } });
const terminated = (exitCode: number, reason?: string, signal?: number) => ({
  state: { terminated: { exitCode, ...(reason ? { reason } : {}), ...(signal ? { signal } : {}) } },
});
const cond = (type: string, status: 'True' | 'False'): PodCondition => ({ type, status });

/** READY and STATUS as kubectl would print them. */
function readyStatus(p: Pod): string {
  const s = summarizePod(p);
  return `${s.ready}/${s.total} ${s.status}`;
}

describe('STATUS and READY (kubectl printPod)', () => {
  it('shows the phase while nothing more specific is known', () => {
    expect(readyStatus(pod({ phase: 'Pending' }))).toBe('0/1 Pending');
    expect(readyStatus(pod({ statuses: [{ name: 'app', ...waiting('ContainerCreating') }], phase: 'Pending' }))).toBe(
      '0/1 ContainerCreating',
    );
  });

  it('counts ready running containers only', () => {
    const p = pod({ containers: ['a', 'b'], statuses: [{ name: 'a', ready: true, ...running }, { name: 'b', ...running }] });
    expect(readyStatus(p)).toBe('1/2 Running');
    p.status?.containerStatuses?.forEach((c) => (c.ready = true));
    expect(readyStatus(p)).toBe('2/2 Running');
  });

  it('shows init progress as Init:i/n, and an init container’s trouble as Init:<reason>', () => {
    const init = [{ name: 'i1' }, { name: 'i2' }];
    const podInitializing = { name: 'app', ...waiting('PodInitializing') };
    expect(readyStatus(pod({ init, phase: 'Pending', initStatuses: [{ name: 'i1', ...waiting('PodInitializing') }], statuses: [podInitializing] }))).toBe(
      '0/1 Init:0/2',
    );
    expect(
      readyStatus(pod({ init, phase: 'Pending', initStatuses: [{ name: 'i1', ...terminated(0, 'Completed') }, { name: 'i2', ...running }], statuses: [podInitializing] })),
    ).toBe('0/1 Init:1/2');
    expect(readyStatus(pod({ init, phase: 'Pending', initStatuses: [{ name: 'i1', ...waiting('CrashLoopBackOff') }] }))).toBe('0/1 Init:CrashLoopBackOff');
    expect(readyStatus(pod({ init, phase: 'Pending', initStatuses: [{ name: 'i1', ...terminated(1, 'Error') }] }))).toBe('0/1 Init:Error');
    expect(readyStatus(pod({ init, phase: 'Pending', initStatuses: [{ name: 'i1', ...terminated(3) }] }))).toBe('0/1 Init:ExitCode:3');
    expect(readyStatus(pod({ init, phase: 'Pending', initStatuses: [{ name: 'i1', ...terminated(137, undefined, 9) }] }))).toBe('0/1 Init:Signal:9');
  });

  it('shows PodInitializing once init containers are done but the app has not started', () => {
    const p = pod({
      init: [{ name: 'i1' }],
      phase: 'Pending',
      initStatuses: [{ name: 'i1', ...terminated(0, 'Completed') }],
      statuses: [{ name: 'app', ...waiting('PodInitializing') }],
      conditions: [cond('Initialized', 'True')],
    });
    expect(readyStatus(p)).toBe('0/1 PodInitializing');
  });

  it('counts sidecars (restartable init containers) in READY, and their restarts', () => {
    const p = pod({
      init: [{ name: 'proxy', sidecar: true }],
      initStatuses: [{ name: 'proxy', started: true, ready: true, restartCount: 2, ...running }],
      statuses: [{ name: 'app', ready: false, ...running }],
      conditions: [cond('Initialized', 'True')],
    });
    expect(readyStatus(p)).toBe('1/2 Running');
    expect(summarizePod(p).restarts).toBe(2);
    // A sidecar that has not started yet holds initialization up.
    const starting = pod({
      init: [{ name: 'proxy', sidecar: true }],
      phase: 'Pending',
      initStatuses: [{ name: 'proxy', started: false, ...running }],
      statuses: [{ name: 'app', ...waiting('PodInitializing') }],
    });
    expect(readyStatus(starting)).toBe('0/2 Init:0/1');
  });

  it('shows a container’s waiting or terminated reason over the phase', () => {
    expect(readyStatus(pod({ statuses: [{ name: 'app', restartCount: 3, ...waiting('CrashLoopBackOff') }] }))).toBe('0/1 CrashLoopBackOff');
    expect(readyStatus(pod({ statuses: [{ name: 'app', ...terminated(1, 'Error') }] }))).toBe('0/1 Error');
    expect(readyStatus(pod({ phase: 'Succeeded', statuses: [{ name: 'app', ...terminated(0, 'Completed') }] }))).toBe('0/1 Completed');
    expect(readyStatus(pod({ statuses: [{ name: 'app', ...terminated(2) }] }))).toBe('0/1 ExitCode:2');
    expect(readyStatus(pod({ statuses: [{ name: 'app', ...terminated(143, undefined, 15) }] }))).toBe('0/1 Signal:15');
    // The first container's reason wins (kubectl walks them backwards).
    const two = pod({ containers: ['a', 'b'], statuses: [{ name: 'a', ...waiting('CrashLoopBackOff') }, { name: 'b', ...terminated(1, 'Error') }] });
    expect(readyStatus(two)).toBe('0/2 CrashLoopBackOff');
  });

  it('does not call a pod Completed while one of its containers still runs', () => {
    const parts = { containers: ['a', 'b'], statuses: [{ name: 'a', ready: true, ...running }, { name: 'b', ...terminated(0, 'Completed') }] };
    expect(readyStatus(pod(parts))).toBe('1/2 NotReady');
    expect(readyStatus(pod({ ...parts, conditions: [cond('Ready', 'True')] }))).toBe('1/2 Running');
  });

  it('shows Terminating once deletion is requested, until the pod is terminal', () => {
    expect(readyStatus(pod({ deleting: true, statuses: [{ name: 'app', ready: true, ...running }] }))).toBe('1/1 Terminating');
    expect(readyStatus(pod({ deleting: true, phase: 'Pending', statuses: [{ name: 'app', ...waiting('CrashLoopBackOff') }] }))).toBe(
      '0/1 Terminating',
    );
    expect(readyStatus(pod({ deleting: true, phase: 'Succeeded', statuses: [{ name: 'app', ...terminated(0, 'Completed') }] }))).toBe(
      '0/1 Completed',
    );
    expect(readyStatus(pod({ deleting: true, phase: 'Failed', statuses: [{ name: 'app', ...terminated(137, 'Error') }] }))).toBe('0/1 Error');
  });
});

describe('RESTARTS and AGE', () => {
  it('prints restarts with the time since the last one, and the age, like kubectl', () => {
    const p = pod({
      statuses: [{ name: 'app', restartCount: 4, ...running, lastState: { terminated: { exitCode: 137, finishedAt: at(100) } } }],
    });
    expect(podRowCells(summarizePod(p), T0 + 130_000)).toEqual(['web', '0/1', 'Running', '4 (30s ago)', '2m10s']);
    expect(podRowCells(summarizePod(pod({ statuses: [{ name: 'app', ...running }] })), T0 + 5000)).toEqual(['web', '0/1', 'Running', '0', '5s']);
    const unknown = pod({});
    expect(podRowCells(summarizePod({ ...unknown, metadata: { name: 'web' } }), T0)[4]).toBe('<unknown>');
  });

  it('lays out a table with columns three spaces apart', () => {
    expect(formatTable([['NAME', 'READY'], ['a-long-name', '1/1']])).toEqual(['NAME          READY', 'a-long-name   1/1']);
  });
});

function event(overrides: Partial<Event> = {}): Event {
  return {
    metadata: { name: 'web.1', namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'web', namespace: 'default', fieldPath: 'spec.containers{app}' },
    reason: 'Unhealthy',
    message: 'Readiness probe failed: HTTP probe failed with statuscode: 503',
    type: 'Warning',
    source: { component: 'kubelet' },
    firstTimestamp: at(0),
    lastTimestamp: at(10),
    count: 3,
    ...overrides,
  };
}

describe('events', () => {
  it('names the pod and the container an event is about, on one line', () => {
    expect(eventObject(event())).toBe('pod/web{app}');
    expect(eventObject(event({ involvedObject: { kind: 'Pod', name: 'web' } }))).toBe('pod/web');
    expect(eventLine(event(), T0 + 12_000)).toBe(
      'pod/web{app}  Warning  Unhealthy  2s (x3 over 12s)  kubelet  Readiness probe failed: HTTP probe failed with statuscode: 503',
    );
    expect(eventLine(event({ message: 'Liveness probe failed: line one\nline two\n' }), T0 + 12_000)).toMatch(/failed: line one line two$/);
  });
});

describe('live view (streaming forms)', () => {
  const capture = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { stdout: (t: string) => void out.push(t), stderr: (t: string) => void err.push(t) } };
  };
  const notATerminal = { isTTY: false, columns: () => 80, rows: () => 24 };

  it('prints a row only when NAME READY STATUS RESTARTS change, and every event', () => {
    const { out, err, io } = capture();
    const view = createLiveView({ output: 'text', io, terminal: notATerminal, podNames: ['web'], now: () => T0 + 12_000 });
    const p = pod({ statuses: [{ name: 'app', ...running }] });
    view.pod(p);
    view.pod({ ...p, status: { ...p.status, startTime: at(1) } }); // only a timestamp moved
    view.pod(pod({ statuses: [{ name: 'app', ready: true, ...running }] }));
    view.event(event());
    view.notice('stopping');
    view.close();
    expect(out.join('').split('\n')).toEqual([
      'NAME   READY   STATUS              RESTARTS         AGE',
      'web    0/1     Running             0                12s',
      'web    1/1     Running             0                12s',
      'pod/web{app}  Warning  Unhealthy  2s (x3 over 12s)  kubelet  Readiness probe failed: HTTP probe failed with statuscode: 503',
      '',
    ]);
    expect(err).toEqual(['stopping\n']);
  });

  it('--output json: one object per line, every status change and every event', () => {
    const { out, io } = capture();
    const view = createLiveView({ output: 'json', io, terminal: notATerminal, podNames: ['web'] });
    const p = pod({ statuses: [{ name: 'app', ...running }] });
    view.pod(p);
    view.pod(p);
    view.event(event());
    view.close();
    const lines = out.join('').trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string });
    expect(lines).toEqual([
      { type: 'pod', pod: p },
      { type: 'pod', pod: p },
      { type: 'event', event: event() },
    ]);
  });

  it('a crash: exit code and the last log lines beside the status, in each of the three forms', () => {
    const note = { podUID: 'u1', pod: 'web', container: 'app', exitCode: 3, reason: 'Error', log: ['starting', 'fatal: no config'], logPath: '/tmp/x/0.log', finishedAt: T0 + 5000 };
    const lines = capture();
    const lineView = createLiveView({ output: 'text', io: lines.io, terminal: notATerminal, podNames: ['web'], now: () => T0 + 6000 });
    lineView.crash(note);
    lineView.crash({ ...note, log: [] });
    lineView.close();
    expect(lines.out.join('').split('\n').slice(1)).toEqual([
      'pod/web{app}  exited with code 3 (Error); last lines of its log:',
      '    | starting',
      '    | fatal: no config',
      'pod/web{app}  exited with code 3 (Error); its log is empty',
      '',
    ]);

    const json = capture();
    const jsonView = createLiveView({ output: 'json', io: json.io, terminal: notATerminal, podNames: ['web'] });
    jsonView.crash(note);
    expect(JSON.parse(json.out.join(''))).toEqual({
      type: 'crash',
      pod: 'web',
      container: 'app',
      exitCode: 3,
      reason: 'Error',
      finishedAt: '2025-01-01T00:00:05.000Z',
      log: ['starting', 'fatal: no config'],
      logPath: '/tmp/x/0.log',
    });

    const screen = capture();
    const tty = { isTTY: true, columns: () => 80, rows: () => 30 };
    const screenView = createLiveView({ output: 'text', io: screen.io, terminal: tty, podNames: ['web'], now: () => T0 + 6000 });
    screenView.pod(pod({ statuses: [{ name: 'app', restartCount: 1, state: { waiting: { reason: 'CrashLoopBackOff' } } }] }));
    screenView.crash(note);
    screenView.close();
    const frames = screen.out.join('');
    const last = frames.slice(frames.lastIndexOf('\x1b[J') + 3).split('\n');
    expect(last.slice(1, 7)).toEqual([
      'web    0/1     CrashLoopBackOff   1          6s',
      '',
      'LAST STATE',
      'pod/web{app}  exited with code 3 (Error); last lines of its log:',
      '    | starting',
      '    | fatal: no config',
    ]);
  });

  it('on a terminal, redraws the screen in place', () => {
    const { out, io } = capture();
    const tty = { isTTY: true, columns: () => 60, rows: () => 20 };
    const view = createLiveView({ output: 'text', io, terminal: tty, podNames: ['web'], now: () => T0 + 3000 });
    view.pod(pod({ statuses: [{ name: 'app', ...running }] }));
    view.event(event({ message: 'x'.repeat(200) }));
    view.close();
    const frames = out.join('');
    // First frame: header only; the last one moved the cursor up over the previous frame.
    expect(frames.startsWith('NAME   READY   STATUS   RESTARTS   AGE\n\nEVENTS (none yet)\n')).toBe(true);
    expect(frames).toContain('\x1b[3A\r\x1b[J');
    const last = frames.slice(frames.lastIndexOf('\x1b[J') + 3).split('\n');
    expect(last.slice(0, 4)).toEqual(['NAME   READY   STATUS    RESTARTS   AGE', 'web    0/1     Running   0          3s', '', 'EVENTS']);
    // Too long for one line: the columns, then the message under them, cut into lines (3 at most, the last cut with …).
    expect(last[4]?.startsWith('pod/web{app}  Warning  Unhealthy  ')).toBe(true);
    expect(last[4]?.length).toBeLessThanOrEqual(59);
    expect(last.slice(5, 8).map((l) => l.length)).toEqual([59, 59, 59]);
    expect(last[5]).toBe(`    ${'x'.repeat(55)}`);
    expect(last[7]?.endsWith('…')).toBe(true);
  });

  it('streamed rows line up under the header whatever the first status (ContainerCreating) or a restart count in the tens', () => {
    const { out, io } = capture();
    const view = createLiveView({ output: 'text', io, terminal: notATerminal, podNames: ['web'], now: () => T0 + 300_000 });
    view.pod(pod({ phase: 'Pending', statuses: [{ name: 'app', ...waiting('ContainerCreating') }] }));
    view.pod(pod({ statuses: [{ name: 'app', restartCount: 12, ...waiting('CrashLoopBackOff'), lastState: { terminated: { exitCode: 137, finishedAt: at(10) } } }] }));
    view.close();
    const rows = out.join('').trimEnd().split('\n');
    expect(rows).toEqual([
      'NAME   READY   STATUS              RESTARTS         AGE',
      'web    0/1     ContainerCreating   0                5m',
      'web    0/1     CrashLoopBackOff    12 (4m50s ago)   5m',
    ]);
    for (const column of ['STATUS', 'RESTARTS', 'AGE']) {
      const at = (rows[0] ?? '').indexOf(column);
      // Every row has a value starting right under the header's column.
      for (const row of rows.slice(1)) expect(row.slice(at - 1, at + 1), `${column} in ${row}`).toMatch(/^ \S/);
    }
  });
});

describe('the screen on a terminal (renderScreen)', () => {
  const demo = pod({ containers: ['app', 'proxy', 'worker'], statuses: [{ name: 'app', restartCount: 3, ...waiting('CrashLoopBackOff') }] });
  const messages = [
    'Startup probe failed: HTTP probe failed with statuscode: 503',
    'Liveness probe failed: HTTP probe failed with statuscode: 500',
    'Container app failed liveness probe, will be restarted',
    'Back-off restarting failed container app in pod demo_default(3c69c1b0-1d2e-4f5a-8b9c-0d1e2f3a4b5c)',
    'Readiness probe failed: Get "http://127.0.0.1:18573/ready": dial tcp 127.0.0.1:18573: connect: connection refused',
  ];
  const events = Array.from({ length: 12 }, (_, i) =>
    event({ metadata: { name: `demo.${i}`, namespace: 'default' }, involvedObject: { kind: 'Pod', name: 'demo', namespace: 'default', fieldPath: 'spec.containers{app}' }, message: messages[i % messages.length] ?? '', count: 6 + i }),
  );
  const screen = (columns: number, rows: number): string[] => renderScreen({ pods: [demo], events, crashes: [] }, T0 + 33_000, columns, rows);
  const bare = (text: string): string => text.replace(/\s/g, '');
  /** The messages shown (without their blanks), each put together again from the lines it was wrapped into. */
  const shownMessages = (lines: string[]): string[] => {
    const out: string[] = [];
    for (const line of lines.slice(lines.indexOf('EVENTS') + 1)) {
      if (line.startsWith('    ')) out.push(`${out.pop() ?? ''}${bare(line)}`);
      else out.push(line.includes('kubelet  ') ? bare(line.slice(line.indexOf('kubelet  ') + 9)) : '');
    }
    return out;
  };

  it('80×24: fits the screen, and every message is shown whole, wrapped under its event in lines of at least 50 characters', () => {
    const lines = screen(80, 24);
    expect(lines.length).toBeLessThanOrEqual(24 - 2);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(79);
    expect(lines).toContain('    Liveness probe failed: HTTP probe failed with statuscode: 500');
    const shown = shownMessages(lines);
    expect(shown.length).toBeGreaterThanOrEqual(5);
    for (const message of shown) expect(messages.map(bare)).toContain(message);
    // The newest event last.
    expect(shown.at(-1)).toBe(bare(messages[11 % messages.length] ?? ''));
  });

  it('120×40: the newest 10 events; each on one line when it fits, else wrapped, never cut', () => {
    const lines = screen(120, 40);
    expect(lines.length).toBeLessThanOrEqual(40 - 2);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(119);
    const shown = shownMessages(lines);
    expect(shown).toHaveLength(10);
    for (const message of shown) expect(messages.map(bare)).toContain(message);
    expect(lines).toContain('pod/demo{app}  Warning  Unhealthy  23s (x13 over 33s)  kubelet  Container app failed liveness probe, will be restarted');
    expect(lines.some((l) => l.endsWith('…'))).toBe(false);
  });
});
