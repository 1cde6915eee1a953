/**
 * Admission of loaded pods, one at a time, as the apiserver creates them: default, then
 * validate. Each pod stands alone, so one invalid pod in a manifest never stops the others.
 */
import { setPodDefaults } from './defaults.js';
import { duplicate, FieldError, invalidObjectMessage } from './field-error.js';
import type { Pod } from './types.js';
import { validatePod, type PodValidationOptions } from './validation.js';

export interface RejectedPod {
  /** The pod's name, or `#<n>` (1-based position) when it has none. */
  pod: string;
  errors: FieldError[];
  /** The apiserver's 422 text: `Pod "web" is invalid: <errors>`. */
  message: string;
}

export interface AdmitResult {
  /** Defaulted, valid pods, in input order. */
  pods: Pod[];
  /** One entry per rejected pod, in input order. */
  errors: RejectedPod[];
}

/**
 * Defaults and validates each pod independently. A second pod with the namespace and name
 * of an admitted one is rejected too (`metadata.name: Duplicate value`), since both could
 * not exist at once.
 */
export function admitPods(pods: readonly Pod[], options: PodValidationOptions = {}): AdmitResult {
  const admitted: Pod[] = [];
  const rejected: RejectedPod[] = [];
  const seen = new Set<string>();
  pods.forEach((input, i) => {
    const pod = setPodDefaults(input);
    const name = pod.metadata?.name ?? '';
    const key = `${pod.metadata?.namespace ?? ''}/${name}`;
    const errors = validatePod(pod, options);
    if (errors.length === 0 && seen.has(key)) errors.push(duplicate('metadata.name', name));
    if (errors.length > 0) {
      rejected.push({ pod: name || `#${i + 1}`, errors, message: invalidObjectMessage('Pod', name, errors) });
      return;
    }
    seen.add(key);
    admitted.push(pod);
  });
  return { pods: admitted, errors: rejected };
}

/**
 * `admitPods` for pods that exist already (a node agent's, from the apiserver):
 * `ValidatePodCreate`'s rules are not theirs — `kubectl debug` adds ephemeral containers.
 */
export function admitExistingPods(pods: readonly Pod[]): AdmitResult {
  return admitPods(pods, { create: false });
}
