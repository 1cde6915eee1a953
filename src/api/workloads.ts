/**
 * Pod templates of the built-in workload kinds. Probing a Deployment's template answers
 * "what will the kubelet do with my probes" without a cluster, so `probe -f` accepts them;
 * running one locally would pretend to be a controller, so `run` does not.
 */
import type { ObjectMeta, Pod, PodSpec } from './types.js';

interface WorkloadKind {
  apiVersion: string;
  /** Where the pod template sits inside the object. */
  templatePath: readonly string[];
}

export const WORKLOAD_KINDS: Readonly<Record<string, WorkloadKind>> = {
  Deployment: { apiVersion: 'apps/v1', templatePath: ['spec', 'template'] },
  StatefulSet: { apiVersion: 'apps/v1', templatePath: ['spec', 'template'] },
  DaemonSet: { apiVersion: 'apps/v1', templatePath: ['spec', 'template'] },
  ReplicaSet: { apiVersion: 'apps/v1', templatePath: ['spec', 'template'] },
  Job: { apiVersion: 'batch/v1', templatePath: ['spec', 'template'] },
  CronJob: { apiVersion: 'batch/v1', templatePath: ['spec', 'jobTemplate', 'spec', 'template'] },
};

export function isWorkloadKind(kind: string): boolean {
  return Object.hasOwn(WORKLOAD_KINDS, kind);
}

/**
 * The workload's pod template as a Pod. Its name and namespace come from the template's
 * metadata, or else from the workload's (controllers would generate a name; probing needs
 * a stable, readable one). Returns an error text when there is no template.
 */
export function podFromWorkload(kind: string, object: Record<string, unknown>): Pod | string {
  const workload = WORKLOAD_KINDS[kind];
  if (!workload) return `kind ${JSON.stringify(kind)} has no pod template`;
  let template: unknown = object;
  for (const key of workload.templatePath) template = isRecord(template) ? template[key] : undefined;
  const meta = isRecord(object['metadata']) ? (object['metadata'] as ObjectMeta) : {};
  const display = `${kind} ${JSON.stringify(meta.name ?? '')}`;
  if (!isRecord(template)) return `${display} has no ${workload.templatePath.join('.')}`;
  const copy = structuredClone(template) as { metadata?: ObjectMeta; spec?: PodSpec };
  const metadata: ObjectMeta = isRecord(copy.metadata) ? copy.metadata : {};
  const name = metadata.name || meta.name;
  const namespace = metadata.namespace || meta.namespace;
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...metadata, ...(name ? { name } : {}), ...(namespace ? { namespace } : {}) },
  };
  if (copy.spec !== undefined) pod.spec = copy.spec;
  return pod;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
