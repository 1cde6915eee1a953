/**
 * One finding per container and fact. Some rules state the same fact of a container from
 * different sides — a liveness probe with an initial delay and no startup probe is both
 * `liveness-delay-as-startup` and `startup-probe-missing`; identical liveness and readiness
 * probes are both `probes-identical` and `liveness-before-readiness`; a start-up past the
 * progress deadline because of slow sidecars is also `sidecar-startup-chain` — and printing both
 * teaches people to skim. Each group below lists its rules most specific first: only the
 * first that fires for a container is reported, and its message carries the others' facts.
 * A rule turned off (`--disable`, the ignore annotation) does not run, so the next one of its
 * group stands in. Rule ids never change, so SARIF baselines and suppressions keep working.
 */

/** Groups of rule ids that state one fact of a container, most specific first. */
export const FOLDS: readonly (readonly string[])[] = [
  ['liveness-delay-as-startup', 'startup-probe-missing'],
  ['probes-identical', 'liveness-before-readiness'],
  // The deadline's message adds up the sidecars' startup budgets the chain would list.
  ['startup-exceeds-progress-deadline', 'sidecar-startup-chain'],
];

const GROUP_OF: ReadonlyMap<string, readonly string[]> = new Map(FOLDS.flatMap((group) => group.map((id) => [id, group] as const)));

/** The findings of one container with each group's later rules dropped when an earlier one fired. */
export function foldFindings<T extends { rule: string }>(found: readonly T[]): T[] {
  const fired = new Set(found.map((f) => f.rule));
  return found.filter((f) => {
    const group = GROUP_OF.get(f.rule);
    if (!group) return true;
    return group.find((id) => fired.has(id)) === f.rule;
  });
}

/** The rule ids a finding of `rule` stands for besides its own (for `--rules`). */
export function foldedInto(rule: string): readonly string[] {
  const group = GROUP_OF.get(rule) ?? [];
  return group.slice(group.indexOf(rule) + 1);
}
