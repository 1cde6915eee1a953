/**
 * Compares the kubelet's record of a scenario with probelet's: the same events (reason, type,
 * message) in the same order of first occurrence, with counts; the same container instances
 * (starts, exits with reason and code, readiness changes, waiting reasons, restart count);
 * the same pod conditions (each one's changes of status and reason, when both records keep
 * them); the same probe requests (method, path, headers, how the connection closed). Times are
 * compared as intervals between consecutive instants, within the scenario's tolerance; what
 * happens within one tolerance of the end may be on one side only (the records are taken at
 * the same age, not the same instant) and is not a difference.
 */
import { judgeByRule, type RuleJudgement, type RuleOptions } from './judge-rules.js';
import type { ConditionRecord, ContainerRecord, EventRecord, OracleRecord, ProbeRequestRecord } from './record.js';

export interface Comparison {
  same: boolean;
  differences: string[];
  /** What the rule explains instead of calling it a difference (a side late, branches apart by their own times, counts clipped). */
  notes: string[];
  table: string;
}

/** Events that follow a container's restarts: their counts and times are the restarts'. */
const RESTART_EVENTS = new Set(['Pulled', 'Created', 'Started', 'Killing', 'BackOff', 'Unhealthy']);
/** Events one side may lack when its restarts are behind or took another branch. */
const BRANCH_EVENTS = new Set(['Killing', 'BackOff']);
const containerOf = (e: EventRecord): string | undefined => /\{([\w-]+)\}$/.exec(e.object)?.[1];

/** Whether the rule judged this event's container apart (late or another branch): its restart-linked counts are the rule's business. */
function ruledApart(rules: RuleJudgement | undefined, e: EventRecord): boolean {
  const c = containerOf(e);
  const verdict = c === undefined ? undefined : rules?.containers.get(c);
  return verdict === 'late' || verdict === 'explained';
}

function intervals(times: number[]): number[] {
  return times.slice(1).map((t, i) => Math.round((t - (times[i] ?? 0)) * 10) / 10);
}

/** Drops the instants within `tol` of `end` on the side that has more of them. */
function trimTail(a: number[], b: number[], end: number, tol: number): [number[], number[]] {
  const keep = (xs: number[], n: number) => xs.filter((t, i) => i < n || t < end - tol);
  const n = Math.min(a.length, b.length);
  return [keep(a, n), keep(b, n)];
}

function compareTimes(what: string, a: number[], b: number[], end: number, tol: number, out: string[]): void {
  const [ka, kb] = trimTail(a, b, end, tol);
  if (ka.length !== kb.length) {
    out.push(`${what}: ${ka.length} on the kubelet [${ka.join(', ')}], ${kb.length} on probelet [${kb.join(', ')}]`);
    return;
  }
  const ia = intervals(ka);
  const ib = intervals(kb);
  const off = ia.findIndex((x, i) => Math.abs(x - (ib[i] ?? 0)) > tol);
  if (off >= 0) out.push(`${what}: interval ${off + 1} is ${ia[off]} s on the kubelet, ${ib[off]} s on probelet (tolerance ${tol} s)`);
}

const eventKey = (e: EventRecord) => `${e.object === '' ? '' : `${e.object} `}${e.type} ${e.reason}: ${e.message}`;

/** Seconds each agent's syncs ran late during the run, measured (its metrics): see {@link countLate}. */
export interface AgentLateness {
  kubelet: number;
  probelet: number;
}

/**
 * A repeated event counted fewer times on one side, by no more than that side's measured
 * lateness lets it miss at the rate the other side repeated it: the slower side had not got
 * there yet ("late", with its figure), not a different behaviour. Returns the note, or undefined
 * when the lateness does not cover the gap (or none was measured).
 */
