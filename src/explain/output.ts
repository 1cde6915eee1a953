/**
 * explain's three outputs: text for people, JSON (stable cause ids, every timestamp as the API
 * wrote it), and the fixes as strategic merge patches with the `kubectl patch` command that
 * applies each to the workload that owns the pod.
 */
import { CAUSES } from './causes.js';
import type { ContainerPatch, Diagnosis } from './diagnose.js';
import type { Owner, PodExplanation } from './explain.js';
import type { ContainerTimeline } from './timeline.js';
import { formatVerification } from './verify.js';
import { trimTrailing } from '../util/trim.js';

/** A group of pods of one workload (explain deploy/NAME), or one pod. */
export interface ExplainReport {
  /** `deploy/api`, `pod/api-7d9c-x2`: what was asked for. */
  target: string;
  pods: PodExplanation[];
}

/** Whether any container of the report has a cause (exit status 1). */
export function anyCause(report: ExplainReport): boolean {
  return report.pods.some((p) => p.diagnoses.some((d) => d.cause !== 'none'));
}

export function toJson(report: ExplainReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

const time = (t: string | undefined): string => (t === undefined ? '?' : t.replace(/^\d{4}-\d\d-\d\dT/, '').replace(/Z$/, ''));

function span(first: string | undefined, last: string | undefined, count: number): string {
  return count === 1 || first === last ? time(last ?? first) : `${time(first)} … ${time(last)}`;
}

function timelineLines(t: ContainerTimeline): string[] {
  const lines: string[] = [];
  if (t.unseenInstances > 0) lines.push(`${t.unseenInstances === 1 ? 'run 1' : `runs 1–${t.unseenInstances}`}: known only by restartCount`);
  for (const i of t.instances) {
    const what = i.state === 'running' ? `running since ${time(i.startedAt)}` : `${time(i.startedAt)} → ${time(i.finishedAt)} exit ${i.exitCode ?? '?'} ${i.reason ?? ''}`.trimEnd();
    lines.push(`run ${i.attempt} (${i.from}): ${what}`);
  }
  if (t.waiting) lines.push(`now waiting: ${t.waiting.reason}${t.waiting.message ? ` — ${t.waiting.message}` : ''}`);
  const groups = [
    ...(t.starts ? [{ ...t.starts, kind: 'Started' }] : []),
    ...t.kills.map((k) => ({ ...k, kind: 'Killing' })),
    ...t.failures.map((f) => ({ ...f, kind: 'Unhealthy' })),
    ...(t.backOffs ? [{ ...t.backOffs, kind: 'BackOff' }] : []),
    ...t.pullFailures.map((g) => ({ ...g, kind: g.reason })),
  ].sort((a, b) => (a.first ?? '').localeCompare(b.first ?? ''));
  for (const g of groups) lines.push(`${span(g.first, g.last, g.count)}  ${g.kind} ×${g.count}  ${g.message}`);
  return lines;
}

function diagnosisLines(d: Diagnosis, t: ContainerTimeline | undefined, podName: string): string[] {
  const lines = [`container ${d.container}: ${d.cause === 'none' ? 'nothing wrong' : `${d.cause} — ${CAUSES[d.cause]}`}`];
  if (d.cause !== 'none') lines.push(`  ${d.summary}`);
  else if (d.summary !== 'nothing wrong') lines.push(`  ${d.summary}`);
  if (d.fix) lines.push(`  fix: ${d.fix.text.replace('<pod>', podName)}`);
  for (const a of d.also) lines.push(`  also ${a.cause}: ${a.summary}`);
  if (d.verify) lines.push(`  verify: ${'skipped' in d.verify ? d.verify.skipped : formatVerification(d.verify)}`);
  if (d.evidence.length > 0) {
    lines.push('  evidence:');
    for (const e of d.evidence) lines.push(`    [${e.confidence}, ${e.from}] ${e.text}`);
  }
  if (t && d.cause !== 'none') {
    lines.push('  timeline:');
    for (const l of timelineLines(t)) lines.push(`    ${l}`);
    for (const step of d.restarts) lines.push(`    rule: ${step.allowed ? '' : 'NOT THE RULE: '}${step.why}`);
  }
  return lines;
}

export function toText(report: ExplainReport): string {
  const out: string[] = [];
  for (const p of report.pods) {
    const owner = p.owner ? `, owned by ${p.owner.kind} ${p.owner.name}` : '';
    const phase = p.timeline.phase ? `, ${p.timeline.phase}` : '';
    out.push(`pod/${p.name} (namespace ${p.namespace}${phase}${owner}), read at ${p.observedAt}`);
    for (const d of p.diagnoses) {
      const t = p.timeline.containers.find((c) => c.name === d.container);
      for (const l of diagnosisLines(d, t, p.name)) out.push(`  ${l}`);
    }
    out.push('');
  }
  if (report.pods.length > 1) out.push(groupSummary(report));
  return `${trimTrailing(out.join('\n'), '\n')}\n`;
}

/** `deploy/api: 3 pods — app: slow-start-liveness on 3` */
function groupSummary(report: ExplainReport): string {
  const byContainer = new Map<string, Map<string, number>>();
  for (const p of report.pods) {
    for (const d of p.diagnoses) {
      const causes = byContainer.get(d.container) ?? new Map<string, number>();
      causes.set(d.cause, (causes.get(d.cause) ?? 0) + 1);
      byContainer.set(d.container, causes);
    }
  }
  const parts = [...byContainer].map(([c, causes]) => `${c}: ${[...causes].map(([id, n]) => `${id} on ${n}`).join(', ')}`);
  return `${report.target}: ${report.pods.length} pods — ${parts.join('; ')}\n`;
}

const RESOURCE: Record<string, string> = {
  Deployment: 'deployment',
  StatefulSet: 'statefulset',
  DaemonSet: 'daemonset',
  ReplicaSet: 'replicaset',
  ReplicationController: 'replicationcontroller',
};

/** A shell word in single quotes. */
function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Strategic merge patches, one per workload (pods of one workload share it), with the kubectl command. */
export function toPatch(report: ExplainReport): string {
  const out: string[] = [];
  const done = new Set<string>();
  for (const p of report.pods) {
    const patches = p.diagnoses.filter((d) => d.fix?.patch !== undefined);
    for (const d of p.diagnoses.filter((x) => x.cause !== 'none' && x.fix?.patch === undefined)) {
      out.push(`# pod/${p.name} container ${d.container}: ${d.cause}: no field to change (${d.fix?.text ?? CAUSES[d.cause]})`);
    }
    if (patches.length === 0) continue;
    const key = p.owner ? `${p.owner.kind}/${p.owner.name}` : `Pod/${p.name}`;
    if (done.has(key)) continue;
    done.add(key);
    const init = new Set(p.timeline.containers.filter((c) => c.role !== 'container').map((c) => c.name));
    const containers: ContainerPatch[] = [];
    const initContainers: ContainerPatch[] = [];
    for (const d of patches) if (d.fix?.patch) (init.has(d.container) ? initContainers : containers).push(d.fix.patch);
    const podSpec = { ...(containers.length > 0 ? { containers } : {}), ...(initContainers.length > 0 ? { initContainers } : {}) };
    out.push(`# pod/${p.name}: ${patches.map((d) => `${d.container}: ${d.cause}`).join('; ')}`);
    out.push(patchCommand(p.owner, p, podSpec));
  }
  return `${out.join('\n')}\n`;
}

function patchCommand(owner: Owner | undefined, p: PodExplanation, podSpec: object): string {
  const resource = owner ? RESOURCE[owner.kind] : undefined;
  if (owner && resource) {
    const body = JSON.stringify({ spec: { template: { spec: podSpec } } });
    const guess = owner.confidence === 'likely' ? `# (${owner.kind} ${owner.name} derived from the pod's ReplicaSet name)\n` : '';
    return `${guess}kubectl patch ${resource} ${owner.name} -n ${p.namespace} --type strategic -p ${quote(body)}`;
  }
  const body = JSON.stringify({ spec: podSpec });
  const why = owner ? `its owner ${owner.kind} ${owner.name} has no pod template to patch in place` : 'it is a bare Pod, whose probes cannot be changed in place';
  return `# ${why}: merge this into its manifest and create it again:\n${body}`;
}
