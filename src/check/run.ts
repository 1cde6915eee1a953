/**
 * `probelet check` without the CLI: every object's pod, defaulted as the apiserver would,
 * validated with the apiserver's own messages, then every rule over every container
 * (regular, sidecar and plain init) with its timing budget, one finding per container and
 * fact (`fold.ts`). Nothing here runs anything.
 */
import { formatFieldPath, type FieldPath, type ManifestLoad, type ManifestObject, type ManifestProblem } from '../api/documents.js';
import { applyPodDefaults, setPodDefaults } from '../api/defaults.js';
import { podsOf } from '../api/manifest.js';
import type { Container, Pod } from '../api/types.js';
import { validatePod } from '../api/validation.js';
import { isRecord } from '../api/workloads.js';
import { computeBudget } from './budgets.js';
import { designates } from './figures.js';
import { foldFindings } from './fold.js';
import { rules as allRules, VALIDATION_RULE_ID } from './rules/index.js';
import { probesOf } from './rules/probes.js';
import type { CheckOptions, ContainerBudget, ContainerContext, ContainerRole, Finding, ObjectRef, Rule, RuleFinding, Severity } from './types.js';

/** The annotation that turns rules off for one object: `probelet.dev/ignore: rule-a,rule-b`. */
export const IGNORE_ANNOTATION = 'probelet.dev/ignore';

export interface CheckRunOptions extends CheckOptions {
  /** Rule ids turned off everywhere (`--disable`). */
  disabled?: ReadonlySet<string>;
  /** The rules to run (default: every rule of the registry). */
  rules?: readonly Rule[];
}

export interface CheckResult {
  findings: Finding[];
  /** The budgets of every probed container (regular containers and sidecars), in object order. */
  containers: ContainerBudget[];
  /** Input that could not be checked (YAML errors, values of the wrong type…), the loader's included. */
  problems: ManifestProblem[];
}

/** Checks every object of `load`; never throws on bad input (it becomes a problem). */
export function checkManifests(load: ManifestLoad, options: CheckRunOptions): CheckResult {
  const checker = createChecker(options);
  for (const one of load.objects) checker.add(one);
  return checker.finish(load.problems);
}

/** A figure's key that a rule never reads: which flag's (`startupTime`, `probeP99`), the key, and what it lacks. */
export interface UnmatchedKey {
  figure: 'startupTime' | 'probeP99';
  key: string;
  /** `container`: no container of that name; `probe` (a p99): containers of that name, none with that probe, so the figure is never read. */
  missing: 'container' | 'probe';
}

/** A `--startup-time` or `--probe-p99` key, as given. */
type FigureKey = Omit<UnmatchedKey, 'missing'>;

/**
 * The runner one object at a time: `add` checks an object and keeps only its findings and
 * budgets, so a loader's sink can hand objects straight in and none of them outlives its
 * check (see `ObjectSink`); `finish` returns the result with the loader's problems first.
 */
export function createChecker(options: CheckRunOptions): {
  add(object: ManifestObject): void;
  finish(loadProblems: readonly ManifestProblem[]): CheckResult;
  /** Keys of `startupTimes` and `measuredP99` that no rule read: no container of the objects added, or (a p99) none with that probe. */
  unmatchedKeys(): UnmatchedKey[];
} {
  const result: CheckResult = { findings: [], containers: [], problems: [] };
  // A startup time names a container; a p99 a container's probe (the key's own `.KIND`).
  const keys: FigureKey[] = [
    ...[...options.startupTimes.keys()].map((key) => ({ figure: 'startupTime' as const, key })),
    ...[...(options.measuredP99?.keys() ?? [])].map((key) => ({ figure: 'probeP99' as const, key })),
  ];
  const suffixOf = ({ figure, key }: FigureKey): string => (figure === 'startupTime' ? '' : key.slice(key.lastIndexOf('.')));
  /** Keys whose figure a rule reads: the container, and for a p99 the container's probe of that kind. */
  const matched = new Set<FigureKey>();
  /** p99 keys that named a container without that probe. */
  const named = new Set<FigureKey>();
  const rules = (options.rules ?? allRules).filter((r) => !options.disabled?.has(r.id));
  return {
    add: (one) => {
      try {
        checkObject(one, rules, options, result, keys.length === 0 ? undefined : (ctx) => {
          for (const key of keys) {
            if (matched.has(key) || !designates(key.key, ctx, suffixOf(key))) continue;
            if (key.figure === 'startupTime' || probesOf(ctx).some((p) => `.${p.type}` === suffixOf(key))) matched.add(key);
            else named.add(key);
          }
        });
      } catch (err) {
        // A shape no rule foresaw must cost this object only, never the other documents.
        result.problems.push({
          source: one.source,
          document: one.document,
          ...(one.item !== undefined ? { item: one.item } : {}),
          line: one.line,
          column: one.column,
          message: `could not check this ${one.kind} (${err instanceof Error ? err.message : String(err)}); please report it with the manifest`,
        });
      }
    },
    finish: (loadProblems) => ({ ...result, problems: [...loadProblems, ...result.problems] }),
    unmatchedKeys: () => keys.filter((key) => !matched.has(key)).map((key) => ({ ...key, missing: named.has(key) ? ('probe' as const) : ('container' as const) })),
  };
}