function countLate(k: EventRecord, p: EventRecord, slack: number, lateness: AgentLateness | undefined): string | undefined {
  if (lateness === undefined) return undefined;
  const [fewer, more, side] = k.count < p.count ? [k, p, 'kubelet' as const] : [p, k, 'probelet' as const];
  if (more.count < 2 || more.last <= more.first) return undefined;
  const every = (more.last - more.first) / (more.count - 1);
  const late = lateness[side];
  const missable = slack + Math.ceil(late / every);
  if (more.count - fewer.count > missable) return undefined;
  const who = side === 'kubelet' ? 'the kubelet' : 'probelet';
  return `event count of ${eventKey(k)}: ${k.count} on the kubelet, ${p.count} on probelet: ${who} late (its syncs up to ${late} s late, one every ${Math.round(every * 10) / 10} s on the other side)`;
}

function compareEvents(a: EventRecord[], b: EventRecord[], end: number, tol: number, out: string[], rules?: RuleJudgement, lateness?: AgentLateness): void {
  const late = (e: EventRecord) => e.first >= end - tol;
  // A Killing or BackOff one side has not reached (late) or not taken (another branch) is the rule's.
  const branchOnly = (e: EventRecord) => BRANCH_EVENTS.has(e.reason) && ruledApart(rules, e);
  const ka = a.filter((e) => (!late(e) && !branchOnly(e)) || b.some((x) => eventKey(x) === eventKey(e)));
  const kb = b.filter((e) => (!late(e) && !branchOnly(e)) || a.some((x) => eventKey(x) === eventKey(e)));
  const onlyA = ka.filter((e) => !kb.some((x) => eventKey(x) === eventKey(e)));
  const onlyB = kb.filter((e) => !ka.some((x) => eventKey(x) === eventKey(e)));
  for (const e of onlyA) out.push(`event only on the kubelet: ${eventKey(e)} (×${e.count})`);
  for (const e of onlyB) out.push(`event only on probelet: ${eventKey(e)} (×${e.count})`);
  // Times and order from the first start on: before it, the first instance's Pulled and Created
  // say how long the runtime took to create it, which is load, not the agent.
  const common = ka.filter((e) => e.first >= 0 && kb.some((x) => eventKey(x) === eventKey(e) && x.first >= 0));
  const orderA = common.map(eventKey);
  const orderB = kb.filter((e) => orderA.includes(eventKey(e))).map(eventKey);
  // Order matters only between events more than a tolerance apart.
  for (let i = 0; i < orderA.length; i++) {
    const j = orderB.indexOf(orderA[i] ?? '');
    if (j !== i) {
      const ea = common[i];
      const eb = kb.find((x) => eventKey(x) === orderB[i]);
      if (ea !== undefined && eb !== undefined && Math.abs(ea.first - eb.first) > tol) {
        out.push(`event order: the kubelet's #${i + 1} is ${orderA[i]}, probelet's is ${orderB[i]}`);
        break;
      }
    }
  }
  for (const e of ka) {
    const x = kb.find((y) => eventKey(y) === eventKey(e));
    if (x === undefined) continue;
    // A repeat within a tolerance of the end may be counted on one side only; one per
    // tolerance-wide window of drift beyond that is what the times above already judge.
    // One more or less is a phase shift within the tolerance (a probe period); more than one is not.
    const slack = e.last >= end - tol || x.last >= end - tol ? 2 : 1;
    // Counts the spam filter clipped, or that follow restarts the rule judged apart, are not compared.
    const ruled = RESTART_EVENTS.has(e.reason) && ruledApart(rules, e);
    const clipped = rules?.clippedTypes.has(e.type) === true;
    if (!ruled && !clipped && Math.abs(e.count - x.count) > slack) {
      const late = rules === undefined ? undefined : countLate(e, x, slack, lateness);
      if (late !== undefined) rules?.notes.push(late);
      else out.push(`event count of ${eventKey(e)}: ${e.count} on the kubelet, ${x.count} on probelet`);
    }
    if (!ruled && e.first >= 0 && x.first >= 0 && Math.abs(e.first - x.first) > tol) out.push(`first ${e.reason} at ${e.first} s on the kubelet, ${x.first} s on probelet (tolerance ${tol} s)`);
  }
}

