/**
 * What the apiserver would do before a pod reaches a kubelet (name from `generateName`,
 * a UID, defaults, validation), plus what the local runtime needs: a command to run
 * (unless the runtime runs images, whose ENTRYPOINT then applies).
 * Each pod is judged alone, so one invalid pod never stops the others.
 */
import { randomUUID, randomBytes } from 'node:crypto';
import { admitPods, type AdmitResult } from '../api/admit.js';
import { forbidden, invalidObjectMessage, required, type FieldError } from '../api/field-error.js';
import type { Container, Pod } from '../api/types.js';
import { randomNameSuffix } from '../api/workloads.js';
import { resolveContainerEnv } from '../runtime/env.js';
import type { RuntimeInputError } from '../runtime/input-error.js';

const COMMAND_DETAIL = 'the local kubelet runs processes, not images: set the command to run (args are appended)';

export interface LocalRunAdmission {
  /** The runtime runs commands, not images: every container needs `command`. Default true. */
  requireCommand?: boolean;
}

export function admitForLocalRun(input: readonly Pod[], options: LocalRunAdmission = {}): AdmitResult {
  const requireCommand = options.requireCommand ?? true;
  const named = input.map(withIdentity);
  const result = admitPods(named);
  const pods: Pod[] = [];
  for (const pod of result.pods) {
    const errors = [
      ...(requireCommand ? commandErrors(pod.spec?.initContainers, 'spec.initContainers') : []),
      ...(requireCommand ? commandErrors(pod.spec?.containers, 'spec.containers') : []),
      ...envErrors(pod, pod.spec?.initContainers, 'spec.initContainers'),
      ...envErrors(pod, pod.spec?.containers, 'spec.containers'),
    ];
    if (errors.length === 0) {
      pods.push(pod);
      continue;
    }
    const name = pod.metadata?.name ?? '';
    result.errors.push({ pod: name, errors, message: invalidObjectMessage('Pod', name, errors) });
  }
  return { pods, errors: result.errors };
}

function commandErrors(containers: readonly Container[] | undefined, path: string): ReturnType<typeof required>[] {
  return (containers ?? []).flatMap((c, i) => (c.command?.length ? [] : [required(`${path}[${i}].command`, COMMAND_DETAIL)]));
}

/**
 * Env sources the local runtime cannot serve (Secrets, ConfigMaps, resource fields, other
 * fieldRefs), found by the runtime's own resolution so the rule lives in one place.
 */
function envErrors(pod: Pod, containers: readonly Container[] | undefined, path: string): FieldError[] {
  return (containers ?? []).flatMap((c, i) => {
    try {
      resolveContainerEnv(pod, c, { podIP: '127.0.0.1' }, `${path}[${i}]`);
      return [];
    } catch (err) {
      const field = (err as Partial<RuntimeInputError>).field ?? `${path}[${i}].env`;
      const message = err instanceof Error ? err.message : String(err);
      return [forbidden(field, message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message)];
    }
  });
}

/**
 * A copy with `metadata.name` (from `generateName`) and `metadata.uid` filled as the apiserver
 * would; a pod that has both is returned as is.
 */
export function withIdentity(pod: Pod): Pod {
  if (pod.metadata?.name && pod.metadata.uid) return pod;
  const metadata = { ...pod.metadata };
  if (!metadata.name && metadata.generateName) {
    const bytes = randomBytes(5);
    let i = 0;
    metadata.name = `${metadata.generateName}${randomNameSuffix(() => bytes[i++] ?? 0)}`;
  }
  if (!metadata.uid) metadata.uid = randomUUID();
  return { ...pod, metadata };
}
