/**
 * The three outputs of `probelet check`: text for people, JSON in a fixed shape for
 * scripts, SARIF 2.1.0 for code-scanning UIs. Pure functions of a `CheckResult`.
 */
import type { ManifestProblem, ManifestSkip } from '../api/documents.js';
import { formatBudgetTable } from './budgets.js';
import { VALIDATION_RULE_ID, type RuleInfo } from './rules/index.js';
import type { CheckResult } from './run.js';
import { fingerprint, FINGERPRINT_KEY } from './baseline.js';
import type { ContainerBudget, Finding, InputNote, ObjectRef, Severity, Suppression } from './types.js';

/**
 * The id the input notes carry in SARIF (code scanning wants a rule per result): a
 * suppression annotation that names no rule or no container, and so suppresses nothing.
 */
export const UNMATCHED_SUPPRESSION_ID = 'suppression-unmatched';
const UNMATCHED_SUPPRESSION_SUMMARY = 'A suppression annotation names no rule or no container: it suppresses nothing.';
const UNMATCHED_SUPPRESSION_HELP = `What: a probelet.dev/ignore annotation names a rule id that does not exist (a typo, a rule
renamed), the rule invalid (input problems cannot be suppressed), or, as probelet.dev/ignore.CONTAINER,
a container the pod does not have.
Why: it suppresses nothing — the finding it meant still stands and counts — and a suppression that
silently does nothing is one nobody notices until the finding comes back.
Fix: the id or container name the message suggests; probelet check --rules lists the rule ids.`;

/**
 * What the outputs read: the findings and budgets, and — for a CI gate to see that not all
 * of the input was checked — the input problems and the objects passed over.
 */
export type CheckOutput = Pick<CheckResult, 'findings' | 'containers'> & {
  problems?: readonly ManifestProblem[];
  skipped?: readonly ManifestSkip[];
  /** Files a folder held that were not read, and why. */
  skippedFiles?: readonly SkippedFile[];
  suppressed?: readonly Finding[];
  /** Warnings about the input that change no exit code (see InputNote). */
  notes?: readonly InputNote[];
};

/** A file found in a folder and not read. */
export interface SkippedFile {
  file: string;
  reason: string;
}

/**
 * `check -o json`: exactly these keys, in this order; `null` for an unknown container, an
 * unbounded budget, or what a problem's place does not say. `problems` and `skipped` came
 * after the first two, then `suppressed` and `summary`, each finding's `fingerprint`, then
 * `notes` (added, nothing changed).
 */
export function toJson(result: CheckOutput): string {
  const findingJson = (f: Finding) => ({
    rule: f.rule,
    severity: f.severity,
    file: f.file,
    line: f.line,
    column: f.column,
    object: objectJson(f.object),
    container: f.container ?? null,
    field: f.field,
    message: f.message,
    fingerprint: fingerprint(f),
    template: f.template ?? null,
  });
  const findings = result.findings.map(findingJson);
  const suppressed = (result.suppressed ?? []).map((f) => ({
    ...findingJson(f),
    suppression: { kind: f.suppression?.kind ?? 'inSource', by: f.suppression?.by ?? '', justification: f.suppression?.justification ?? null },
  }));
  const containers = result.containers.map((b) => ({
    file: b.file,
    object: objectJson(b.object),
    container: b.container,
    probes: b.probes,
    startupBudgetSeconds: b.startupBudgetSeconds,
    earliestReadySeconds: b.earliestReadySeconds,
    hangToKillSeconds: b.hangToKillSeconds,
    hangToNotReadySeconds: b.hangToNotReadySeconds,
  }));
  const problems = (result.problems ?? []).map((p) => ({
    file: p.source,
    line: p.line ?? null,
    column: p.column ?? null,
    document: p.document ?? null,
    field: p.field ?? null,
    message: p.message,
  }));
  const skipped = [
    ...(result.skipped ?? []).map((s) => ({ kind: s.kind, name: s.name, file: s.source, line: s.line, reason: 'no pod template' })),
    ...(result.skippedFiles ?? []).map((s) => ({ kind: null, name: null, file: s.file, line: null, reason: s.reason })),
  ];
  const count = (severity: Severity): number => result.findings.filter((f) => f.severity === severity).length;
  const notes = (result.notes ?? []).map((n) => ({
    severity: n.severity,
    file: n.file,
    line: n.line,
    column: n.column,
    object: objectJson(n.object),
    field: n.field,
    message: n.message,
    template: n.template ?? null,
  }));
  const summary = { error: count('error'), warning: count('warning'), info: count('info'), suppressed: suppressed.length, problems: problems.length, notes: notes.length };
  return `${JSON.stringify({ findings, containers, problems, skipped, suppressed, summary, notes }, null, 2)}\n`;
}

function objectJson(o: ObjectRef): ObjectRef {
  return { apiVersion: o.apiVersion, kind: o.kind, namespace: o.namespace, name: o.name };
}

