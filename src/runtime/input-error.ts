/**
 * Errors for container specs the local runtime cannot run. They name the offending field
 * the way the apiserver does (`spec.containers[0].env[2].valueFrom.secretKeyRef`), because
 * the user has to find it in a manifest that may hold dozens of containers.
 */
import type { Container, Pod } from '../api/types.js';

/** A spec the local runtime refuses; `field` is the path of the offending field. */
export interface RuntimeInputError extends Error {
  readonly field: string;
}

export function runtimeInputError(field: string, message: string): RuntimeInputError {
  return Object.assign(new Error(`${field}: ${message}`), { field });
}

/**
 * The API path of `container` in `pod` (`spec.containers[1]`, `spec.initContainers[0]`,
 * …), found by identity first and then by name; a container the pod does not list gets
 * the object-reference form `spec.containers{name}` so the message still says which one.
 */
export function containerFieldPath(pod: Pod, container: Container): string {
  const lists: [string, readonly { name: string }[] | undefined][] = [
    ['spec.initContainers', pod.spec?.initContainers],
    ['spec.containers', pod.spec?.containers],
    ['spec.ephemeralContainers', pod.spec?.ephemeralContainers],
  ];
  for (const match of [(c: { name: string }) => c === container, (c: { name: string }) => c.name === container.name]) {
    for (const [path, list] of lists) {
      const index = list?.findIndex(match) ?? -1;
      if (index >= 0) return `${path}[${index}]`;
    }
  }
  return `spec.containers{${container.name}}`;
}
