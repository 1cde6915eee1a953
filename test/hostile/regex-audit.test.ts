/**
 * Every regular expression in src/ is checked for super-linear backtracking by `recheck`
 * (a ReDoS checker: automaton analysis, fuzzing where that cannot decide). One comment
 * banner once hung every command (`/^(?:\s|#[^\n]*)*$/`, issue 21): a pattern that
 * backtracks on some input is a denial of service as soon as it meets that input.
 *
 * Literals are checked as written. A `new RegExp(...)` is checked with its template resolved
 * from the file's string constants; a substitution that cannot be resolved must be listed in
 * {@link ESCAPED_SUBSTITUTIONS} with why it can only hold literal text.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { checkSync } from 'recheck';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', '..', 'src');

/** Dynamic patterns whose unresolved parts are escaped user text (a literal), by file. */
const ESCAPED_SUBSTITUTIONS: Record<string, string> = {
  'api/yaml-positions.ts': 'the key name, every metacharacter escaped before it is put in the pattern',
};

interface Found {
  where: string;
  source: string;
  flags: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(?:ts|mts|mjs|js)$/.test(name) ? [path] : [];
  });
}

/** The string value of a constant expression, resolving `const` names of the same file; undefined when it is not constant. */
function constantText(node: ts.Expression, consts: Map<string, ts.Expression>, unresolved: string[]): string | undefined {
  if (ts.isStringLiteralLike(node)) return node.text;
  if (ts.isParenthesizedExpression(node)) return constantText(node.expression, consts, unresolved);
  if (ts.isIdentifier(node)) {
    const init = consts.get(node.text);
    return init === undefined ? undefined : constantText(init, consts, unresolved);
  }
  if (ts.isTemplateExpression(node)) {
    let text = node.head.text;
    for (const span of node.templateSpans) {
      const part = constantText(span.expression, consts, unresolved);
      if (part === undefined) unresolved.push(span.expression.getText());
      // An escaped substitution is a literal: a word stands for it.
      text += (part ?? 'key') + span.literal.text;
    }
    return text;
  }
  return undefined;
}

function regexesIn(path: string): { found: Found[]; problems: string[] } {
  const file = relative(SRC, path);
  const sf = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const consts = new Map<string, ts.Expression>();
  const found: Found[] = [];
  const problems: string[] = [];
  const at = (node: ts.Node): string => `src/${file}:${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const collect = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && (ts.getCombinedNodeFlags(node) & ts.NodeFlags.Const) !== 0) {
      consts.set(node.name.text, node.initializer);
    }
    ts.forEachChild(node, collect);
  };
  collect(sf);
  const visit = (node: ts.Node): void => {
    if (ts.isRegularExpressionLiteral(node)) {
      const slash = node.text.lastIndexOf('/');
      found.push({ where: at(node), source: node.text.slice(1, slash), flags: node.text.slice(slash + 1) });
    } else if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && node.expression.getText() === 'RegExp') {
      const [pattern, flags] = node.arguments ?? [];
      const unresolved: string[] = [];
      const source = pattern === undefined ? undefined : constantText(pattern, consts, unresolved);
      const flagText = flags === undefined ? '' : constantText(flags, consts, unresolved);
      if (source === undefined || flagText === undefined) problems.push(`${at(node)}: a RegExp built from something other than constant text: ${node.getText()}`);
      else if (unresolved.length > 0 && ESCAPED_SUBSTITUTIONS[file] === undefined) problems.push(`${at(node)}: substitutions ${unresolved.join(', ')} not known to be escaped`);
      else found.push({ where: at(node), source, flags: flagText });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { found, problems };
}

const all = sourceFiles(SRC).map(regexesIn);
const found = all.flatMap((r) => r.found);

describe('regular expressions in src/', () => {
  it('are all found (literals and RegExp built from constants)', () => {
    expect(all.flatMap((r) => r.problems)).toEqual([]);
    expect(found.length).toBeGreaterThan(50);
  });

  it('none backtracks super-linearly (recheck)', () => {
    const unsafe = found.flatMap(({ where, source, flags }) => {
      const diagnostics = checkSync(source, flags, { timeout: 20_000 });
      if (diagnostics.status === 'safe') return [];
      const detail = diagnostics.status === 'vulnerable' ? `${diagnostics.complexity.type}, attack ${JSON.stringify(diagnostics.attack.pattern)}` : diagnostics.status;
      return [`${where}: /${source}/${flags}: ${detail}`];
    });
    expect(unsafe).toEqual([]);
  }, 120_000);

  it('the checker tells a backtracking pattern (the one issue 21 found)', () => {
    expect(checkSync('^(?:\\s|#[^\\n]*)*$', '').status).toBe('vulnerable');
  });
});
