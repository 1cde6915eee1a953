/**
 * Every rule of `probelet check`, in the order they are listed (`--explain`, SARIF, README):
 * validation first, then one family per file, then the timing rules of `budgets.ts`.
 */
import type { Rule } from '../types.js';
import { handlerRules } from './handlers.js';
import { identicalRules } from './identical.js';
import { lifecycleRules } from './lifecycle.js';
import { portRules } from './ports.js';
import { presenceRules } from './presence.js';
import { securityRules } from './security.js';
import { timingRules } from './timing.js';
import { validationRule } from './validation.js';

export { VALIDATION_RULE_ID } from './validation.js';

/** The rules run per container. */
export const rules: readonly Rule[] = [...portRules, ...identicalRules, ...presenceRules, ...handlerRules, ...securityRules, ...lifecycleRules, ...timingRules];

/** What a rule is, without its check: for `--explain`, `--disable`, SARIF and the README. */
export type RuleInfo = Omit<Rule, 'check'>;

/** Every rule id `check` can report, validation included. */
export const ruleInfos: readonly RuleInfo[] = [validationRule, ...rules];

export function findRule(id: string): RuleInfo | undefined {
  return ruleInfos.find((r) => r.id === id);
}