function checkObject(one: ManifestObject, rules: readonly Rule[], options: CheckRunOptions, result: CheckResult, seen?: (ctx: ContainerContext) => void): void {
  const { pods, problems } = podsOf([one]);
  result.problems.push(...problems.map(withFixHint));
  const [entry] = pods;
  if (!entry) return;
  const { pod, object, templatePath } = entry;
  const ignored = ignoredRules(object, templatePath);
  const active = ignored.size === 0 ? rules : rules.filter((r) => !ignored.has(r.id));
  const place = placer(object);
  // A workload's pod is podsOf's own copy of its template; a Pod is the loader's value itself.
  const defaulted = object.kind === 'Pod' ? setPodDefaults(pod) : applyPodDefaults(pod);
  // The apiserver ignores a template's name (the controller names the pods): validate under the workload's.
  if (templatePath.length > 0) defaulted.metadata = { ...defaulted.metadata, name: object.name };
  if (!options.disabled?.has(VALIDATION_RULE_ID) && !ignored.has(VALIDATION_RULE_ID)) {
    for (const err of validatePod(defaulted, { kind: object.kind })) {
      const podPath = parseFieldPath(err.field);
      const path = objectPath(podPath, templatePath);
      const finding = place(VALIDATION_RULE_ID, 'error', { path, message: `${formatFieldPath(path)}: ${err.errorBody()}` });
      const container = containerAt(defaulted, podPath);
      result.findings.push(container === undefined ? finding : { ...finding, container });
    }
  }
  for (const { container, role, path } of containersOf(defaulted, templatePath)) {
    const budget = computeBudget(object, defaulted, container, role);
    if (role !== 'init') result.containers.push(budget);
    const ctx: ContainerContext = { object, pod: defaulted, container, role, path, budget, options };
    seen?.(ctx);
    const own: Finding[] = [];
    for (const rule of active) {
      for (const found of rule.check(ctx)) {
        own.push({ ...place(rule.id, found.severity ?? rule.severity, found), container: container.name ?? '' });
      }
    }
    result.findings.push(...foldFindings(own));
  }
}

/** Every container of the pod with its role and its path inside the object; ephemeral containers are never probed. */
export function containersOf(pod: Pod, templatePath: FieldPath): { container: Container; role: ContainerRole; path: FieldPath }[] {
  const out: { container: Container; role: ContainerRole; path: FieldPath }[] = [];
  const spec = pod.spec;
  (spec?.initContainers ?? []).forEach((container, i) => {
    const role: ContainerRole = container.restartPolicy === 'Always' ? 'sidecar' : 'init';
    out.push({ container, role, path: [...templatePath, 'spec', 'initContainers', i] });
  });
  (spec?.containers ?? []).forEach((container, i) => {
    out.push({ container, role: 'container', path: [...templatePath, 'spec', 'containers', i] });
  });
  return out;
}

function placer(object: ManifestObject): (rule: string, severity: Severity, found: RuleFinding) => Finding {
  const ref: ObjectRef = { apiVersion: object.apiVersion, kind: object.kind, namespace: object.namespace, name: object.name };
  return (rule, severity, found) => {
    const { line, column } = object.position(found.path);
    return { rule, severity, file: object.source, line, column, object: ref, field: formatFieldPath(found.path), message: found.message };
  };
}

/** Identity fields of a workload's pod come from the workload itself; labels and the rest, from its template. */
const WORKLOAD_IDENTITY: ReadonlySet<unknown> = new Set(['name', 'namespace', 'generateName']);

/**
 * A pod field path inside the object: the pod's name and namespace are the workload's own
 * (the apiserver ignores a template's name), everything else sits under the template.
 */
function objectPath(podPath: FieldPath, templatePath: FieldPath): FieldPath {
  if (templatePath.length > 0 && podPath[0] === 'metadata' && WORKLOAD_IDENTITY.has(podPath[1])) return podPath;
  return [...templatePath, ...podPath];
}

/** The name of the container a pod field path points into (`spec.containers[1]…`), if any. */
function containerAt(pod: Pod, podPath: FieldPath): string | undefined {
  const [spec, list, index] = podPath;
  if (spec !== 'spec' || typeof index !== 'number') return undefined;
  if (list !== 'containers' && list !== 'initContainers' && list !== 'ephemeralContainers') return undefined;
  const name = pod.spec?.[list]?.[index]?.name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** `spec.containers[0].livenessProbe` → `['spec','containers',0,'livenessProbe']`. */
export function parseFieldPath(field: string): FieldPath {
  const path: (string | number)[] = [];
  for (const [, name, index] of field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (index !== undefined) path.push(Number(index));
    else if (name !== undefined) path.push(name);
  }
  return path;
}

/** Rule ids named by the annotation on the object's metadata or its pod template's metadata. */
function ignoredRules(object: ManifestObject, templatePath: FieldPath): ReadonlySet<string> {
  const ids = new Set<string>();
  const add = (meta: unknown): void => {
    if (!isRecord(meta) || !isRecord(meta['annotations'])) return;
    const value = meta['annotations'][IGNORE_ANNOTATION];
    if (typeof value !== 'string') return;
    for (const id of value.split(',')) if (id.trim() !== '') ids.add(id.trim());
  };
  add(object.value['metadata']);
  if (templatePath.length > 0) {
    let template: unknown = object.value;
    for (const key of templatePath) template = isRecord(template) ? template[key] : undefined;
    if (isRecord(template)) add(template['metadata']);
  }
  return ids;
}

/**
 * gRPC probes take a port number only (KEP-2727 dropped names on purpose); the decoder's
 * "expected an integer" gets the fix spelled out, since Popeye (#570) advises the opposite.
 */
function withFixHint(problem: ManifestProblem): ManifestProblem {
  if (!problem.field || !/\.grpc\.port$/.test(problem.field) || !problem.message.includes('got "')) return problem;
  return { ...problem, message: `${problem.message}: gRPC probes take a port number only (named ports are not supported): use the containerPort the name stands for` };
}
