/**
 * A pod's volumes on the Docker runtime, where the Engine API has an equivalent:
 * - `emptyDir`: a volume of the daemon, one per pod volume, shared by the pod's containers
 *   (`medium: Memory`: a tmpfs volume of the `local` driver, still shared);
 * - `configMap` / `secret`: the manifest's own ConfigMap / Secret documents (there is no API
 *   server) written as files, one per key (or per `items` entry), bind-mounted read-only;
 * - `hostPath`: a bind mount, only when the user allowed it (`--allow-host-path`): a pod
 *   manifest must not reach into this machine by default.
 * Anything else is refused before the pod starts, naming the field and the reason.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import type { Pod, PodSpec } from '../../api/types.js';
import { forbidden, notFound, type FieldError } from '../../api/field-error.js';
import { secretData } from '../../api/secret-validation.js';

/** A ConfigMap's or Secret's content: file name → bytes. */
export type KeyFiles = ReadonlyMap<string, Buffer>;

/** ConfigMaps and Secrets of the manifests, by `namespace/name`. */
export interface ConfigObjects {
  configMaps: ReadonlyMap<string, KeyFiles>;
  secrets: ReadonlyMap<string, KeyFiles>;
}

export interface VolumePolicy {
  /** `--allow-host-path`: hostPath volumes are bind mounts of this machine's paths. */
  allowHostPath?: boolean;
  objects?: ConfigObjects;
}

/** How one pod volume is mounted into a container. */
export type VolumeSource =
  | { kind: 'daemon-volume'; name: string; memory: boolean }
  | { kind: 'bind'; path: string; readOnly: boolean };

type Volume = NonNullable<PodSpec['volumes']>[number];

const SUPPORTED = ['emptyDir', 'configMap', 'secret', 'hostPath'];

function sourceKind(v: Volume): string {
  return Object.keys(v).find((k) => k !== 'name') ?? 'emptyDir';
}

function objectKey(pod: Pod, name: string): string {
  return `${pod.metadata?.namespace ?? 'default'}/${name}`;
}

/** Every reason this pod cannot run on the Docker runtime because of its volumes (empty: it can). */
export function volumeProblems(pod: Pod, policy: VolumePolicy): FieldError[] {
  const problems: FieldError[] = [];
  (pod.spec?.volumes ?? []).forEach((v, i) => {
    const kind = sourceKind(v);
    const field = `spec.volumes[${i}].${kind}`;
    if (!SUPPORTED.includes(kind)) {
      problems.push(forbidden(field, `the docker runtime mounts only ${SUPPORTED.join(', ')} volumes (there is no volume plugin or API server behind it)`));
    } else if (kind === 'hostPath' && policy.allowHostPath !== true) {
      problems.push(forbidden(field, 'a hostPath volume mounts a path of this machine: give --allow-host-path to allow it'));
    } else if (kind === 'configMap' || kind === 'secret') {
      const name = kind === 'configMap' ? v.configMap?.name : v.secret?.secretName;
      const store = kind === 'configMap' ? policy.objects?.configMaps : policy.objects?.secrets;
      const optional = (kind === 'configMap' ? v.configMap?.optional : v.secret?.optional) === true;
      if (!optional && !store?.has(objectKey(pod, name ?? ''))) {
        problems.push(notFound(`${field}.${kind === 'configMap' ? 'name' : 'secretName'}`, name ?? ''));
      }
    }
  });
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  for (const [ci, c] of containers.entries()) {
    const path = ci < (pod.spec?.initContainers?.length ?? 0) ? `spec.initContainers[${ci}]` : `spec.containers[${ci - (pod.spec?.initContainers?.length ?? 0)}]`;
    (c.volumeMounts ?? []).forEach((m, mi) => {
      if (m.subPath || m.subPathExpr) problems.push(forbidden(`${path}.volumeMounts[${mi}].${m.subPath ? 'subPath' : 'subPathExpr'}`, 'not supported by the docker runtime'));
    });
    if ((c.volumeDevices?.length ?? 0) > 0) problems.push(forbidden(`${path}.volumeDevices`, 'not supported by the docker runtime'));
  }
  return problems;
}

/** The daemon volume of a pod's emptyDir (valid Docker volume name: pod UID and volume name). */
export function emptyDirVolumeName(pod: Pod, volume: string): string {
  return `probelet_${pod.metadata?.uid ?? ''}_${volume}`;
}

