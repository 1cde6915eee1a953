/**
 * What the workload kinds' own validation adds to that of their pod template
 * (`ValidatePodTemplateSpecForReplicaSet`, `ValidateStatefulSetSpec`, `ValidateDaemonSetSpec`,
 * `ValidatePodTemplateSpecForRC`, batch's `validateJobPodTemplateSpec`), worded as upstream
 * and with paths relative to the pod, as `validatePod`'s are (`spec.restartPolicy` is
 * `spec.template.spec.restartPolicy` in a Deployment). The template must be defaulted first:
 * an unset restartPolicy is `Always` by then, which a Job refuses.
 */
import { forbidden, notSupported, required, type FieldError } from './field-error.js';
import type { PodSpec } from './types.js';

/**
 * Kinds whose pods run forever, with the name their activeDeadlineSeconds message uses (a
 * Deployment's template is validated as its ReplicaSet's).
 */
const LONG_RUNNING: Readonly<Record<string, string>> = {
  Deployment: 'ReplicaSet',
  ReplicaSet: 'ReplicaSet',
  ReplicationController: 'ReplicationController',
  StatefulSet: 'StatefulSet',
  DaemonSet: 'DaemonSet',
};

const JOB_KINDS = new Set(['Job', 'CronJob']);
const JOB_RESTART_POLICIES = ['OnFailure', 'Never'];

/** The errors `kind` adds for its (defaulted) pod template; none for a Pod or a PodTemplate. */
export function validateTemplateForKind(kind: string, spec: Partial<PodSpec>): FieldError[] {
  const errs: FieldError[] = [];
  const restartPolicy = spec.restartPolicy ?? '';
  const asKind = LONG_RUNNING[kind];
  if (asKind !== undefined) {
    if (restartPolicy !== 'Always') errs.push(notSupported('spec.restartPolicy', restartPolicy, ['Always']));
    if (spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds !== null) {
      errs.push(forbidden('spec.activeDeadlineSeconds', `activeDeadlineSeconds in ${asKind} is not Supported`));
    }
  } else if (JOB_KINDS.has(kind)) {
    if (restartPolicy === 'Always' || restartPolicy === '') {
      errs.push(required('spec.restartPolicy', `valid values: "OnFailure", "Never"`));
    } else if (!JOB_RESTART_POLICIES.includes(restartPolicy)) {
      errs.push(notSupported('spec.restartPolicy', restartPolicy, JOB_RESTART_POLICIES));
    }
  }
  return errs;
}