interface ObjectGroup {
  file: string;
  object: ObjectRef;
  findings: Finding[];
  containers: ContainerBudget[];
}

/** Findings and budgets grouped by file, then object, in input order. */
export function groupByObject(result: Pick<CheckResult, 'findings' | 'containers'>): ObjectGroup[] {
  const groups = new Map<string, ObjectGroup>();
  const group = (file: string, object: ObjectRef): ObjectGroup => {
    const key = JSON.stringify([file, object.apiVersion, object.kind, object.namespace, object.name]);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { file, object, findings: [], containers: [] }));
    return g;
  };
  // Budgets first: they come in object order, findings may not (validation before rules).
  for (const b of result.containers) group(b.file, b.object).containers.push(b);
  for (const f of result.findings) group(f.file, f.object).findings.push(f);
  const out = [...groups.values()];
  const fileOrder = new Map<string, number>();
  out.forEach((g) => fileOrder.set(g.file, fileOrder.get(g.file) ?? fileOrder.size));
  out.sort((a, b) => (fileOrder.get(a.file) ?? 0) - (fileOrder.get(b.file) ?? 0));
  for (const g of out) g.findings.sort((a, b) => a.line - b.line || a.column - b.column);
  return out;
}

/** `Deployment default/web`, or `Deployment web` without a namespace. */
export function objectTitle(o: ObjectRef): string {
  return `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name || '(no name)'}`;
}

/** `deploy.yaml:5:5 warning Deployment default/web: metadata.annotations[probelet.dev/ignore]: unknown rule …`, for stderr beside the problems. */
export function noteLine(n: InputNote): string {
  return `${n.file}:${n.line}:${n.column}${n.template ? ` (${n.template})` : ''} ${n.severity} ${objectTitle(n.object)}: ${n.field}: ${n.message}`;
}

export function findingLine(f: Finding): string {
  return `${f.file}:${f.line}:${f.column}${f.template ? ` (${f.template})` : ''} ${f.severity} ${f.rule} ${f.message}`;
}

const indent = (text: string, by: string): string =>
  text
    .split('\n')
    .map((l) => (l === '' ? l : by + l))
    .join('\n');

/**
 * `check -o text`: per file, per object: its findings, then its containers' budget table; a
 * count at the end. Suppressed findings are counted; with `showSuppressed`, listed too.
 */
export function toText(result: Pick<CheckResult, 'findings' | 'containers'> & { suppressed?: readonly Finding[] }, showSuppressed = false): string {
  const lines: string[] = [];
  let file: string | undefined;
  const shown = showSuppressed ? [...result.findings, ...(result.suppressed ?? [])] : result.findings;
  for (const g of groupByObject({ findings: shown, containers: result.containers })) {
    if (g.file !== file) {
      if (file !== undefined) lines.push('');
      lines.push(g.file);
      file = g.file;
    }
    lines.push(`  ${objectTitle(g.object)}`);
    for (const f of g.findings) lines.push(`    ${findingLine(f)}${f.suppression ? ` ${suppressionNote(f.suppression)}` : ''}`);
    const table = formatBudgetTable(g.containers);
    if (table !== '') lines.push(indent(table, '      '));
  }
  const suppressed = result.suppressed ?? [];
  lines.push('', ...ruleCounts(result.findings), summaryLine(result.findings, suppressed.length, showSuppressed));
  return `${lines.join('\n')}\n`;
}

/** `(suppressed by probelet.dev/ignore.web: a batch worker)`. */
function suppressionNote(s: Suppression): string {
  return `(suppressed by ${s.by}${s.justification ? `: ${s.justification}` : ''})`;
}

const RANK: Record<Severity, number> = { error: 3, warning: 2, info: 1 };

/**
 * `by rule:` and one line per rule and severity, `  12  warning  readiness-probe-missing`,
 * worst first, then most frequent: where the findings come from, at a glance. None without findings.
 */
export function ruleCounts(findings: readonly Finding[]): string[] {
  const counts = new Map<string, { rule: string; severity: Severity; n: number }>();
  for (const f of findings) {
    const key = `${f.rule}\0${f.severity}`;
    const c = counts.get(key) ?? { rule: f.rule, severity: f.severity, n: 0 };
    c.n++;
    counts.set(key, c);
  }
  if (counts.size === 0) return [];
  const rows = [...counts.values()].sort((a, b) => RANK[b.severity] - RANK[a.severity] || b.n - a.n || (a.rule < b.rule ? -1 : 1));
  const width = Math.max(...rows.map((r) => String(r.n).length));
  return ['by rule:', ...rows.map((r) => `  ${String(r.n).padStart(width)}  ${r.severity.padEnd(7)}  ${r.rule}`)];
}

export function summaryLine(findings: readonly Finding[], suppressed = 0, shown = false): string {
  const count = (s: Severity): number => findings.filter((f) => f.severity === s).length;
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  const accepted = suppressed > 0 ? `; ${suppressed} suppressed${shown ? '' : ' (--show-suppressed lists them)'}` : '';
  return `${plural(count('error'), 'error')}, ${plural(count('warning'), 'warning')}, ${count('info')} info${accepted}`;
}

