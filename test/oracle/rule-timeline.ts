/**
 * From an oracle record (what one agent showed through its status and events) to the restart
 * rule's input (src/kubelet/restart-rule.ts): each container's instances with their exits
 * paired by time, and how each ended — a probe kill when the container's `Killing` events
 * (`failed liveness probe` / `failed startup probe`) account for every exit, else not known
 * (the checker then tries both readings). A watch can miss a short-lived status, so an
 * instance may have no exit though a later one started: the checker does not judge its restart.
 */
import { probeTiming } from '../../src/api/defaults.js';
import type { Container, Pod } from '../../src/api/types.js';
import { type ContainerInstance, type ContainerTimeline, type KillProbe, type RestartPolicy, checkRestartRule, type RestartRuleCheck } from '../../src/kubelet/restart-rule.js';
import { killWaitSeconds } from '../../src/prober/kill-policy.js';
import type { ContainerRecord, OracleRecord } from './record.js';

export interface TimelineOptions {
  /** How late the agent may be beyond the rule (seconds): the runtime's create and start, the relist, load. */
  slackSeconds: number;
  /** The guarding probe fails from each instance's start (the scenario says so): the latest kill is checked too. */
  failsFromStart?: boolean;
}

/** `Container app failed liveness probe, will be restarted`; a sidecar's `Init container sidecar failed liveness probe`. */
const KILL_MESSAGE = /^(?:Init container|Container) [\w-]+ failed (liveness|startup) probe/;

/** The probe named by the container's `Killing` events, and how many kills they count. */
function killsOf(record: OracleRecord, name: string): { probe: KillProbe; count: number } | undefined {
  let found: { probe: KillProbe; count: number } | undefined;
  for (const e of record.events) {
    if (e.reason !== 'Killing' || !e.object.endsWith(`{${name}}`)) continue;
    const m = KILL_MESSAGE.exec(e.message);
    if (m?.[1] === undefined) continue;
    const probe = m[1] as KillProbe;
    if (found !== undefined && found.probe !== probe) return undefined;
    found = { probe, count: (found?.count ?? 0) + e.count };
  }
  return found;
}

/** Each start with the first exit not yet paired at or after it and no later than the next start. */
function instancesOf(c: ContainerRecord): { startedAtMs: number; exit?: ContainerRecord['exits'][number] }[] {
  let e = 0;
  return c.starts.map((start, i) => {
    const next = c.starts[i + 1] ?? Infinity;
    while (e < c.exits.length && (c.exits[e]?.at ?? 0) < start) e++;
    const exit = c.exits[e];
    if (exit === undefined || exit.at > next) return { startedAtMs: start * 1000 };
    e++;
    return { startedAtMs: start * 1000, exit };
  });
}

/** The rule's input for container `c` of `pod` as `record` shows it, or undefined for an init container that runs to completion. */
export function containerTimeline(record: OracleRecord, pod: Pod, c: ContainerRecord, options: TimelineOptions): ContainerTimeline | undefined {
  const spec: Container | undefined = pod.spec?.containers.find((x) => x.name === c.name) ?? pod.spec?.initContainers?.find((x) => x.name === c.name && x.restartPolicy === 'Always');
  if (spec === undefined) return undefined;
  const policy: RestartPolicy = spec.restartPolicy === 'Always' ? 'Always' : ((pod.spec?.restartPolicy as RestartPolicy | undefined) ?? 'Always');
  const kills = killsOf(record, c.name);
  const paired = instancesOf(c);
  const exited = paired.filter((p) => p.exit !== undefined).length;
  const probe = kills === undefined ? undefined : kills.probe === 'liveness' ? spec.livenessProbe : spec.startupProbe;
  // Every exit a kill only when the Killing events count them all (the spam filter may drop some).
  const allKills = kills !== undefined && probe !== undefined && kills.count >= exited;
  const instances: ContainerInstance[] = paired.map((p) => {
    if (p.exit === undefined) return { startedAtMs: p.startedAtMs };
    const base = { startedAtMs: p.startedAtMs, finishedAtMs: p.exit.at * 1000, exitCode: p.exit.exitCode, reason: p.exit.reason };
    if (!allKills || kills === undefined || probe === undefined) return { ...base, end: { by: kills === undefined ? 'exit' : 'unknown' } };
    const cause = {
      probe: kills.probe,
      timing: probeTiming(probe),
      gracePeriodSeconds: killWaitSeconds(pod, spec, kills.probe),
      ...(options.failsFromStart === true ? { failingFromMs: p.startedAtMs } : {}),
    };
    return { ...base, end: { by: 'kill', cause } };
  });
  return { container: c.name, restartPolicy: policy, instances, endMs: record.duration * 1000, resolutionMs: 1000, slackMs: options.slackSeconds * 1000 };
}

/** The rule's verdicts on every container of `record` that restarts by the rule. */
export function checkRecord(record: OracleRecord, pod: Pod, options: TimelineOptions): RestartRuleCheck[] {
  return record.containers.flatMap((c) => {
    const t = containerTimeline(record, pod, c, options);
    return t === undefined ? [] : [checkRestartRule(t)];
  });
}