/**
 * Prepares the pod's volumes that live on this machine (configMap/secret files under
 * `podDir/volumes`, hostPath DirectoryOrCreate) and says how each is mounted. Daemon volumes
 * are created by the runtime (they need the API).
 */
export function podVolumeSources(pod: Pod, podDir: string, policy: VolumePolicy): Map<string, VolumeSource> {
  const sources = new Map<string, VolumeSource>();
  for (const v of pod.spec?.volumes ?? []) {
    const kind = sourceKind(v);
    if (kind === 'emptyDir') {
      sources.set(v.name, { kind: 'daemon-volume', name: emptyDirVolumeName(pod, v.name), memory: v.emptyDir?.medium === 'Memory' });
    } else if (kind === 'hostPath' && v.hostPath) {
      if (v.hostPath.type === 'DirectoryOrCreate') mkdirSync(v.hostPath.path, { recursive: true });
      sources.set(v.name, { kind: 'bind', path: v.hostPath.path, readOnly: false });
    } else if (kind === 'configMap' || kind === 'secret') {
      const store = kind === 'configMap' ? policy.objects?.configMaps : policy.objects?.secrets;
      const name = (kind === 'configMap' ? v.configMap?.name : v.secret?.secretName) ?? '';
      const items = (kind === 'configMap' ? v.configMap?.items : v.secret?.items) ?? [];
      const dir = join(podDir, 'volumes', v.name);
      mkdirSync(dir, { recursive: true });
      const files = store?.get(objectKey(pod, name)) ?? new Map<string, Buffer>();
      const wanted = items.length > 0 ? items.map((it) => [it.key, it.path] as const) : [...files.keys()].map((k) => [k, k] as const);
      for (const [key, path] of wanted) {
        const data = files.get(key);
        if (data === undefined) continue;
        // `items[].path` is validated relative without `..` by the apiserver; normalize stays inside.
        const target = join(dir, normalize(path).replace(/^(\.\.(\/|$))+/, ''));
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, data, { mode: 0o644 });
      }
      sources.set(v.name, { kind: 'bind', path: dir, readOnly: true });
    }
  }
  return sources;
}

/**
 * The pods whose volumes the Docker runtime can mount; each other one is named through `say`
 * with every field in the way and why, before anything starts.
 */
export function refuseUnsupportedVolumes(pods: readonly Pod[], policy: VolumePolicy, say: (text: string) => void): Pod[] {
  return pods.filter((pod) => {
    const problems = volumeProblems(pod, policy);
    if (problems.length === 0) return true;
    say(`probelet: Pod ${JSON.stringify(pod.metadata?.name ?? '')} is not run on the docker runtime:\n${problems.map((p) => `  * ${String(p)}\n`).join('')}`);
    return false;
  });
}

/** A ConfigMap's or Secret's document as the manifests hold it. */
export interface ConfigDocument {
  kind: 'ConfigMap' | 'Secret';
  namespace: string;
  name: string;
  value: Record<string, unknown>;
}

/**
 * The files of each ConfigMap (`data` as text, `binaryData` base64) and Secret (`data` base64,
 * `stringData` as text, which wins as the apiserver merges it), by `namespace/name` (namespace
 * `default` when absent).
 */
export function configObjectsOf(documents: readonly ConfigDocument[]): ConfigObjects {
  const configMaps = new Map<string, KeyFiles>();
  const secrets = new Map<string, KeyFiles>();
  const entries = (field: unknown): [string, string][] =>
    field && typeof field === 'object' ? Object.entries(field).filter((e): e is [string, string] => typeof e[1] === 'string') : [];
  for (const doc of documents) {
    const files = new Map<string, Buffer>();
    const v = doc.value;
    if (doc.kind === 'ConfigMap') {
      for (const [k, text] of entries(v['data'])) files.set(k, Buffer.from(text, 'utf8'));
      for (const [k, b64] of entries(v['binaryData'])) files.set(k, Buffer.from(b64, 'base64'));
    } else {
      for (const [k, bytes] of secretData(v)) files.set(k, bytes);
    }
    (doc.kind === 'ConfigMap' ? configMaps : secrets).set(`${doc.namespace || 'default'}/${doc.name}`, files);
  }
  return { configMaps, secrets };
}