const SARIF_LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', info: 'note' };
export const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';

/**
 * SARIF 2.1.0: one run, the rules with their help text in `tool.driver.rules`, one result
 * per finding with its physical location (file relative as given; stdin as `stdin`).
 */
export function toSarif(result: Pick<CheckOutput, 'findings' | 'problems' | 'suppressed' | 'notes'>, rules: readonly RuleInfo[], version: string): string {
  const index = new Map(rules.map((r, i) => [r.id, i]));
  // Input notes: warnings at their place, under their own descriptor after the rules'.
  const notes = (result.notes ?? []).map((n) => ({
    ruleId: UNMATCHED_SUPPRESSION_ID,
    ruleIndex: rules.length,
    level: SARIF_LEVEL[n.severity],
    message: { text: `${n.field}: ${n.message}` },
    locations: [
      {
        physicalLocation: n.template
          ? { artifactLocation: { uri: sarifUri(n.template) }, region: { startLine: 1 } }
          : { artifactLocation: { uri: sarifUri(n.file) }, region: { startLine: n.line, startColumn: n.column } },
        logicalLocations: [{ fullyQualifiedName: `${objectTitle(n.object)}#${n.field}`, kind: 'object' }],
      },
    ],
  }));
  // An input problem is an error of the `invalid` rule at its place: a gate must not see a clean run.
  const problems = (result.problems ?? []).map((p) => ({
    ruleId: VALIDATION_RULE_ID,
    ...(index.has(VALIDATION_RULE_ID) ? { ruleIndex: index.get(VALIDATION_RULE_ID) } : {}),
    level: 'error' as const,
    message: { text: p.field ? `${p.field}: ${p.message}` : p.message },
    locations: [
      {
        physicalLocation: {
          artifactLocation: { uri: sarifUri(p.source) },
          ...(p.line !== undefined ? { region: { startLine: p.line, ...(p.column !== undefined ? { startColumn: p.column } : {}) } } : {}),
        },
      },
    ],
  }));
  const log = {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'probelet',
            version,
            informationUri: 'https://www.npmjs.com/package/probelet',
            rules: [
              ...rules.map((r) => ({
                id: r.id,
                shortDescription: { text: r.summary },
                fullDescription: { text: r.summary },
                help: { text: r.explain },
                defaultConfiguration: { level: SARIF_LEVEL[r.severity] },
                properties: { equivalents: [...(r.equivalents ?? [])] },
              })),
              {
                id: UNMATCHED_SUPPRESSION_ID,
                shortDescription: { text: UNMATCHED_SUPPRESSION_SUMMARY },
                fullDescription: { text: UNMATCHED_SUPPRESSION_SUMMARY },
                help: { text: UNMATCHED_SUPPRESSION_HELP },
                defaultConfiguration: { level: 'warning' },
                properties: { equivalents: [] },
              },
            ],
          },
        },
        results: [...problems, ...notes, ...[...result.findings, ...(result.suppressed ?? [])].map((f) => ({
          ruleId: f.rule,
          ...(index.has(f.rule) ? { ruleIndex: index.get(f.rule) } : {}),
          level: SARIF_LEVEL[f.severity],
          message: { text: f.message },
          // Rendered input: the template is where code scanning annotates; the rendered line comes along.
          locations: [
            {
              physicalLocation: f.template
                ? { artifactLocation: { uri: sarifUri(f.template) }, region: { startLine: 1 } }
                : { artifactLocation: { uri: sarifUri(f.file) }, region: { startLine: f.line, startColumn: f.column } },
              logicalLocations: [{ fullyQualifiedName: `${objectTitle(f.object)}${f.field ? `#${f.field}` : ''}`, kind: 'object' }],
            },
          ],
          ...(f.template
            ? { relatedLocations: [{ id: 1, message: { text: `rendered by ${f.file}, line ${f.line}` }, physicalLocation: { artifactLocation: { uri: 'rendered.yaml', description: { text: f.file } }, region: { startLine: f.line, startColumn: f.column } } }] }
            : {}),
          partialFingerprints: { [FINGERPRINT_KEY]: fingerprint(f) },
          ...(f.suppression
            ? { suppressions: [{ kind: f.suppression.kind, status: 'accepted', justification: f.suppression.justification ?? `suppressed by ${f.suppression.by}`, properties: { by: f.suppression.by } }] }
            : {}),
        }))],
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}

/** A relative URI reference for a path as given (forward slashes, characters escaped). */
function sarifUri(file: string): string {
  if (file === '<stdin>') return 'stdin';
  if (file.startsWith('/')) return `file://${file.split('/').map(encodeURIComponent).join('/')}`;
  return file.split(/[\\/]/).map(encodeURIComponent).join('/');
}
