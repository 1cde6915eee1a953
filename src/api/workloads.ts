/**
 * Pods and the pod templates of the built-in workload kinds. Users have Deployments from
 * Helm charts far more often than bare Pods, so every command takes both: `check`, `probe -f`
 * and `simulate` read a template as the pod it describes; `run` names it the way its
 * controller would (`web-7d4b9c8f6-x2x9q`, `db-0`).
 */
import { copyPlain } from '../util/copy.js';
import type { ObjectMeta, Pod, PodSpec } from './types.js';

interface PodTemplateKind {
  apiVersion: string;
  /** Where the pod template sits inside the object ([] for a Pod itself). */
  templatePath: readonly string[];
}

/** Every kind that has a pod (template), with its only served apiVersion. */
export const POD_TEMPLATE_KINDS: Readonly<Record<string, PodTemplateKind>> = {
  Pod: { apiVersion: 'v1', templatePath: [] },
  PodTemplate: { apiVersion: 'v1', templatePath: ['template'] },
  Deployment: { apiVersion: 'apps/v1', templatePath: ['spec', 'template'] },
  StatefulSet: { apiVersion: 'apps/v1', templatePath: ['spec', 'template'] },
  DaemonSet: { apiVersion: 'apps/v1', templatePath: ['spec', 'template'] },
  ReplicaSet: { apiVersion: 'apps/v1', templatePath: ['spec', 'template'] },
  ReplicationController: { apiVersion: 'v1', templatePath: ['spec', 'template'] },
  Job: { apiVersion: 'batch/v1', templatePath: ['spec', 'template'] },
  CronJob: { apiVersion: 'batch/v1', templatePath: ['spec', 'jobTemplate', 'spec', 'template'] },
};

/** The workload kinds (everything with a template but Pod itself). */
export const WORKLOAD_KINDS: Readonly<Record<string, PodTemplateKind>> = Object.fromEntries(
  Object.entries(POD_TEMPLATE_KINDS).filter(([kind]) => kind !== 'Pod'),
);

export function isWorkloadKind(kind: string): boolean {
  return Object.hasOwn(WORKLOAD_KINDS, kind);
}

/** Where the pod template of `kind` is inside its object. */
export function templatePathOf(kind: string): readonly string[] {
  return (Object.hasOwn(POD_TEMPLATE_KINDS, kind) ? POD_TEMPLATE_KINDS[kind]?.templatePath : undefined) ?? [];
}

export interface PodNaming {
  /**
   * `template` (default): the pod takes the workload's name, stable for messages and
   * `--pod`. `controller`: named as the controller would name it, with `generateName`
   * where the controller uses a random suffix.
   */
  naming?: 'template' | 'controller';
  /** For CronJobs with `controller` naming: the scheduled time (epoch ms) in the Job's name. */
  nowMs?: number;
}

/**
 * The object's pod: a Pod as is, or the workload's template as a Pod. Namespace comes from
 * the template, else the workload. Returns an error text when there is no template.
 */
export function podFromWorkload(kind: string, object: Record<string, unknown>, options: PodNaming = {}): Pod | string {
  if (kind === 'Pod') return object as Pod;
  const workload = WORKLOAD_KINDS[kind];
  if (!workload) return `kind ${JSON.stringify(kind)} has no pod template`;
  let template: unknown = object;
  for (const key of workload.templatePath) template = isRecord(template) ? template[key] : undefined;
  const meta = isRecord(object['metadata']) ? (object['metadata'] as ObjectMeta) : {};
  const display = `${kind} ${JSON.stringify(meta.name ?? '')}`;
  if (!isRecord(template)) return `${display} has no ${workload.templatePath.join('.')}`;
  const copy = copyPlain(template) as { metadata?: ObjectMeta; spec?: PodSpec };
  const metadata: ObjectMeta = isRecord(copy.metadata) ? copy.metadata : {};
  const namespace = metadata.namespace || meta.namespace;
  const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { ...metadata, ...(namespace ? { namespace } : {}) } };
  if (copy.spec !== undefined) pod.spec = copy.spec;
  const name = metadata.name || meta.name;
  if (options.naming === 'controller' && meta.name) nameLikeController(pod, kind, meta.name, template, options.nowMs ?? 0);
  else if (name && pod.metadata) pod.metadata.name = name;
  return pod;
}

