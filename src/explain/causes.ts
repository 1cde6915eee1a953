/**
 * The closed set of causes `probelet explain` names, with stable ids (JSON output, tests and
 * docs/explain.md use them; an id is never renamed, only added). One cause per container.
 */
export const CAUSES = {
  'slow-start-liveness': 'slow start killed by the liveness probe (no startup probe)',
  'startup-probe-too-short': 'startup probe too short for the start-up',
  'probe-wrong-target': 'probe aimed at the wrong port or path (it never succeeded)',
  'liveness-timeout': 'liveness probe timing out under load (timeoutSeconds too short)',
  hang: 'the app hung: probes succeeded, then timed out until the kill',
  'liveness-unhealthy': 'the app answered its liveness probe with a failure after being healthy',
  'readiness-flapping': 'readiness flapping: in and out of service',
  'readiness-failing': 'never ready: the readiness probe keeps failing',
  'app-crash': 'the app exited by itself (not the probes)',
  'oom-killed': 'OOMKilled: over its memory limit (not the probes)',
  'sigterm-ignored': 'SIGTERM ignored: killed only after the whole grace period',
  'image-pull-failure': 'the image could not be pulled',
  'not-enough-information': 'restarted, but the evidence left does not say why',
  none: 'nothing wrong',
} as const;

export type CauseId = keyof typeof CAUSES;

/** How sure a statement is: `certain` read from a status field, `likely` from events and timing, `possible` an inference with evidence missing. */
export type Confidence = 'certain' | 'likely' | 'possible';

/** Where a statement comes from. */
export type EvidenceSource = 'status' | 'events' | 'spec' | 'logs' | 'rule';

export interface Statement {
  text: string;
  confidence: Confidence;
  from: EvidenceSource;
}
