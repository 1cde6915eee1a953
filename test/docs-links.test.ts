/**
 * Every relative link in README.md and docs/*.md points at a file that exists (a link in
 * docs/ is relative to docs/: `docs/x.md` from there is docs/docs/x.md, which is not).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The targets of `[text](target)` links that are files of this repository. */
function relativeLinks(markdown: string): string[] {
  const links: string[] = [];
  for (const match of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = (match[1] ?? '').split('#')[0] ?? '';
    if (target === '' || /^[a-z]+:/.test(target)) continue;
    links.push(target);
  }
  return links;
}

describe('links in the docs', () => {
  it.each(FILES)('%s: every relative link resolves', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const broken = relativeLinks(text).filter((target) => !existsSync(join(ROOT, dirname(file), target)));
    expect(broken).toEqual([]);
  });
});