/**
 * Names as the controllers name their pods: a Deployment's ReplicaSet is
 * `<name>-<pod-template-hash>` and its pods `<rs>-<5 chars>`; a StatefulSet's first pod
 * is `<name>-0`; DaemonSet, ReplicaSet, ReplicationController and Job pods are
 * `<name>-<5 chars>`; a CronJob's Job is `<name>-<scheduled minutes>`.
 */
function nameLikeController(pod: Pod, kind: string, name: string, template: Record<string, unknown>, nowMs: number): void {
  const metadata = (pod.metadata ??= {});
  delete metadata.name;
  const given = controllerPodName(kind, name, template, nowMs);
  if (given.name !== undefined) metadata.name = given.name;
  if (given.generateName !== undefined) metadata.generateName = given.generateName;
  if (kind === 'Deployment') metadata.labels = { ...metadata.labels, 'pod-template-hash': podTemplateHash(template) };
  if (kind === 'StatefulSet') metadata.labels = { ...metadata.labels, 'statefulset.kubernetes.io/pod-name': `${name}-0`, 'apps.kubernetes.io/pod-index': '0' };
}

/** The name, or the `generateName` the apiserver completes with 5 characters, of the workload's first pod. */
function controllerPodName(kind: string, name: string, template: unknown, nowMs: number): { name?: string; generateName?: string } {
  switch (kind) {
    case 'Pod':
    case 'PodTemplate':
      return { name };
    case 'Deployment':
      return { generateName: `${name}-${podTemplateHash(template)}-` };
    case 'StatefulSet':
      return { name: `${name}-0` };
    case 'CronJob':
      return { generateName: `${name}-${Math.floor(nowMs / 60_000)}-` };
    default:
      return { generateName: `${name}-` };
  }
}

/**
 * Whether `podName` is the object's own name or a name its controller gives its pod (as
 * `run` names them): how `check` recognises the `POD/CONTAINER` keys of the figures that
 * `probelet run` measured. A CronJob's scheduled minute is not known here, so any is taken.
 */
export function namesPodOf(kind: string, object: Record<string, unknown>, podName: string): boolean {
  const meta = isRecord(object['metadata']) ? (object['metadata'] as ObjectMeta) : {};
  const name = meta.name ?? '';
  if (podName === '') return false;
  // Unnamed (a Pod with only generateName): what the apiserver would name it, nothing else.
  if (name === '') return generatedFrom(meta.generateName ?? '', podName);
  if (podName === name) return true;
  let template: unknown = object;
  for (const key of templatePathOf(kind)) template = isRecord(template) ? template[key] : undefined;
  const given = controllerPodName(kind, name, template, 0);
  if (given.name !== undefined) return podName === given.name;
  const prefix = kind === 'CronJob' ? cronJobPodPrefix(name, podName) : given.generateName;
  return prefix !== undefined && generatedFrom(prefix, podName);
}

/** `generateName` plus the five characters the apiserver appends. */
function generatedFrom(prefix: string, podName: string): boolean {
  if (prefix === '' || !podName.startsWith(prefix)) return false;
  const suffix = podName.slice(prefix.length);
  return suffix.length === 5 && [...suffix].every((c) => SAFE_ALPHABET.includes(c));
}

/** `NAME-MINUTE-` at the start of a CronJob's pod name, any scheduled minute (not known here). */
function cronJobPodPrefix(name: string, podName: string): string | undefined {
  if (!podName.startsWith(`${name}-`)) return undefined;
  const dash = podName.indexOf('-', name.length + 1);
  const minute = podName.slice(name.length + 1, dash);
  return dash > 0 && /^\d+$/.test(minute) ? podName.slice(0, dash + 1) : undefined;
}

/** The characters Kubernetes uses for generated names and hashes (`rand.SafeEncodeString`): no vowels, no look-alikes. */
export const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** `pod-template-hash`: a 32-bit FNV-1a of the template, its decimal digits safe-encoded, as the Deployment controller does. */
export function podTemplateHash(template: unknown): string {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(JSON.stringify(template))) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return [...String(hash)].map((c) => SAFE_ALPHABET[c.charCodeAt(0) % SAFE_ALPHABET.length]).join('');
}

/** `utilrand.String(n)`: the random suffix of a generated name. */
export function randomNameSuffix(randomByte: () => number, length = 5): string {
  let out = '';
  for (let i = 0; i < length; i++) out += SAFE_ALPHABET[randomByte() % SAFE_ALPHABET.length];
  return out;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
