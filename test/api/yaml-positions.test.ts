/**
 * The line walker that finds field positions without parsing must agree with js-yaml's
 * own positions wherever it answers: every path of every object of every fixture manifest.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { blockPosition, prepareLines } from '../../src/api/yaml-positions.js';
import { listenerIndex, splitDocuments, type FieldPath } from '../../src/api/yaml.js';
import yaml from 'js-yaml';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.ya?ml$/.test(name) ? [path] : [];
  });
}

function paths(value: unknown, prefix: FieldPath, out: FieldPath[]): FieldPath[] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...prefix, i], out));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) paths(v, [...prefix, k], out);
  return out;
}

describe('blockPosition', () => {
  it('agrees with the js-yaml listener on every field of every fixture manifest', () => {
    let answered = 0;
    let compared = 0;
    const texts = files(FIXTURES).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return [[file, text], [`${file} (CRLF)`, text.replace(/\r?\n/g, '\r\n')]];
    });
    for (const [file, text] of texts) {
      for (const chunk of splitDocuments(text ?? '')) {
        let value: unknown;
        try {
          value = yaml.load(chunk.text);
        } catch {
          continue;
        }
        const lines = prepareLines(chunk.text);
        if (!lines || value === null || typeof value !== 'object') continue;
        const slow = listenerIndex(chunk);
        for (const path of paths(value, [], [])) {
          compared++;
          const fast = blockPosition(lines, path);
          if (!fast) continue;
          answered++;
          const s = slow(path);
          expect({ file, path, line: fast.line + chunk.lineOffset + 1, column: fast.column + 1 }).toEqual({ file, path, ...s });
        }
      }
    }
    expect(compared).toBeGreaterThan(500);
    expect(answered / compared).toBeGreaterThan(0.9);
  });

  it('gives up on what it does not read: anchors, merge keys, a JSON root, absent fields', () => {
    expect(prepareLines('a: &x { b: 1 }\nc: *x\n')).toBeUndefined();
    expect(prepareLines('a:\n  <<: {b: 1}\n')).toBeUndefined();
    expect(prepareLines('{"a": 1}\n')).toBeUndefined();
    const lines = prepareLines('spec:\n  containers:\n  - name: a\n    image: x\n');
    expect(lines && blockPosition(lines, ['spec', 'containers', 0, 'ports'])).toBeUndefined();
    expect(lines && blockPosition(lines, ['spec', 'containers', 0, 'image'])).toEqual({ line: 3, column: 4 });
    expect(lines && blockPosition(lines, ['spec', 'containers', 1])).toBeUndefined();
    const list = prepareLines('  - a\n  - b\n');
    expect(list && blockPosition(list, [])).toEqual({ line: 0, column: 2 });
  });

  it('reads one level into a one-line flow mapping', () => {
    const lines = prepareLines('probe:\n  httpGet: { path: /x, port: http }\n');
    expect(lines && blockPosition(lines, ['probe', 'httpGet', 'port'])).toEqual({ line: 1, column: 23 });
    expect(lines && blockPosition(lines, ['probe', 'httpGet', 'scheme'])).toBeUndefined();
  });
});
