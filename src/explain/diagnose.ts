/**
 * One cause per container, from its timeline and its (defaulted) spec, with the evidence and a
 * fix naming fields and numbers. Each cause is a file of `causes/` (named by its id); this file
 * only asks them in order and adds what every diagnosis carries (event gaps, the restart rule's
 * steps). The budgets ("the probes allow N s") are check's (src/check/budgets.ts), the grace
 * periods the kubelet's (src/prober/kill-policy.ts): nothing here recomputes a kubelet rule.
 *
 * The order of the questions is the order in which one cause hides another: an image that
 * never came means nothing ran; an OOM kill or a crash is the app's own exit whatever the
 * probes said; a deletion that waits out its grace is about SIGTERM; then the probe kills, read
 * from the kubelet's `Killing` words and the failures before them; then readiness; then
 * restarts whose evidence has gone.
 */
import type { Container, Pod } from '../api/types.js';
import type { Statement } from './causes.js';
import { crash } from './causes/app-crash.js';
import { noneFor } from './causes/common.js';
import { imagePull } from './causes/image-pull-failure.js';
import { unexplained } from './causes/not-enough-information.js';
import { oomKilled } from './causes/oom-killed.js';
import { probeKill } from './causes/probe-kills.js';
import { readiness } from './causes/readiness.js';
import { sigtermOnDeletion, sigtermOnProbeKill } from './causes/sigterm-ignored.js';
import type { DiagnoseOptions, Diagnosis } from './diagnosis.js';
import { eventGaps } from './event-gaps.js';
import { restartSteps } from './restarts.js';
import type { ContainerTimeline, PodTimeline } from './timeline.js';

export type { ContainerPatch, DiagnoseOptions, Diagnosis, Fix } from './diagnosis.js';
export { EVENT_TTL_SECONDS } from './causes/common.js';
export { quantityBytes } from './causes/oom-killed.js';

/** Diagnoses every container of the pod. `pod` must be defaulted (setPodDefaults). */
export function diagnosePod(pod: Pod, timeline: PodTimeline, options: DiagnoseOptions): Diagnosis[] {
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  return timeline.containers.map((t) => {
    const spec = containers.find((c) => c.name === t.name);
    return spec === undefined ? noneFor(t.name) : diagnoseContainer(pod, spec, t, timeline, options);
  });
}

export function diagnoseContainer(pod: Pod, c: Container, t: ContainerTimeline, podTimeline: PodTimeline, options: DiagnoseOptions): Diagnosis {
  const d =
    imagePull(t) ??
    oomKilled(c, t) ??
    sigtermOnDeletion(c, t, podTimeline, options) ??
    probeKill(c, t) ??
    crash(c, t, options) ??
    readiness(c, t, podTimeline) ??
    unexplained(pod, c, t) ??
    healthy(t, []);
  const ignored = sigtermOnProbeKill(pod, c, t);
  if (ignored && d.cause !== 'sigterm-ignored') d.also.push(ignored);
  d.evidence.push(...eventGaps(t, options));
  const rule = restartSteps(pod, c, t, options.nowMs);
  d.restarts = rule.steps;
  d.evidence.push(...rule.statements);
  const odd = rule.steps.filter((step) => !step.allowed);
  if (odd.length > 0) d.evidence.push({ text: `the kubelet's restart rule does not explain ${odd.length === 1 ? 'this step' : 'these steps'} (a node with a non-default back-off, or a kubelet under heavy load): ${odd.map((step) => step.why).join('; ')}`, confidence: 'likely', from: 'rule' });
  return d;
}

function healthy(t: ContainerTimeline, evidence: Statement[]): Diagnosis {
  const d = noneFor(t.name);
  d.summary = t.restartCount === 0 ? `running, ${t.ready ? 'Ready' : 'not Ready'}, never restarted` : 'nothing wrong';
  d.evidence = evidence;
  return d;
}
