/**
 * Long runs of each character YAML treats specially, with LF and with CRLF line ends, fed to
 * the manifest loader: the time it takes must grow linearly with the input. Proved by ratios,
 * not by a wall-clock limit: time(2n) / time(n) is about 2 for linear work, 4 for quadratic
 * and far more for exponential. The sizes double from small ones, so an exponential pattern
 * (the `#` banner of issue 21, 40 s at 30 characters) is caught at 16 characters, before it
 * could hang the test.
 */
import { describe, expect, it } from 'vitest';
import { parseManifestDocuments } from '../../src/api/documents.js';

const SPECIAL = ['#', '-', ':', '%', '&', '*', '!', '|', '>', "'", '"', '{', '}', '[', ']', ',', '?', '@', '`', '.', '\\', '<', '=', '~', ' ', '\t', '\r', 'a', '0'];
const EOLS = { LF: '\n', CRLF: '\r\n' } as const;

const pod = (eol: string): string =>
  ['apiVersion: v1', 'kind: Pod', 'metadata: {name: p}', 'spec:', '  containers:', '    - name: app', '      command: [sleep, "1"]', ''].join(eol);

/** Shapes of a run of `n` characters `c` around a good document. */
const SHAPES: Record<string, (c: string, n: number, eol: string) => string> = {
  'one long line, then ---': (c, n, eol) => `${c.repeat(n)}${eol}---${eol}${pod(eol)}`,
  'n lines of it, then ---': (c, n, eol) => `${`${c}${eol}`.repeat(n)}---${eol}${pod(eol)}`,
  'a comment of it above content': (c, n, eol) => `#${c.repeat(n)}${eol}${pod(eol)}`,
  'a value of it': (c, n, eol) => `${pod(eol)}      args: [${c.repeat(n)}]${eol}`,
  'after a directive': (c, n, eol) => `%YAML 1.2${eol}${`#${c}${eol}`.repeat(n)}---${eol}${pod(eol)}`,
};

/** The loader's work on one input: decode, and look a field up (positions are lazy). */
function load(text: string): void {
  for (const object of parseManifestDocuments(text, 'f.yaml').objects) object.position(['spec', 'containers', 0, 'args', 0]);
}

/** Milliseconds for one load of `text`: the least of `trials` trials, each repeated until it lasts 1 ms. */
function timeOf(text: string, trials = 3): number {
  let best = Infinity;
  for (let trial = 0; trial < trials; trial++) {
    let reps = 0;
    const start = performance.now();
    let elapsed = 0;
    do {
      load(text);
      reps++;
      elapsed = performance.now() - start;
    } while (elapsed < 1);
    best = Math.min(best, elapsed / reps);
  }
  return best;
}

/** time(n)/time(n/2) measured again, n/2 and n in turn, the least of each: one garbage collection does not decide. */
function confirmedRatio(input: (n: number) => string, n: number): number {
  let small = Infinity;
  let big = Infinity;
  for (let i = 0; i < 5; i++) {
    small = Math.min(small, timeOf(input(n / 2), 1));
    big = Math.min(big, timeOf(input(n), 1));
  }
  return big / small;
}

/**
 * Doubles n from 8 until one load takes `enoughMs`. A doubling that costs more than 3 times
 * (confirmed by measuring again) is the verdict when it explodes (more than 20: exponential,
 * and the next doubling could take hours) or when the next doubling does it too (quadratic:
 * 4 and 4; a garbage-collection threshold crossed once is not a trend). Returns the ratio
 * that decided, 0 when there was none.
 */
function growth(input: (n: number) => string, enoughMs = 1.5, maxN = 1 << 18): { n: number; ratio: number } {
  let previous = timeOf(input(4));
  let suspicious = false;
  for (let n = 8; n <= maxN; n *= 2) {
    const t = timeOf(input(n));
    let ratio = t / previous;
    if (ratio > 3 && t > 0.2) ratio = confirmedRatio(input, n);
    if (ratio > 3 && t > 0.2) {
      if (ratio > 20 || suspicious) return { n, ratio };
      suspicious = true;
    } else {
      if (t >= enoughMs) return { n, ratio };
      suspicious = false;
    }
    previous = t;
  }
  return { n: maxN, ratio: 0 };
}

describe('the manifest loader is linear in runs of special characters', () => {
  for (const [shape, make] of Object.entries(SHAPES)) {
    for (const [eolName, eol] of Object.entries(EOLS)) {
      it(`${shape} (${eolName})`, () => {
        const worst: string[] = [];
        for (const c of SPECIAL) {
          // Linear: about 2; quadratic: 4.
          // A verdict of super-linear is taken only when a second, independent run gives it too:
          // a machine busy with other work slows one run's larger sizes, not both runs'.
          const input = (size: number): string => make(c, size, eol);
          let { n, ratio } = growth(input);
          if (ratio > 3) ({ n, ratio } = growth(input));
          if (ratio > 3) worst.push(`${JSON.stringify(c)}: time(${n})/time(${n / 2}) = ${ratio.toFixed(1)}`);
        }
        expect(worst).toEqual([]);
      }, 120_000);
    }
  }
});
