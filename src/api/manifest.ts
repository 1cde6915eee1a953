/**
 * Pods from manifests: every Pod, and the pod of every workload template, with the strict
 * field validation and the type checks the apiserver's decoder makes. Loading only decodes: callers run
 * `setPodDefaults` and `validatePod` (or `admitPods`) afterwards, as the apiserver would.
 */
import {
  formatProblem,
  loadManifests,
  parseManifestDocuments,
  type FieldPath,
  type ManifestLoad,
  type ManifestObject,
  type ManifestProblem,
} from './documents.js';
import { formatFieldPath, nullValues, podShapeProblems } from './shape.js';
import { unknownFields } from './strict-fields.js';
import { copyPlain } from '../util/copy.js';
import type { Pod } from './types.js';
import { podFromWorkload, templatePathOf, type PodNaming } from './workloads.js';
import { setPodDefaults } from './defaults.js';
import { FieldError, invalidObjectMessage } from './field-error.js';
import { validateTemplateForKind } from './workload-validation.js';

export { admitPods, type AdmitResult, type RejectedPod } from './admit.js';

export type ManifestOptions = PodNaming;

/** A manifest that cannot be turned into Pods. The message names the file and where in it, one line per problem. */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
  constructor(
    message: string,
    /** The file (or other source name) the manifest came from. */
    readonly source: string,
    /** 1-based line and column of the first problem, when known. */
    readonly line?: number,
    readonly column?: number,
  ) {
    super(message);
  }
}

/** A pod with the object it came from and where its template sits in that object. */
export interface ManifestPod {
  pod: Pod;
  object: ManifestObject;
  /** `[]` for a Pod, `['spec','template']` for a Deployment…: prefix of the pod's field paths inside the object. */
  templatePath: FieldPath;
}

/**
 * The pod of every object, each checked for values of the wrong type. An object whose pod
 * has such values is a problem (every value named, with its line), not a pod.
 */
export function podsOf(objects: readonly ManifestObject[], options: ManifestOptions = {}): { pods: ManifestPod[]; problems: ManifestProblem[] } {
  const pods: ManifestPod[] = [];
  const problems: ManifestProblem[] = [];
  for (const object of objects) {
    const templatePath = templatePathOf(object.kind);
    const where = { source: object.source, document: object.document, ...(object.item !== undefined ? { item: object.item } : {}) };
    // Strict field validation first, on the whole object: a misspelled field is refused as
    // the API server refuses it, and the object is not read on the defaults it stands for.
    const strict = unknownFields(object.kind, object.value);
    if (strict.length > 0) {
      for (const p of strict) problems.push({ ...where, ...object.position(p.path), ...(p.path.length > 0 ? { field: formatFieldPath(p.path) } : {}), message: p.message });
      continue;
    }
    const pod = podFromWorkload(object.kind, object.value, options);
    if (typeof pod === 'string') {
      problems.push({ ...where, ...object.position(templatePath), message: pod });
      continue;
    }
    const shape = podShapeProblems(pod);
    if (shape.length > 0) {
      for (const p of shape) {
        const path = [...templatePath, ...p.path];
        problems.push({ ...where, ...object.position(path), field: formatFieldPath(path), message: p.message });
      }
      continue;
    }
    pods.push({ pod: withZeroValues(pod), object, templatePath });
  }
  return { pods, problems };
}

/**
 * The pods whose workload the apiserver would store: one its kind refuses (a Deployment
 * whose template's restartPolicy is not Always, a Job's that is…; see workload-validation.ts)
 * is a problem naming the workload and the field, and runs no pod. For `run` and `simulate`;
 * `check` reports the same errors with its other validation errors.
 */
export function withoutRefusedWorkloads(entries: readonly ManifestPod[]): { pods: ManifestPod[]; problems: ManifestProblem[] } {
  const pods: ManifestPod[] = [];
  const problems: ManifestProblem[] = [];
  for (const entry of entries) {
    const { object, templatePath } = entry;
    const errors = templatePath.length === 0 ? [] : validateTemplateForKind(object.kind, setPodDefaults(entry.pod).spec ?? {});
    if (errors.length === 0) {
      pods.push(entry);
      continue;
    }
    // Upstream's paths run from the workload: spec.template.spec.restartPolicy.
    const prefix = templatePath.join('.');
    const full = errors.map((e) => new FieldError(e.type, `${prefix}.${e.field}`, e.badValue, e.detail));
    const first = full[0]?.field.split('.') ?? [];
    problems.push({
      source: object.source,
      document: object.document,
      ...(object.item !== undefined ? { item: object.item } : {}),
      ...object.position(first),
      message: invalidObjectMessage(object.kind, object.name ?? '', full),
    });
  }
  return { pods, problems };
}

/** The pod with its `null`s as the decoder's zero values (see `nullValues`); a copy only when there are any (the input is never changed). */
function withZeroValues(pod: Pod): Pod {
  const nulls = nullValues(pod);
  if (nulls.length === 0) return pod;
  const copy = copyPlain(pod);
  for (const { path, zero } of nulls) {
    let at: unknown = copy;
    for (const segment of path.slice(0, -1)) at = (at as Record<string | number, unknown>)[segment];
    const parent = at as Record<string | number, unknown>;
    const last = path[path.length - 1] as string | number;
    if (zero === undefined) delete parent[last];
    else parent[last] = zero;
  }
  return copy;
}

/** Parses every document of `text` (named `source` in messages) into Pods, in document order; throws a ManifestError listing every problem. */
export function parseManifest(text: string, source: string, options: ManifestOptions = {}): Pod[] {
  return podsOrThrow(parseManifestDocuments(text, source), source, options);
}

/** Reads and parses a manifest file; see `parseManifest`. */
export async function loadManifestFile(path: string, options: ManifestOptions = {}): Promise<Pod[]> {
  return podsOrThrow(await loadManifests([path]), path, options);
}

function podsOrThrow(load: ManifestLoad, source: string, options: ManifestOptions): Pod[] {
  const { pods, problems } = podsOf(load.objects, options);
  const all = [...load.problems, ...problems];
  const first = all[0];
  if (first) throw new ManifestError(all.map(formatProblem).join('\n'), source, first.line, first.column);
  return pods.map((p) => p.pod);
}