function compareContainer(a: ContainerRecord, b: ContainerRecord, end: number, tol: number, out: string[], rules?: RuleJudgement): void {
  const n = a.name;
  const verdict = rules?.containers.get(n);
  // Restarts the rule judged on each side's own times: their times are its business; when the
  // branches differ or a side is late, so are the states that follow (readiness, waiting).
  const apart = verdict === 'late' || verdict === 'explained';
  const ruled = verdict !== undefined && (apart || a.starts.length > 1 || b.starts.length > 1 || a.exits.length > 0 || b.exits.length > 0);
  if (!ruled) compareTimes(`${n} starts`, a.starts, b.starts, end, tol, out);
  const common = Math.min(a.exits.length, b.exits.length);
  const exitsA = a.exits.filter((e) => (apart ? a.exits.indexOf(e) < common : e.at < end - tol || b.exits.length > a.exits.indexOf(e)));
  const exitsB = b.exits.filter((e) => (apart ? b.exits.indexOf(e) < common : e.at < end - tol || a.exits.length > b.exits.indexOf(e)));
  const fa = exitsA.map((e) => `${e.reason}/${e.exitCode}`).join(' ');
  const fb = exitsB.map((e) => `${e.reason}/${e.exitCode}`).join(' ');
  if (fa !== fb) out.push(`${n} exits: [${fa}] on the kubelet, [${fb}] on probelet`);
  if (apart) return;
  // Changes from the first start on: before it, the watch only saw the pod being set up. A
  // container is not ready before it starts, so a first `false` after the start (the first
  // status written after it, on one agent; before it, on the other) is no change.
  const fromStart = (rs: ContainerRecord['ready']): ContainerRecord['ready'] => {
    const after = rs.filter((r) => r.at >= 0);
    return after[0]?.ready === false ? after.slice(1) : after;
  };
  const readyA = fromStart(a.ready);
  const readyB = fromStart(b.ready);
  const ra = readyA.map((r) => r.ready);
  const rb = readyB.map((r) => r.ready);
  const [ta, tb] = trimTail(readyA.map((r) => r.at), readyB.map((r) => r.at), end, tol);
  const [sa, sb] = [ra.slice(0, ta.length).join(), rb.slice(0, tb.length).join()];
  if (sa !== sb) {
    // Judged by rule, one side's readiness a prefix of the other's is that side not there yet.
    const prefix = sa === '' || sb === '' || sa.startsWith(`${sb},`) || sb.startsWith(`${sa},`);
    if (rules !== undefined && prefix) rules.notes.push(`${n} readiness: [${ra.join(' ')}] on the kubelet, [${rb.join(' ')}] on probelet: ${sa.length < sb.length ? 'the kubelet' : 'probelet'} late`);
    else out.push(`${n} readiness: [${ra.join(' ')}] on the kubelet, [${rb.join(' ')}] on probelet`);
  } else if (!ruled) {
    compareTimes(`${n} readiness changes`, ta, tb, end, tol, out);
  }
  const wa = a.waiting.filter((w) => w !== 'ContainerCreating' && w !== 'PodInitializing');
  const wb = b.waiting.filter((w) => w !== 'ContainerCreating' && w !== 'PodInitializing');
  if (wa.join() !== wb.join()) out.push(`${n} waiting reasons: [${wa.join(' ')}] on the kubelet, [${wb.join(' ')}] on probelet`);
}

/**
 * Each condition's changes from the first start on (the value it had then, and each change
 * after), compared as readiness is: the same sequence of status/reason, the tail within one
 * tolerance of the end trimmed, then the intervals between the changes.
 */
