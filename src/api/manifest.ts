/**
 * Reading Pods from YAML or JSON manifests (one or many documents, Lists, and — for
 * `probe -f` — workload pod templates). Loading only decodes: callers run
 * `setPodDefaults` and `validatePod` (or `admitPods`) afterwards, as the apiserver would.
 */
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { checkPodShape, describe } from './shape.js';
import type { Pod } from './types.js';
import { isRecord, isWorkloadKind, podFromWorkload, WORKLOAD_KINDS } from './workloads.js';

export { admitPods, type AdmitResult, type RejectedPod } from './admit.js';

export interface ManifestOptions {
  /** Accept Deployment, StatefulSet, DaemonSet, ReplicaSet, Job and CronJob and return their pod templates. */
  allowTemplates?: boolean;
}

/** A manifest that cannot be turned into Pods. The message names the file and where in it. */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
  constructor(
    message: string,
    /** The file (or other source name) the manifest came from. */
    readonly source: string,
    /** 1-based line and column, for YAML syntax errors. */
    readonly line?: number,
    readonly column?: number,
  ) {
    super(message);
  }
}

const POD_KINDS = ['Pod', 'PodList', 'List'];
const CORE_API_VERSION = 'v1';

/** Parses every document of `text` (named `source` in messages) into Pods, in document order. */
export function parseManifest(text: string, source: string, options: ManifestOptions = {}): Pod[] {
  const pods: Pod[] = [];
  parseAllDocuments(text).forEach((doc, i) => {
    const where = `${source}: document ${i + 1}`;
    const syntaxError = doc.errors[0];
    if (syntaxError) {
      const pos = syntaxError.linePos?.[0];
      const reason = syntaxError.message.replace(/ at line \d+, column \d+:[\s\S]*$/, '');
      if (!pos) throw new ManifestError(`${where}: ${reason}`, source);
      throw new ManifestError(`${source}:${pos.line}:${pos.col}: ${reason}`, source, pos.line, pos.col);
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 1000 });
    } catch (err) {
      throw new ManifestError(`${where}: ${(err as Error).message}`, source);
    }
    if (value === null || value === undefined) return; // empty or comment-only document
    pods.push(...objectToPods(value, where, source, options, false));
  });
  return pods;
}

/** Reads and parses a manifest file; see `parseManifest`. */
export async function loadManifestFile(path: string, options: ManifestOptions = {}): Promise<Pod[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ManifestError(`${path}: cannot read manifest: ${(err as Error).message}`, path);
  }
  return parseManifest(text, path, options);
}

function objectToPods(
  value: unknown,
  where: string,
  source: string,
  options: ManifestOptions,
  podListItem: boolean,
): Pod[] {
  const fail = (msg: string): never => {
    throw new ManifestError(`${where}: ${msg}`, source);
  };
  if (!isRecord(value)) {
    return fail(`expected a Kubernetes object (a mapping with apiVersion and kind), got ${describe(value)}`);
  }
  // Items of a typed PodList may omit their type, as the kubelet's own /pods output does.
  const object = podListItem ? { apiVersion: CORE_API_VERSION, kind: 'Pod', ...value } : value;
  const apiVersion = object['apiVersion'];
  const kind = object['kind'];
  if (typeof apiVersion !== 'string' || apiVersion === '') return fail('missing required field "apiVersion"');
  if (typeof kind !== 'string' || kind === '') return fail('missing required field "kind"');

  const expectedVersion = POD_KINDS.includes(kind) ? CORE_API_VERSION : WORKLOAD_KINDS[kind]?.apiVersion;
  if (expectedVersion === undefined) {
    const accepted = options.allowTemplates ? [...POD_KINDS, ...Object.keys(WORKLOAD_KINDS)] : POD_KINDS;
    return fail(`unsupported kind ${JSON.stringify(kind)}; accepted kinds: ${accepted.join(', ')}`);
  }
  if (apiVersion !== expectedVersion) {
    return fail(`no matches for kind ${JSON.stringify(kind)} in version ${JSON.stringify(apiVersion)}`);
  }

  if (kind === 'PodList' || kind === 'List') {
    if (podListItem) return fail(`a ${kind} inside a list is not supported`);
    const items = object['items'] ?? [];
    if (!Array.isArray(items)) return fail(`items: expected a list, got ${describe(items)}`);
    return items.flatMap((item, j) => objectToPods(item, `${where}, items[${j}]`, source, options, kind === 'PodList'));
  }
  if (isWorkloadKind(kind)) {
    if (!options.allowTemplates) {
      return fail(
        `kind ${JSON.stringify(kind)} is only accepted by \`probe -f\` (which probes its pod template); ` +
          'give a Pod, a PodList or a List of Pods here',
      );
    }
    const pod = podFromWorkload(kind, object);
    if (typeof pod === 'string') return fail(pod);
    return [checkedPod(pod, `${where}, ${kind} pod template`, source)];
  }
  return [checkedPod(object as Pod, where, source)];
}

function checkedPod(pod: Pod, where: string, source: string): Pod {
  const problems = checkPodShape(pod);
  if (problems.length > 0) {
    throw new ManifestError(problems.map((p) => `${where}: ${p}`).join('\n'), source);
  }
  return pod;
}
