/**
 * Suppressions written in the manifest: findings a team has looked at and accepted. They are
 * never dropped silently — a suppressed finding is counted, listed with `--show-suppressed`,
 * and written to SARIF with its `suppressions` — and they read the annotations other linters'
 * users already write where those mean the same check (kube-linter, Checkov).
 */
import type { FieldPath, ManifestObject } from '../api/documents.js';
import { formatFieldPath } from '../api/shape.js';
import { nearestName } from '../api/strict-fields.js';
import { isRecord } from '../api/workloads.js';
import { VALIDATION_RULE_ID } from './rules/validation.js';
import type { Finding, Suppression } from './types.js';

/** `probelet.dev/ignore: rule-a,rule-b[; reason]` on the object or its pod template; `.CONTAINER` for one container. */
export const IGNORE_ANNOTATION = 'probelet.dev/ignore';
/** kube-linter's `ignore-check.kube-linter.io/<check>: reason`. */
const KUBE_LINTER_PREFIX = 'ignore-check.kube-linter.io/';
/** Checkov's `checkov.io/skipN: CKV_K8S_8=reason`. */
const CHECKOV_PREFIX = 'checkov.io/skip';

/** One rule (or, for another linter's check, the probe its check is about) that a suppression covers. */
interface Covered {
  rule: string;
  /** Only findings about this probe field (`livenessProbe`), for checks that are per probe. */
  probe?: string;
}

/**
 * Another linter's checks that mean the same as a probelet rule. kube-linter's
 * `liveness-port` is `probe-port-unresolved` / `probe-port-undeclared` for the liveness
 * probe only; Checkov's CKV_K8S_8/9 are the liveness/readiness presence checks.
 */
export const FOREIGN_CHECKS: Readonly<Record<string, readonly Covered[]>> = {
  'kube-linter no-liveness-probe': [{ rule: 'liveness-probe-missing' }],
  'kube-linter no-readiness-probe': [{ rule: 'readiness-probe-missing' }],
  'kube-linter liveness-port': [{ rule: 'probe-port-unresolved', probe: 'livenessProbe' }, { rule: 'probe-port-undeclared', probe: 'livenessProbe' }],
  'kube-linter readiness-port': [{ rule: 'probe-port-unresolved', probe: 'readinessProbe' }, { rule: 'probe-port-undeclared', probe: 'readinessProbe' }],
  'kube-linter startup-port': [{ rule: 'probe-port-unresolved', probe: 'startupProbe' }, { rule: 'probe-port-undeclared', probe: 'startupProbe' }],
  'checkov CKV_K8S_8': [{ rule: 'liveness-probe-missing' }],
  'checkov CKV_K8S_9': [{ rule: 'readiness-probe-missing' }],
};

/**
 * A rule that stands for several others: `probes-missing` is what liveness-probe-missing and
 * readiness-probe-missing say together, so it is suppressed where both are.
 */
const STANDS_FOR: Readonly<Record<string, readonly string[]>> = {
  'probes-missing': ['liveness-probe-missing', 'readiness-probe-missing'],
};

interface Entry extends Covered {
  /** A container name, or undefined for every container of the object. */
  container?: string;
  suppression: Suppression;
}

/** The suppressions of one object: which of its findings each annotation covers. */
export interface Suppressions {
  /** The suppression covering `finding`, if any. */
  find(finding: Pick<Finding, 'rule' | 'container' | 'field'>): Suppression | undefined;
  /** probelet's annotations that name a rule or a container that does not exist: they suppress nothing, and must not pass unseen. */
  unmatched: UnmatchedSuppression[];
}

/** A `probelet.dev/ignore…` annotation naming no rule or no container of the pod. */
export interface UnmatchedSuppression {
  /** The annotation inside the object (`['metadata','annotations','probelet.dev/ignore']`). */
  path: FieldPath;
  /** The same as upstream's field paths print a map key: `metadata.annotations[probelet.dev/ignore]`. */
  field: string;
  message: string;
}

/** What the annotations are checked against: every rule id, and the names of the pod's containers. */
export interface KnownNames {
  rules: readonly string[];
  containers: readonly string[];
}

