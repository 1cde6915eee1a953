import type { Pod } from './types.js';

/**
 * The kubelet's `format.Pod`: `<name>_<namespace>(<uid>)`. It appears in event and
 * back-off messages that users grep for, so it is rendered in one place.
 */
export function formatPod(pod: Pod): string {
  const meta = pod.metadata ?? {};
  return `${meta.name ?? ''}_${meta.namespace ?? ''}(${meta.uid ?? ''})`;
}
