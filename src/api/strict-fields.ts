/**
 * Strict field validation, as the API server does it (`kubectl apply`'s default
 * `--validate=strict`): a field the object's type does not have is refused, never ignored.
 * Without it `periodSecond: 5` passes and every budget is computed with the default 10 s.
 * The field names come from one generated table (`known-fields.ts`, from the OpenAPI
 * document of the Kubernetes version the cluster is built at); each unknown field is named
 * with its path and the nearest known name ("did you mean periodSeconds?").
 */
import { KNOWN_FIELDS, ROOT_TYPES } from './known-fields.js';
import { describe } from './shape.js';
import { isRecord } from './workloads.js';

/** An unknown field, or a field whose value is not the mapping or list its type needs. */
export interface FieldProblem {
  path: (string | number)[];
  message: string;
}

/** At most this many problems per object: a wrong file fed in whole is named, not listed line by line. */
const MAX_PROBLEMS = 50;

/**
 * Every unknown field of `value`, an object of `kind` (one of `ROOT_TYPES`; other kinds have
 * none here). A `null` is never a problem: it decodes to the Go zero value.
 */
export function unknownFields(kind: string, value: Record<string, unknown>): FieldProblem[] {
  const root = ROOT_TYPES[kind];
  if (root === undefined) return [];
  const found: Found = { problems: [], more: 0 };
  walk(value, root, [], found);
  const { problems, more } = found;
  if (more > 0) problems.push({ path: [], message: `and ${more} more unknown or mistyped field${more === 1 ? '' : 's'}: is this the file you meant?` });
  return problems;
}

/** The first MAX_PROBLEMS problems, and how many more there were. */
interface Found {
  problems: FieldProblem[];
  more: number;
}

function report(found: Found, problem: FieldProblem): void {
  if (found.problems.length < MAX_PROBLEMS) found.problems.push(problem);
  else found.more++;
}

/** `core.v1.Probe` → `Probe`, for messages. */
function typeTitle(type: string): string {
  return type.slice(type.lastIndexOf('.') + 1);
}

function walk(value: Record<string, unknown>, type: string, path: (string | number)[], problems: Found): void {
  const fields = KNOWN_FIELDS[type];
  if (fields === undefined) return;
  for (const key of Object.keys(value)) {
    const child = value[key];
    if (!Object.hasOwn(fields, key)) {
      // Past the limit only counted: no suggestion is looked for.
      const near = problems.problems.length < MAX_PROBLEMS ? nearestName(key, Object.keys(fields)) : undefined;
      const hint = near === undefined ? '' : `: did you mean "${near}"?`;
      report(problems, { path: [...path, key], message: `unknown field "${key}" in ${typeTitle(type)}${hint} (the API server refuses unknown fields: strict decoding error)` });
      continue;
    }
    const holds = fields[key] ?? '';
    if (holds === '' || child === null || child === undefined) continue;
    descend(child, holds, [...path, key], problems);
  }
}

/** Checks `value` against a descriptor of the table: `T`, `[]T` or `{}T`. */
function descend(value: unknown, holds: string, path: (string | number)[], problems: Found): void {
  if (holds.startsWith('[]')) {
    if (!Array.isArray(value)) return report(problems, { path, message: `expected a list, got ${describe(value)}` });
    value.forEach((item, i) => {
      if (item !== null && item !== undefined) descend(item, holds.slice(2), [...path, i], problems);
    });
  } else if (holds.startsWith('{}')) {
    if (!isRecord(value)) return report(problems, { path, message: `expected a mapping, got ${describe(value)}` });
    for (const key of Object.keys(value)) {
      const item = value[key];
      if (item !== null && item !== undefined) descend(item, holds.slice(2), [...path, key], problems);
    }
  } else if (!isRecord(value)) {
    report(problems, { path, message: `expected a mapping (a ${typeTitle(holds)}), got ${describe(value)}` });
  } else {
    walk(value, holds, path, problems);
  }
}

/** Names longer than this get no suggestion: the distance table stays small. */
const MAX_SUGGESTED_LENGTH = 64;

/**
 * The known name nearest to `name`: the same but for case, one that starts with it
 * (`initialDelay` → `initialDelaySeconds`), or the closest within a few edits (a third of
 * the name's length, at most 3). Bounded work per name: `names` is one type's fields.
 */
export function nearestName(name: string, names: readonly string[]): string | undefined {
  if (name.length === 0 || name.length > MAX_SUGGESTED_LENGTH) return undefined;
  const lower = name.toLowerCase();
  const sameCase = names.find((n) => n.toLowerCase() === lower);
  if (sameCase !== undefined) return sameCase;
  const limit = Math.min(3, Math.max(1, Math.floor(name.length / 3)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of names) {
    const d = editDistance(lower, candidate.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  if (best !== undefined) return best;
  if (name.length >= 4) return names.find((n) => n.toLowerCase().startsWith(lower));
  return undefined;
}

/**
 * Optimal string alignment distance (Levenshtein plus swapping two neighbours), or `bound`
 * once it is certain to be at least that: O(|a|·|b|) with both at most 64 characters.
 */
export function editDistance(a: string, b: string, bound: number): number {
  if (Math.abs(a.length - b.length) >= bound) return bound;
  let before: number[] = [];
  let previous: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current: number[] = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] ?? 0) + 1);
      current.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin >= bound) return bound;
    before = previous;
    previous = current;
  }
  return Math.min(previous[b.length] ?? bound, bound);
}

/**
 * js-yaml's `duplicated mapping key` names no key: name it, from where it points (`line`
 * and `column` in the file, the chunk starting at `lineOffset`), as kubectl's YAML reader
 * does (`key "periodSeconds" already set in map`). A repeated `apiVersion` or `kind` at
 * the top is usually two files joined without `---`.
 */
export function duplicateKeyMessage(text: string, line: number, column: number, lineOffset: number): string {
  const lineText = text.split('\n')[line - lineOffset - 1] ?? '';
  const key = keyAt(lineText, column - 1);
  if (key === undefined) return 'duplicated mapping key (a field given twice in one mapping)';
  const joined = column === 1 && (key === 'apiVersion' || key === 'kind') ? '; two documents joined without a `---` line between them?' : '; give each field once';
  return `duplicate field "${key}": key "${key}" already set in map${joined}`;
}

/** The mapping key written at `at` in `line` (quoted or plain, up to its colon). */
function keyAt(line: string, at: number): string | undefined {
  const quote = line[at];
  if (quote === '"' || quote === "'") {
    const end = line.indexOf(quote, at + 1);
    return end > at + 1 ? line.slice(at + 1, end) : undefined;
  }
  const colon = line.indexOf(':', at);
  const key = colon > at ? line.slice(at, colon).trim() : '';
  return key === '' ? undefined : key;
}
