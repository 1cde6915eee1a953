/**
 * The apiserver's own validation as a rule id: `check` reports what `kubectl apply` would be
 * refused for, with the apiserver's words (run.ts calls `validatePod`; this is its text).
 */
import type { Rule } from '../types.js';

export const VALIDATION_RULE_ID = 'invalid';

/** The rule's description; its findings come from `validatePod` in run.ts. */
export const validationRule: Omit<Rule, 'check'> = {
  id: VALIDATION_RULE_ID,
  severity: 'error',
  summary: 'The apiserver would refuse the pod (template): the same validation, the same messages.',
  explain: `What: everything the apiserver's pod validation refuses that probes and containers depend on:
no handler or more than one, an empty exec command, a scheme other than HTTP/HTTPS, a bad header
name, a port outside 1–65535 or not a valid port name, negative timing fields, a probe-level
terminationGracePeriodSeconds of 0, successThreshold other than 1 on liveness and startup probes,
a grace period on a readiness probe, probes on plain init containers, duplicate names.
Why: kubectl apply fails with exactly this message; schema validators (kubeconform) only check
types and cannot see these (yannh/kubeconform "Limits").
Fix: what the message says; the field path points into the object, with its line and column.
Example:
  spec.template.spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1`,
  equivalents: [
    'kube-apiserver validation',
    'Datree CONTAINERS_INCORRECT_*_VALUE (55–59: minimums, successThreshold 1)',
    'kubeconform (types only)',
  ],
};
