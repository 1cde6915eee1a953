/**
 * A baseline: the findings a team accepted when it adopted `check`, so only new ones fail
 * a CI job. Findings are keyed by a fingerprint of what they are about — rule, object,
 * container, field — never by line numbers (an edit above a finding must not make it
 * "new"), nor by file (a manifest moved to another folder keeps its findings). The same
 * fingerprint is SARIF's `partialFingerprints`, so code scanning tracks findings the same way.
 */
import { createHash } from 'node:crypto';
import type { Finding } from './types.js';

/** The key of the fingerprint in SARIF's `partialFingerprints`. */
export const FINGERPRINT_KEY = 'probelet/v1';

const BASELINE_VERSION = 1;

/**
 * The fingerprint of a finding: a container's index in its list is replaced by its name,
 * so reordering containers keeps it.
 */
export function fingerprint(finding: Pick<Finding, 'rule' | 'object' | 'container' | 'field'>): string {
  const { object } = finding;
  const field = finding.container ? finding.field.replace(/(containers|initContainers|ephemeralContainers)\[\d+\]/, `$1[${finding.container}]`) : finding.field;
  const key = [finding.rule, object.apiVersion.split('/')[0] ?? '', object.kind, object.namespace, object.name, finding.container ?? '', field].join('\n');
  return createHash('sha256').update(key).digest('hex').slice(0, 32);
}

/** One accepted finding: the fingerprint, and what it was for a person reading the file. */
export interface BaselineEntry {
  fingerprint: string;
  rule: string;
  object: string;
  container: string | null;
  field: string;
}

/** The baseline file's text for `findings` (sorted, so that writing it again changes nothing when nothing changed). */
export function baselineText(findings: readonly Finding[]): string {
  const entries = new Map<string, BaselineEntry>();
  for (const f of findings) {
    const print = fingerprint(f);
    const object = `${f.object.kind} ${f.object.namespace ? `${f.object.namespace}/` : ''}${f.object.name}`;
    entries.set(print, { fingerprint: print, rule: f.rule, object, container: f.container ?? null, field: f.field });
  }
  const sorted = [...entries.values()].sort((a, b) => (a.object + a.rule + a.field < b.object + b.rule + b.field ? -1 : 1));
  return `${JSON.stringify({ version: BASELINE_VERSION, tool: 'probelet check', findings: sorted }, null, 2)}\n`;
}

/** The fingerprints of a baseline file's text; throws an Error saying what is wrong with it. */
export function parseBaseline(text: string): Set<string> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(`not JSON (${err instanceof Error ? err.message : String(err)}): write it with --write-baseline`);
  }
  const findings = (data as { findings?: unknown } | null)?.findings;
  const version = (data as { version?: unknown } | null)?.version;
  if (version !== BASELINE_VERSION || !Array.isArray(findings)) {
    throw new Error(`not a probelet baseline (expected {"version": ${BASELINE_VERSION}, "findings": [...]}): write it with --write-baseline`);
  }
  const prints = new Set<string>();
  findings.forEach((entry, i) => {
    const print = (entry as { fingerprint?: unknown } | null)?.fingerprint;
    if (typeof print !== 'string' || print === '') throw new Error(`findings[${i}]: no fingerprint`);
    prints.add(print);
  });
  return prints;
}
