/**
 * The README's examples stay true, and those of docs/*.md: every ```console block is run — each `$ ` line as a user
 * would type it (`probelet` is the built bin/probelet.js), from the repository root — and its
 * output compared with what follows it in the block; the library snippet is the example file
 * it says it is (and the console block after it runs that file). In an expected output, a line
 * that is only `…` stands for any number of lines, and `…` inside a line for any text.
 * `npm test` builds dist/ first.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

interface Block {
  lang: string;
  body: string;
  line: number;
}

/** The fenced code blocks of a markdown text, with the line each starts on. */
export function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i] ?? '');
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i] ?? '');
    blocks.push({ lang: open[1] ?? '', body: body.join('\n'), line: start + 1 });
  }
  return blocks;
}

/** A console block as commands and the output each is said to print. */
export function sessions(body: string): Array<{ command: string; expected: string[] }> {
  const out: Array<{ command: string; expected: string[] }> = [];
  for (const line of body.split('\n')) {
    if (line.startsWith('$ ')) out.push({ command: line.slice(2), expected: [] });
    else out.at(-1)?.expected.push(line);
  }
  return out;
}

function lineMatches(expected: string, actual: string): boolean {
  if (!expected.includes('…')) return expected === actual;
  const pattern = expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${pattern}$`).test(actual);
}

/** Whether `actual` lines fit `expected` (a lone `…` line skips any number of lines). */
export function outputMatches(expected: readonly string[], actual: readonly string[]): boolean {
  const match = (e: number, a: number): boolean => {
    if (e === expected.length) return a === actual.length;
    const want = expected[e] ?? '';
    if (want === '…') {
      for (let skip = a; skip <= actual.length; skip++) if (match(e + 1, skip)) return true;
      return false;
    }
    return a < actual.length && lineMatches(want, actual[a] ?? '') && match(e + 1, a + 1);
  };
  return match(0, 0);
}

/** Runs a README command line through the shell, `probelet` being the built executable. */
async function runCommand(command: string): Promise<string> {
  const shellLine = command.replace(/^probelet /, `"${process.execPath}" bin/probelet.js `);
  const { stdout } = await promisify(execFile)('/bin/sh', ['-c', shellLine], { cwd: ROOT, timeout: 30_000 }).catch(
    (err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }), // a non-zero exit (a failed probe) still prints
  );
  return stdout;
}

const consoleBlocks = fencedBlocks(README).filter((b) => b.lang === 'console');

/** docs/*.md, by the path a reader sees. */
const DOCS = readdirSync(new URL('../docs/', import.meta.url))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => ({ path: `docs/${name}`, text: readFileSync(new URL(`../docs/${name}`, import.meta.url), 'utf8') }));
const docSessions = DOCS.flatMap((doc) =>
  fencedBlocks(doc.text)
    .filter((b) => b.lang === 'console')
    .flatMap((b) => sessions(b.body).map((s) => ({ ...s, where: `${doc.path}:${b.line}` }))),
);

/** Runs one documented command and compares its output with the block's. */
async function holdsTrue({ command, expected }: { command: string; expected: string[] }): Promise<void> {
  expect(command, 'only probelet and node examples are run').toMatch(/^(probelet|node) /);
  const actual = (await runCommand(command)).replace(/\n$/, '').split('\n');
  const wanted = expected.join('\n').replace(/\n+$/, '').split('\n');
  if (!outputMatches(wanted, actual)) expect(actual.join('\n')).toBe(wanted.join('\n'));
}

describe('README', () => {
  it('has console examples (the test would pass on none)', () => {
    expect(consoleBlocks.length).toBeGreaterThanOrEqual(4);
  });

  it.each(consoleBlocks.flatMap((b) => sessions(b.body).map((s) => ({ ...s, line: b.line }))))(
    'README.md:$line `$command` prints what the README says',
    holdsTrue,
    40_000,
  );

  it('shows examples/library/readiness.mjs as it is', () => {
    const snippet = fencedBlocks(README).find((b) => b.lang === 'js');
    expect(snippet?.body).toBe(readFileSync(new URL('../examples/library/readiness.mjs', import.meta.url), 'utf8').replace(/\n$/, ''));
  });

  it('every relative link points to a file that exists', () => {
    for (const [, target] of README.matchAll(/\]\((?!https?:|#)([^)#\s]+)/g)) {
      expect(existsSync(new URL(`../${target}`, import.meta.url)), target).toBe(true);
    }
  });
});

describe('docs/*.md', () => {
  it('have console examples (the simulate transcript and its sweep at least)', () => {
    expect(docSessions.map((s) => s.command)).toEqual(
      expect.arrayContaining([
        'probelet simulate examples/simulate/deployment.yaml -b api=down:40s,up --for 1m10s',
        expect.stringContaining('--sweep api=25s..40s/1s'),
      ]),
    );
  });

  it.each(docSessions)('$where `$command` prints what the page says', holdsTrue, 40_000);

  it.each(DOCS)('$path: every relative link points to a file that exists', ({ path, text }) => {
    for (const [, target] of text.matchAll(/\]\((?!https?:|#|mailto:)([^)#\s]+)/g)) {
      expect(existsSync(new URL(`../docs/${target}`, import.meta.url)), `${path}: ${target}`).toBe(true);
    }
  });
});

describe('the matcher', () => {
  it('takes … as any text in a line, and a lone … as any number of lines', () => {
    expect(outputMatches(['a', '…', 'z'], ['a', 'b', 'c', 'z'])).toBe(true);
    expect(outputMatches(['a', '…', 'z'], ['a', 'z'])).toBe(true);
    expect(outputMatches(['Took: …'], ['Took: 12ms'])).toBe(true);
    expect(outputMatches(['a', 'z'], ['a', 'b', 'z'])).toBe(false);
    expect(outputMatches(['a', '…'], ['b'])).toBe(false);
  });
});
