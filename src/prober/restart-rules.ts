import type { ContainerRestartRule, ContainerWithRules, Pod } from '../api/types.js';

/**
 * Would the kubelet restart this container after it exited with `exitCode`? This is the
 * ContainerRestartRules decision (KEP-5307, beta and on by default in 1.35): the
 * container's `restartPolicyRules` in order (first match wins), then the container's own
 * `restartPolicy`, then the pod's. A probe worker uses it to decide whether to outlive a
 * terminated container; sidecars (`restartPolicy: Always`) therefore always keep theirs.
 */
export function containerShouldRestart(container: ContainerWithRules, pod: Pod, exitCode: number): boolean {
  for (const rule of container.restartPolicyRules ?? []) {
    if (ruleMatches(rule, exitCode)) return rule.action === 'Restart';
  }
  return policyRestarts(container.restartPolicy ?? pod.spec?.restartPolicy, exitCode);
}

function ruleMatches(rule: ContainerRestartRule, exitCode: number): boolean {
  const codes = rule.exitCodes;
  if (!codes) return false;
  const listed = (codes.values ?? []).includes(exitCode);
  if (codes.operator === 'In') return listed;
  if (codes.operator === 'NotIn') return !listed;
  return false;
}

/** A restart policy's answer for an exit with `exitCode`; an unset pod policy is the API default, `Always`. */
export function policyRestarts(policy: string | undefined, exitCode: number): boolean {
  switch (policy) {
    case 'Never':
      return false;
    case 'OnFailure':
      return exitCode !== 0;
    default:
      return true;
  }
}