/** Reads every suppression annotation of `object` (its metadata and its pod template's). */
export function suppressionsOf(object: ManifestObject, templatePath: FieldPath, known: KnownNames): Suppressions {
  const entries: Entry[] = [];
  const unmatched: UnmatchedSuppression[] = [];
  const read = (meta: unknown, metaPath: FieldPath): void => {
    if (!isRecord(meta) || !isRecord(meta['annotations'])) return;
    for (const [key, value] of Object.entries(meta['annotations'])) {
      if (typeof value !== 'string') continue;
      if (key === IGNORE_ANNOTATION || key.startsWith(`${IGNORE_ANNOTATION}.`)) {
        const container = key === IGNORE_ANNOTATION ? undefined : key.slice(IGNORE_ANNOTATION.length + 1);
        const semicolon = value.indexOf(';');
        const ids = (semicolon < 0 ? value : value.slice(0, semicolon)).split(',').map((id) => id.trim()).filter((id) => id !== '');
        const justification = semicolon < 0 ? undefined : value.slice(semicolon + 1).trim() || undefined;
        const at = { path: [...metaPath, 'annotations', key], field: `${formatFieldPath([...metaPath, 'annotations'])}[${key}]` };
        if (container !== undefined && !known.containers.includes(container)) {
          unmatched.push({ ...at, message: `no container ${JSON.stringify(container)} in this pod${didYouMean(container, known.containers)}: it suppresses nothing (the pod's containers: ${known.containers.join(', ')})` });
        }
        for (const rule of ids) {
          if (rule === VALIDATION_RULE_ID) {
            unmatched.push({ ...at, message: `${JSON.stringify(rule)} cannot be suppressed (an object the API server refuses is an input problem): it suppresses nothing` });
          } else if (!known.rules.includes(rule)) {
            unmatched.push({ ...at, message: `unknown rule ${JSON.stringify(rule)}${didYouMean(rule, known.rules)}: it suppresses nothing (probelet check --rules lists the rules)` });
          }
          entries.push({ rule, ...(container !== undefined ? { container } : {}), suppression: { kind: 'inSource', by: key, ...(justification ? { justification } : {}) } });
        }
      } else if (key.startsWith(KUBE_LINTER_PREFIX)) {
        foreign(`kube-linter ${key.slice(KUBE_LINTER_PREFIX.length)}`, key, value.trim());
      } else if (key.startsWith(CHECKOV_PREFIX) && /^\d*$/.test(key.slice(CHECKOV_PREFIX.length))) {
        const eq = value.indexOf('=');
        foreign(`checkov ${(eq < 0 ? value : value.slice(0, eq)).trim()}`, key, eq < 0 ? '' : value.slice(eq + 1).trim());
      }
    }
  };
  const foreign = (check: string, by: string, justification: string): void => {
    for (const covered of FOREIGN_CHECKS[check] ?? []) {
      entries.push({ ...covered, suppression: { kind: 'inSource', by, ...(justification ? { justification } : {}) } });
    }
  };
  read(object.value['metadata'], ['metadata']);
  if (templatePath.length > 0) {
    let template: unknown = object.value;
    for (const key of templatePath) template = isRecord(template) ? template[key] : undefined;
    if (isRecord(template)) read(template['metadata'], [...templatePath, 'metadata']);
  }
  const match = (rule: string, finding: Pick<Finding, 'container' | 'field'>): Entry | undefined =>
    entries.find((e) => e.rule === rule && (e.container === undefined || e.container === finding.container) && (e.probe === undefined || finding.field.includes(`.${e.probe}`)));
  return {
    unmatched,
    find: (finding) => {
      const direct = match(finding.rule, finding);
      if (direct) return direct.suppression;
      const parts = STANDS_FOR[finding.rule];
      if (!parts) return undefined;
      const each = parts.map((rule) => match(rule, finding));
      return each.every((e) => e !== undefined) ? each[0]?.suppression : undefined;
    },
  };
}

/** ` (did you mean "readiness-probe-missing"?)`, or nothing when no known name is near. */
function didYouMean(name: string, known: readonly string[]): string {
  const near = nearestName(name, known);
  return near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}?)`;
}
