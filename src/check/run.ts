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
import { computeBudget } from './budgets.js';
import { designates } from './figures.js';
import { foldFindings } from './fold.js';
import { fingerprint } from './baseline.js';
import { ruleInfos, rules as allRules, VALIDATION_RULE_ID } from './rules/index.js';
import { suppressionsOf } from './suppress.js';
import { probesOf } from './rules/probes.js';
import type { CheckOptions, ContainerBudget, ContainerContext, ContainerRole, Finding, InputNote, ObjectRef, Rule, RuleFinding, Severity } from './types.js';

/** Every id a suppression may name (`invalid` is no rule a suppression can name: suppress.ts says so). */
const RULE_IDS: readonly string[] = ruleInfos.map((r) => r.id).filter((id) => id !== VALIDATION_RULE_ID);

export { IGNORE_ANNOTATION } from './suppress.js';

export interface CheckRunOptions extends CheckOptions {
  /** Rule ids turned off everywhere (`--disable`). */
  disabled?: ReadonlySet<string>;
  /** The rules to run (default: every rule of the registry). */
  rules?: readonly Rule[];
  /** A severity other than the rule's own (`.probelet.yaml`'s `rules:`). */
  severities?: ReadonlyMap<string, Severity>;
  /** Fingerprints of accepted findings (`--baseline FILE`): these are suppressed, `by` naming the file. */
  baseline?: { prints: ReadonlySet<string>; by: string };
}

export interface CheckResult {
  findings: Finding[];
  /** The budgets of every probed container (regular containers and sidecars), in object order. */
  containers: ContainerBudget[];
  /** Input that could not be checked (YAML errors, values of the wrong type…), the loader's included. */
  problems: ManifestProblem[];
  /** Findings an annotation or the baseline accepted: counted and listed apart, never lost. */
  suppressed: Finding[];
  /** Warnings about the input that change no exit code (a suppression that suppresses nothing). */
  notes: InputNote[];
  /** How many objects were analysed (read, valid, their rules run). */
  checked: number;
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
  const result: CheckResult = { findings: [], containers: [], problems: [], suppressed: [], notes: [], checked: 0 };
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
  const place = placer(object, options.severities);
  // A workload's pod is podsOf's own copy of its template; a Pod is the loader's value itself.
  const defaulted = object.kind === 'Pod' ? setPodDefaults(pod) : applyPodDefaults(pod, { template: true });
  // The apiserver ignores a template's name (the controller names the pods): validate under the workload's.
  if (templatePath.length > 0) defaulted.metadata = { ...defaulted.metadata, name: object.name };
  // One input rule for every command: an object the API server would refuse is an input
  // problem (exit 2 whatever --fail-on says), not a finding a flag could hide, and its pod is
  // not analysed: no budget is computed from values that can never be stored.
  const refused = validatePod(defaulted, { kind: object.kind });
  if (refused.length > 0) {
    const where = { source: object.source, document: object.document, ...(object.item !== undefined ? { item: object.item } : {}) };
    for (const err of refused) {
      const path = objectPath(parseFieldPath(err.field), templatePath);
      result.problems.push({ ...where, ...object.position(path), field: formatFieldPath(path), message: err.errorBody() });
    }
    return;
  }
  result.checked++;
  const containers = containersOf(defaulted, templatePath);
  const suppressions = suppressionsOf(object, templatePath, { rules: RULE_IDS, containers: containers.map((c) => c.container.name) });
  for (const { path, field, message } of suppressions.unmatched) {
    result.notes.push({ severity: 'warning', file: object.source, ...object.position(path), object: objectRef(object), field, message });
  }
  for (const { container, role, path } of containers) {
    const budget = computeBudget(object, defaulted, container, role);
    if (role !== 'init') result.containers.push(budget);
    const ctx: ContainerContext = { object, pod: defaulted, container, role, path, budget, options };
    seen?.(ctx);
    const active: Finding[] = [];
    const accepted: Finding[] = [];
    for (const rule of rules) {
      for (const found of rule.check(ctx)) {
        const finding: Finding = { ...place(rule.id, found.severity ?? rule.severity, found), container: container.name ?? '' };
        const suppression = suppressions.find(finding);
        if (suppression) accepted.push({ ...finding, suppression });
        else active.push(finding);
      }
    }
    // A suppressed finding does not fold the others: the next rule of its group stands in.
    for (const finding of foldFindings(active)) {
      const baselined = options.baseline?.prints.has(fingerprint(finding));
      if (baselined && options.baseline) result.suppressed.push({ ...finding, suppression: { kind: 'external', by: options.baseline.by } });
      else result.findings.push(finding);
    }
    result.suppressed.push(...foldFindings(accepted));
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

function objectRef(object: ManifestObject): ObjectRef {
  return { apiVersion: object.apiVersion, kind: object.kind, namespace: object.namespace, name: object.name };
}

function placer(object: ManifestObject, severities?: ReadonlyMap<string, Severity>): (rule: string, severity: Severity, found: RuleFinding) => Finding {
  const ref = objectRef(object);
  return (rule, severity, found) => {
    const { line, column } = object.position(found.path);
    return { rule, severity: severities?.get(rule) ?? severity, file: object.source, line, column, object: ref, field: formatFieldPath(found.path), message: found.message };
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

/** `spec.containers[0].livenessProbe` → `['spec','containers',0,'livenessProbe']`. */
export function parseFieldPath(field: string): FieldPath {
  const path: (string | number)[] = [];
  for (const [, name, index] of field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (index !== undefined) path.push(Number(index));
    else if (name !== undefined) path.push(name);
  }
  return path;
}

/**
 * gRPC probes take a port number only (KEP-2727 dropped names on purpose); the decoder's
 * "expected an integer" gets the fix spelled out, since Popeye (#570) advises the opposite.
 */
function withFixHint(problem: ManifestProblem): ManifestProblem {
  if (!problem.field || !/\.grpc\.port$/.test(problem.field) || !problem.message.includes('got "')) return problem;
  return { ...problem, message: `${problem.message}: gRPC probes take a port number only (named ports are not supported): use the containerPort the name stands for` };
}
