import { describe, expect, it } from 'vitest';
import { expandVars } from '../../src/util/expand.js';

const vars: Record<string, string> = {
  VAR_A: 'A',
  VAR_B: 'B',
  VAR_EMPTY: '',
  VAR_REF: '$(VAR_A)',
  BIG_MONEY: '$',
  'é': 'accent',
  'A B': 'spaced',
};
const lookup = (name: string): string | undefined => (Object.hasOwn(vars, name) ? vars[name] : undefined);

describe('expandVars (Go expansion.Expand)', () => {
  it.each([
    ['', ''],
    ['no references', 'no references'],
    ['$(VAR_A)', 'A'],
    ['___$(VAR_B)___', '___B___'],
    ['$(VAR_A)-$(VAR_A)', 'A-A'],
    ['$(VAR_A)$(VAR_B)', 'AB'],
    ['$(VAR_EMPTY)', ''],
    ['x$(VAR_EMPTY)y', 'xy'],
    // undefined names stay verbatim
    ['$(UNDEFINED)', '$(UNDEFINED)'],
    ['$(VAR_A)$(UNDEFINED)$(VAR_B)', 'A$(UNDEFINED)B'],
    ['$()', '$()'],
    // $$ escapes
    ['$$', '$'],
    ['$$$', '$$'],
    ['$$$$', '$$'],
    ['f000-$$VAR_A', 'f000-$VAR_A'],
    ['$$(VAR_B)_$(VAR_A)', '$(VAR_B)_A'],
    ['$$$(VAR_A)', '$A'],
    ['$$$$$$(BIG_MONEY)', '$$$(BIG_MONEY)'],
    ['$$$$$$$(BIG_MONEY)', '$$$$'],
    // a lone or non-reference $ is kept
    ['$', '$'],
    ['x$', 'x$'],
    ['$VAR_A', '$VAR_A'],
    ['${VAR_A}', '${VAR_A}'],
    ['$HOME/$(VAR_A)', '$HOME/A'],
    ['$é', '$é'],
    // unclosed references are kept, scanning resumes after `$(`
    ['$(', '$('],
    ['$(VAR_A', '$(VAR_A'],
    ['$(x $$', '$(x $'],
    ['$(x $$$', '$(x $$'],
    ['$(VAR_A)$(', 'A$('],
    // a name ends at the first `)`, whatever it contains
    ['$(VAR_A$(VAR_B))', '$(VAR_A$(VAR_B))'],
    ['$(VAR_A $(VAR_B)', '$(VAR_A $(VAR_B)'],
    ['$($(VAR_A)', '$($(VAR_A)'],
    ['$(A B)', 'spaced'],
    ['$(é)', 'accent'],
    ['(VAR_A)', '(VAR_A)'],
    // not recursive
    ['$(VAR_REF)', '$(VAR_A)'],
    ['$(BIG_MONEY)(VAR_A)', '$(VAR_A)'],
  ])('%j → %j', (input, expected) => {
    expect(expandVars(input, lookup)).toBe(expected);
  });

  it('asks the lookup once per reference, with the exact name', () => {
    const asked: string[] = [];
    expandVars('$(a) $(b c) $$(d) $(e', (name) => {
      asked.push(name);
      return undefined;
    });
    expect(asked).toEqual(['a', 'b c']);
  });
});
