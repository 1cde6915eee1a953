/** The check reference's rule table (docs/check.md) lists every rule `check` can report, so users can find and switch. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ruleInfos } from '../../src/check/rules/index.js';
import { timingRules } from '../../src/check/rules/timing.js';

const README = readFileSync(new URL('../../docs/check.md', import.meta.url), 'utf8');

describe('docs/check.md', () => {
  it('has a row for every lint rule with its severity (timing rules are in the budgets section)', () => {
    const timing = new Set(timingRules.map((r) => r.id));
    for (const rule of ruleInfos.filter((r) => !timing.has(r.id))) {
      expect(README, rule.id).toContain(`| \`${rule.id}\` | ${rule.severity} |`);
    }
  });
});
