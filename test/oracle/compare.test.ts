/**
 * The oracle's judge on hand-made records: what it calls the same and what it reports.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { compareRecords } from './compare.js';
import { KNOWN_DIFFERENCES } from './known-differences.js';
import { readGolden } from './oracle.js';
import { SCENARIOS } from './scenarios.js';
import { conditionRecords, containerRecords, eventRecords, firstStartMs, maskNamespace, type OracleRecord } from './record.js';

function rec(agent: OracleRecord['agent'], starts: number[], events: OracleRecord['events'] = []): OracleRecord {
  return {
    scenario: 's',
    agent,
    version: 'v',
    duration: 100,
    phase: 'Running',
    events,
    containers: [{ name: 'app', starts, exits: [], ready: [], waiting: [], restartCount: starts.length - 1 }],
    requests: [],
  };
}
const ev = (reason: string, message: string, count: number, first: number, last = first) => ({ object: '', reason, type: 'Normal', message, count, first, last });

describe('compareRecords', () => {
  it('calls records the same when every interval is within the tolerance', () => {
    const c = compareRecords(rec('kubelet', [0, 30, 60]), rec('probelet', [0, 33, 61]), 5);
    expect(c.differences).toEqual([]);
    expect(c.same).toBe(true);
  });

  it('reports an interval beyond the tolerance, naming both values', () => {
    const c = compareRecords(rec('kubelet', [0, 30, 60, 90]), rec('probelet', [0, 30, 70, 90]), 5);
    expect(c.differences).toEqual(['app starts: interval 2 is 30 s on the kubelet, 40 s on probelet (tolerance 5 s)']);
  });

  it('does not count a start within a tolerance of the end that only one side reached', () => {
    const c = compareRecords(rec('kubelet', [0, 50, 98]), rec('probelet', [0, 51]), 5);
    expect(c.same).toBe(true);
  });

  it('reports a missing restart earlier than that', () => {
    const c = compareRecords(rec('kubelet', [0, 50, 80]), rec('probelet', [0, 51]), 5);
    expect(c.differences[0]).toMatch(/^app starts: 3 on the kubelet \[0, 50, 80\], 2 on probelet/);
  });

  it('reports events only on one side and different counts, with UIDs already masked', () => {
    const k = rec('kubelet', [0], [ev('Started', 'Container started', 1, 0), ev('Unhealthy', 'Liveness probe failed:', 5, 3, 40)]);
    const p = rec('probelet', [0], [ev('Started', 'Started container app', 1, 0), ev('Unhealthy', 'Liveness probe failed:', 7, 3, 40)]);
    expect(compareRecords(k, p, 2).differences).toEqual([
      'event only on the kubelet: Normal Started: Container started (×1)',
      'event only on probelet: Normal Started: Started container app (×1)',
      'event count of Normal Unhealthy: Liveness probe failed:: 5 on the kubelet, 7 on probelet',
    ]);
  });
});

describe('records from pods and events', () => {
  const pod = (status: NonNullable<Pod['status']>): Pod => ({ metadata: { name: 'p' }, status });
  it('takes time zero from the first startedAt and every instance from lastState and state', () => {
    const snapshots = [
      { atMs: Date.parse('2026-01-01T00:00:01Z'), pod: pod({ containerStatuses: [{ name: 'app', image: 'i', imageID: '', ready: false, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }] }) },
      {
        atMs: Date.parse('2026-01-01T00:00:31Z'),
        pod: pod({
          containerStatuses: [
            {
              name: 'app',
              image: 'i',
              imageID: '',
              ready: false,
              restartCount: 1,
              state: { running: { startedAt: '2026-01-01T00:00:30Z' } },
              lastState: { terminated: { exitCode: 137, reason: 'Error', startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:00:29Z' } },
            },
          ],
        }),
      },
    ];
    const t0 = firstStartMs(snapshots) ?? 0;
    expect(t0).toBe(Date.parse('2026-01-01T00:00:00Z'));
    expect(containerRecords(snapshots, t0)).toEqual([
      { name: 'app', starts: [0, 30], exits: [{ at: 29, reason: 'Error', exitCode: 137 }], ready: [{ at: 1, ready: false }], waiting: [], restartCount: 1 },
    ]);
    expect(
      eventRecords([{ metadata: {}, involvedObject: {}, reason: 'BackOff', message: 'in pod p_ns(0d8a5c3e-1b2c-4d5e-8f90-123456789abc)', count: 2, firstTimestamp: '2026-01-01T00:00:40Z', lastTimestamp: '2026-01-01T00:00:50Z' }], t0),
    ).toEqual([{ object: '', reason: 'BackOff', type: '', message: 'in pod p_ns(<uid>)', count: 2, first: 40, last: 50 }]);
  });
});

describe('readiness from the first start', () => {
  it('a first not-ready after the start is no change (the container was not ready before it)', () => {
    const k = rec('kubelet', [0]);
    const p = rec('probelet', [0]);
    k.containers = [{ name: 'app', starts: [0], exits: [], ready: [{ at: 0.3, ready: false }, { at: 8.1, ready: true }], waiting: [], restartCount: 0 }];
    p.containers = [{ name: 'app', starts: [0], exits: [], ready: [{ at: -0.9, ready: false }, { at: 6.4, ready: true }], waiting: [], restartCount: 0 }];
    expect(compareRecords(k, p, 6).differences).toEqual([]);
  });
});

describe('pod conditions (the API-to-API comparison)', () => {
  const snap = (atMs: number, conditions: Array<{ type: string; status: string; reason?: string }>) => ({ atMs, pod: { status: { conditions } } as Pod });
  it('folds the watched conditions into their changes of status and reason, times from the first start', () => {
    const records = conditionRecords(
      [
        snap(900, [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady' }]),
        snap(1500, [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady' }]),
        snap(2600, [{ type: 'Ready', status: 'True' }]),
      ],
      1000,
    );
    expect(records).toEqual([{ type: 'Ready', changes: [{ at: -0.1, status: 'False', reason: 'ContainersNotReady' }, { at: 1.6, status: 'True' }] }]);
  });

  it('reports a reason kept on one side and a change missing on one side, only when asked', () => {
    const k = rec('kubelet', [0]);
    const p = rec('probelet', [0]);
    k.conditions = [
      { type: 'Ready', changes: [{ at: -1, status: 'False', reason: 'ContainersNotReady' }, { at: 1, status: 'True' }] },
      { type: 'PodReadyToStartContainers', changes: [{ at: -1, status: 'False' }, { at: 0.5, status: 'True' }, { at: 5, status: 'False' }] },
    ];
    p.conditions = [
      { type: 'Ready', changes: [{ at: -1, status: 'False', reason: 'ContainersNotReady' }, { at: 1, status: 'True', reason: 'ContainersNotReady' }] },
      { type: 'PodReadyToStartContainers', changes: [{ at: -1, status: 'False' }, { at: 0.5, status: 'True' }] },
    ];
    expect(compareRecords(k, p, 2).differences).toEqual([]);
    expect(compareRecords(k, p, 2, [], { conditions: true }).differences).toEqual([
      'pod condition Ready: [False/ContainersNotReady True] on the kubelet, [False/ContainersNotReady True/ContainersNotReady] on probelet',
      'pod condition PodReadyToStartContainers: [False True False] on the kubelet, [False True] on probelet',
    ]);
    p.conditions = k.conditions;
    expect(compareRecords(k, p, 2, [], { conditions: true }).differences).toEqual([]);
  });

  it('masks the namespace a BackOff message names, so records of two namespaces compare', () => {
    const k = maskNamespace(rec('kubelet', [0], [ev('BackOff', 'Back-off restarting failed container app in pod p_ns-a(<uid>)', 1, 5)]), 'ns-a');
    const p = maskNamespace(rec('probelet', [0], [ev('BackOff', 'Back-off restarting failed container app in pod p_ns-b(<uid>)', 1, 5)]), 'ns-b');
    expect(k.events[0]?.message).toBe('Back-off restarting failed container app in pod p_<namespace>(<uid>)');
    expect(compareRecords(k, p, 2).differences).toEqual([]);
  });
});

describe('known differences', () => {
  it('lists the back-off jitter and status differences only where seen; FIN/RST and the old wordings no more', async () => {
    const { knownDifference, EVENT_ALIASES } = await import('./known-differences.js');
    const starts = 'app starts: interval 6 is 33 s on the kubelet, 110 s on probelet (tolerance 29 s)';
    expect(knownDifference('exec-liveness-slow-app', starts)?.doc).toBe("The pod worker's requeue jitter after a back-off");
    expect(knownDifference('http-headers', starts)).toBeUndefined();
    expect(knownDifference('initial-delay-multiple', starts)).toBeUndefined();
    const waiting = 'app waiting reasons: [] on the kubelet, [CrashLoopBackOff] on probelet';
    expect(knownDifference('tcp-liveness-refused', waiting)?.doc).toBe('A probe-killed container in back-off: status and BackOff events');
    expect(knownDifference('never-liveness-kill', waiting)).toBeUndefined();
    expect(knownDifference('tcp-ok', 'probe connections closed with FIN by the kubelet, RST by probelet')).toBeUndefined();
    expect(knownDifference('tcp-ok', 'wording of Started: "Container started" on the kubelet, "Started container app" on probelet')).toBeUndefined();
    expect(EVENT_ALIASES).toEqual([]);
    expect(knownDifference('tcp-ok', 'request only from probelet: GET /x user-agent=kube-probe/1.34')).toBeUndefined();
    expect(knownDifference('exec-timeout', 'event only on probelet: spec.containers{app} Warning Unhealthy: Readiness probe failed: command timed out: command "sh -c sleep 5" timed out after 1s (×11)')).toBeUndefined();
  });
});

describe('known differences', () => {
  it('each names a section of docs/differences.md that gives its reason', () => {
    const doc = readFileSync(new URL('../../docs/differences.md', import.meta.url), 'utf8');
    const headings = [...doc.matchAll(/^### (.+)$/gm)].map((m) => m[1] ?? '');
    const missing = KNOWN_DIFFERENCES.filter((k) => !headings.some((h) => h.startsWith(k.doc))).map((k) => k.doc);
    expect(missing).toEqual([]);
  });
});

describe('compareRecords judging restarts by the rule', () => {
  const scenario = SCENARIOS.find((s) => s.name === 'exec-liveness-slow-app');
  const golden = readGolden('exec-liveness-slow-app');
  const rules = (failsFromStart = true) => ({ pod: scenario?.pod(0) ?? { spec: { containers: [] } }, slackSeconds: { kubelet: 3, probelet: 3 }, failsFromStart });
  const withApp = (r: OracleRecord, app: Partial<OracleRecord['containers'][number]>, more: Partial<OracleRecord> = {}): OracleRecord => ({
    ...r,
    agent: 'probelet',
    containers: r.containers.map((c) => (c.name === 'app' ? { ...c, ...app } : c)),
    ...more,
  });

  it('two agents whose 6th restart took different branches, each by its own times, are the same (the issue 27 draw)', () => {
    expect(golden).toBeDefined();
    if (golden === undefined) return;
    // probelet: restart 5 at 203 s (a later requeue draw), so kill 6 at 232 s is 80 s after the exit at 152 s: at once.
    const p = withApp(golden, {
      starts: [0, 33, 62, 92, 122, 203, 233],
      exits: [32, 62, 92, 122, 152, 232].map((at) => ({ at, reason: 'Error', exitCode: 137 })),
    });
    const c = compareRecords(golden, p, scenario?.tolerance ?? 0, [], { rules: rules() });
    expect(c.differences).toEqual([]);
    expect(c.notes.join('\n')).toContain('took different branches, each by its own times');
  });

  it('the old back-off from the killed instance on one side is a difference naming the rule', () => {
    if (golden === undefined) return;
    const p = withApp(golden, {
      starts: [0, 33, 74, 126, 198],
      exits: [32, 62, 104, 156].map((at) => ({ at, reason: 'Error', exitCode: 137 })),
    });
    const c = compareRecords(golden, p, scenario?.tolerance ?? 0, [], { rules: rules() });
    expect(c.differences.some((d) => d.startsWith('probelet breaks the restart rule: app restarted after a back-off'))).toBe(true);
  });

  it('a side still short of the next restart at the end is late, with its figure; its phase and waiting reason follow', () => {
    if (golden === undefined) return;
    // The kubelet (loaded) has not reached its 5th kill by the end; probelet has, and backs off.
    const k = withApp(golden, { starts: [0, 33, 62, 92, 122], exits: [32, 62, 92, 122].map((at) => ({ at, reason: 'Error', exitCode: 137 })), waiting: ['ContainerCreating'] }, { agent: 'kubelet', duration: 160 });
    const p = withApp(golden, { starts: [0, 33, 62, 92, 122], exits: [32, 62, 92, 122, 152].map((at) => ({ at, reason: 'Error', exitCode: 137 })) }, { duration: 160, phase: 'Running' });
    const c = compareRecords(k, p, 5, [], { rules: rules() });
    expect(c.differences.filter((d) => !d.startsWith('event'))).toEqual([]);
    expect(c.notes.join('\n')).toContain('app: the kubelet late — 1 step(s) behind at the end');
  });

  it('event counts the spam filter may have clipped are not compared', () => {
    const many = (count: number) => [{ object: 'spec.containers{app}', reason: 'Unhealthy', type: 'Warning', message: 'Liveness probe failed: ', count, first: 1, last: 50 }];
    const k = { ...rec('kubelet', [0]), events: many(30) };
    const p = { ...rec('probelet', [0]), events: many(26) };
    expect(compareRecords(k, p, 2).differences).toEqual(['event count of spec.containers{app} Warning Unhealthy: Liveness probe failed: : 30 on the kubelet, 26 on probelet']);
    const c = compareRecords(k, p, 2, [], { rules: { pod: { spec: { containers: [{ name: 'app' }] } }, slackSeconds: { kubelet: 3, probelet: 3 } } });
    expect(c.differences).toEqual([]);
    expect(c.notes[0]).toContain("reach the spam filter's burst of 25");
  });
});

describe('compareRecords by rule: a first start or readiness not reached yet', () => {
  const pod = { spec: { containers: [{ name: 'app' }] } };
  const rules = { pod, slackSeconds: { kubelet: 3, probelet: 3 } };
  it('a container not started yet on one side is late, not a difference; without rules it differs', () => {
    const k: OracleRecord = { ...rec('kubelet', []), phase: 'Pending', duration: 20 };
    const p: OracleRecord = { ...rec('probelet', [9]), duration: 20, containers: [{ name: 'app', starts: [9], exits: [], ready: [{ at: 9.5, ready: true }], waiting: [], restartCount: 0 }] };
    expect(compareRecords(k, p, 6).differences.length).toBeGreaterThan(0);
    const c = compareRecords(k, p, 6, [], { rules });
    expect(c.differences).toEqual([]);
    expect(c.notes.join('\n')).toContain('app: the kubelet late');
  });
  it('readiness reached on one side only is that side late', () => {
    const ready = (r: boolean[]): OracleRecord['containers'][number] => ({ name: 'app', starts: [0], exits: [], ready: r.map((x, i) => ({ at: i + 1, ready: x })), waiting: [], restartCount: 0 });
    const k: OracleRecord = { ...rec('kubelet', [0]), containers: [ready([])] };
    const p: OracleRecord = { ...rec('probelet', [0]), containers: [ready([true])] };
    const c = compareRecords(k, p, 2, [], { rules });
    expect(c.differences).toEqual([]);
    expect(c.notes.join('\n')).toContain('app readiness: [] on the kubelet, [true] on probelet: the kubelet late');
  });
});

describe('compareRecords by rule: a side late under load, measured', () => {
  const pod = { spec: { containers: [{ name: 'app' }] } };
  const rules = { pod, slackSeconds: { kubelet: 3, probelet: 3 } };
  const warn = (count: number, last: number) => [{ object: 'spec.containers{app}', reason: 'Unhealthy', type: 'Warning', message: 'Readiness probe failed: ', count, first: 2, last }];
  it('a repeated event counted fewer times by a side whose syncs ran late is that side late, within what its lateness lets it miss', () => {
    // 8 readiness failures every 5 s on probelet, 4 on the kubelet whose syncs ran up to 30 s late.
    const k = { ...rec('kubelet', [0]), duration: 60, events: warn(4, 20) };
    const p = { ...rec('probelet', [0]), duration: 60, events: warn(8, 37) };
    const quiet = compareRecords(k, p, 5, [], { rules, lateness: { kubelet: 0, probelet: 0 } });
    expect(quiet.differences).toEqual(['event count of spec.containers{app} Warning Unhealthy: Readiness probe failed: : 4 on the kubelet, 8 on probelet']);
    const loaded = compareRecords(k, p, 5, [], { rules, lateness: { kubelet: 30, probelet: 30 } });
    expect(loaded.differences).toEqual([]);
    expect(loaded.notes.join('\n')).toContain('the kubelet late (its syncs up to 30 s late, one every 5 s on the other side)');
  });
  it('a gap wider than the measured lateness explains is still a difference', () => {
    const k = { ...rec('kubelet', [0]), duration: 100, events: warn(2, 7) };
    const p = { ...rec('probelet', [0]), duration: 100, events: warn(18, 87) };
    const c = compareRecords(k, p, 5, [], { rules, lateness: { kubelet: 10, probelet: 10 } });
    expect(c.differences).toEqual(['event count of spec.containers{app} Warning Unhealthy: Readiness probe failed: : 2 on the kubelet, 18 on probelet']);
  });
  it('a phase not written yet while the same side\'s Ready condition already says the terminal reason is that side late', () => {
    const conditions = (reason: string) => [{ type: 'Ready', changes: [{ at: 0, status: 'False', reason: 'ContainersNotReady' }, { at: 9, status: 'False', reason }] }];
    const k: OracleRecord = { ...rec('kubelet', [0]), phase: 'Pending', conditions: conditions('PodFailed') };
    const p: OracleRecord = { ...rec('probelet', [0]), phase: 'Failed', conditions: conditions('PodFailed') };
    const c = compareRecords(k, p, 5, [], { rules });
    expect(c.differences).toEqual([]);
    expect(c.notes.join('\n')).toContain('pod phase Pending on the kubelet, Failed on probelet: the kubelet late — its Ready condition says PodFailed');
    // Its conditions saying another outcome (or nothing terminal) is a difference.
    const other: OracleRecord = { ...k, conditions: conditions('PodCompleted') };
    expect(compareRecords(other, p, 5, [], { rules }).differences).toEqual(['pod phase Pending on the kubelet, Failed on probelet']);
    expect(compareRecords({ ...k, conditions: [] }, p, 5, [], { rules }).differences).toEqual(['pod phase Pending on the kubelet, Failed on probelet']);
  });
});