function compareConditions(a: ConditionRecord[], b: ConditionRecord[], end: number, tol: number, out: string[]): void {
  const fromStart = (c: ConditionRecord): ConditionRecord['changes'] => {
    const before = c.changes.filter((x) => x.at < 0).at(-1);
    return [...(before ? [{ ...before, at: 0 }] : []), ...c.changes.filter((x) => x.at >= 0)];
  };
  const word = (x: ConditionRecord['changes'][number]): string => `${x.status}${x.reason === undefined ? '' : `/${x.reason}`}`;
  for (const ca of a) {
    const cb = b.find((x) => x.type === ca.type);
    if (cb === undefined) {
      out.push(`pod condition ${ca.type} only on the kubelet`);
      continue;
    }
    const [xa, xb] = [fromStart(ca), fromStart(cb)];
    const [ta, tb] = trimTail(xa.map((x) => x.at), xb.map((x) => x.at), end, tol);
    const [wa, wb] = [xa.slice(0, ta.length).map(word), xb.slice(0, tb.length).map(word)];
    if (wa.join(' ') !== wb.join(' ')) out.push(`pod condition ${ca.type}: [${xa.map(word).join(' ')}] on the kubelet, [${xb.map(word).join(' ')}] on probelet`);
    else compareTimes(`pod condition ${ca.type} changes`, ta, tb, end, tol, out);
  }
  for (const cb of b) if (!a.some((x) => x.type === cb.type)) out.push(`pod condition ${cb.type} only on probelet`);
}

const requestKey = (r: ProbeRequestRecord) =>
  `${r.method} ${r.path} ${Object.entries(r.headers)
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}`.trim();

/** The distinct requests (method, path, headers) and, apart, how the prober closed them. */
function compareRequests(a: ProbeRequestRecord[], b: ProbeRequestRecord[], out: string[]): void {
  const sa = new Set(a.map(requestKey));
  const sb = new Set(b.map(requestKey));
  for (const k of sa) if (!sb.has(k)) out.push(`request only from the kubelet: ${k}`);
  for (const k of sb) if (!sa.has(k)) out.push(`request only from probelet: ${k}`);
  const closes = (rs: ProbeRequestRecord[]) => [...new Set(rs.filter((r) => r.close !== 'open').map((r) => r.close))].sort().join('+');
  const ca = closes(a);
  const cb = closes(b);
  if (ca !== '' && cb !== '' && ca !== cb) out.push(`probe connections closed with ${ca} by the kubelet, ${cb} by probelet`);
}

/**
 * A wording probelet's event has where the kubelet's has another (a listed difference): the
 * event is compared under the kubelet's wording (so its count and times still are), and the
 * wording itself is reported once as `wording of <reason>: …`.
 */
export interface EventAlias {
  reason: string;
  probelet: RegExp;
  /** The kubelet's message; `$1`… from `probelet`'s groups. */
  kubelet: string;
}

function applyAliases(events: EventRecord[], aliases: EventAlias[], out: string[]): EventRecord[] {
  const reported = new Set<EventAlias>();
  return events.map((e) => {
    const alias = aliases.find((a) => a.reason === e.reason && a.probelet.test(e.message));
    if (alias === undefined) return e;
    const message = e.message.replace(alias.probelet, alias.kubelet);
    if (!reported.has(alias)) {
      reported.add(alias);
      out.push(`wording of ${e.reason}: "${message}" on the kubelet, "${e.message}" on probelet`);
    }
    return { ...e, message };
  });
}

/**
 * `conditions`: compare the pod conditions too. The API-to-API comparison (test/node/
 * side-by-side.test.ts) does; the oracle against `probelet run -o json` does not yet (the
 * conditions of run's pods have not been checked against the kubelet's there).
 */
export function compareRecords(
  kubelet: OracleRecord,
  probelet: OracleRecord,
  tolerance: number,
  aliases: EventAlias[] = [],
  options: { conditions?: boolean; rules?: RuleOptions; lateness?: AgentLateness } = {},
): Comparison {
  const out: string[] = [];
  const rules = options.rules === undefined ? undefined : judgeByRule(kubelet, probelet, options.rules);
  out.push(...(rules?.differences ?? []));
  const end = Math.min(kubelet.duration, probelet.duration);
  compareEvents(kubelet.events, applyAliases(probelet.events, aliases, out), end, tolerance, out, rules, options.lateness);
  for (const c of kubelet.containers) {
    const other = probelet.containers.find((x) => x.name === c.name);
    if (other === undefined) out.push(`container ${c.name} has no status on probelet`);
    else compareContainer(c, other, end, tolerance, out, rules);
  }
  if (options.conditions === true && kubelet.conditions !== undefined && probelet.conditions !== undefined) compareConditions(kubelet.conditions, probelet.conditions, end, tolerance, out);
  compareRequests(kubelet.requests, probelet.requests, out);
  const notes = [...(rules?.notes ?? [])];
  if (kubelet.phase !== probelet.phase) {
    const apart = [...(rules?.containers.values() ?? [])].some((v) => v === 'late' || v === 'explained');
    const terminating = rules === undefined ? undefined : phaseNotWrittenYet(kubelet, probelet);
    if (apart) notes.push(`pod phase ${kubelet.phase} on the kubelet, ${probelet.phase} on probelet: follows the restarts above`);
    else if (terminating !== undefined) notes.push(`pod phase ${kubelet.phase} on the kubelet, ${probelet.phase} on probelet: ${terminating}`);
    else out.push(`pod phase ${kubelet.phase} on the kubelet, ${probelet.phase} on probelet`);
  }
  return { same: out.length === 0, differences: out, notes, table: sideBySide(kubelet, probelet) };
}

/** The Ready condition's reason once an agent has computed a terminal phase (status.GeneratePodReadyCondition). */
const TERMINAL_REASON: Record<string, string> = { Succeeded: 'PodCompleted', Failed: 'PodFailed' };

/**
 * One side's phase not terminal yet while its own Ready condition already carries the other
 * side's terminal phase (`PodCompleted`, `PodFailed`): the kubelet computes the terminal phase
 * (the conditions come from it) but writes the old phase until its pod worker has finished
 * terminating the pod (generateAPIPodStatus, kubelet_pods.go: "Pod has terminal phase but is
 * not yet terminated, preserving the old phase") — that side is late, not on another course.
 */
function phaseNotWrittenYet(kubelet: OracleRecord, probelet: OracleRecord): string | undefined {
  for (const [slow, fast, who] of [[kubelet, probelet, 'the kubelet'], [probelet, kubelet, 'probelet']] as const) {
    const reason = TERMINAL_REASON[fast.phase];
    if (reason === undefined || TERMINAL_REASON[slow.phase] !== undefined) continue;
    const ready = slow.conditions?.find((c) => c.type === 'Ready')?.changes.at(-1);
    if (ready?.reason === reason) return `${who} late — its Ready condition says ${reason} (at ${ready.at} s) but the pod worker had not finished terminating the pod, so the old phase stays written`;
  }
  return undefined;
}

function lines(r: OracleRecord): string[] {
  const rows: string[] = [`${r.agent} ${r.version}, phase ${r.phase}`];
  for (const c of r.containers) {
    rows.push(`${c.name}: restarts ${c.restartCount}, starts [${c.starts.join(' ')}]`);
    if (c.exits.length > 0) rows.push(`  exits ${c.exits.map((e) => `${e.at}:${e.reason}/${e.exitCode}`).join(' ')}`);
    if (c.ready.length > 0) rows.push(`  ready ${c.ready.map((x) => `${x.at}:${x.ready ? 'T' : 'F'}`).join(' ')}`);
    if (c.waiting.length > 0) rows.push(`  waiting ${c.waiting.join(' ')}`);
  }
  for (const c of r.conditions ?? []) rows.push(`${c.type}: ${c.changes.map((x) => `${x.at}:${x.status}${x.reason === undefined ? '' : `/${x.reason}`}`).join(' ')}`.slice(0, 76));
  for (const e of r.events) rows.push(`${String(e.first).padStart(5)}s ${e.reason} ×${e.count} ${e.message}`.slice(0, 76));
  const kinds = new Map<string, number>();
  for (const q of r.requests) kinds.set(`${q.method} ${q.path} ${q.close}`, (kinds.get(`${q.method} ${q.path} ${q.close}`) ?? 0) + 1);
  for (const [k, n] of kinds) rows.push(`requests ${k} ×${n}`);
  return rows;
}

/** The two records next to each other, the kubelet's on the left. */
export function sideBySide(kubelet: OracleRecord, probelet: OracleRecord): string {
  const left = lines(kubelet);
  const right = lines(probelet);
  const width = 78;
  const rows: string[] = [];
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    rows.push(`  ${(left[i] ?? '').padEnd(width)} │ ${right[i] ?? ''}`);
  }
  return rows.join('\n');
}
