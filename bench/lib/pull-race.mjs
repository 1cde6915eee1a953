/**
 * The pull benches' measurement (bench/cri-pull.mjs, bench/docker-pull.mjs): probelet's
 * runtime and the runtime's own CLI pull the same image in turn, round after round, each pull
 * from nothing (`reset` first removes the image), alternating who goes first so neither always
 * meets a warmer cache; then one JSON line and one sentence with the medians and their ratio.
 */

import { parseArgs } from 'node:util';

/**
 * The pull benches' flags, `--rounds N` and `--mb M` (whole numbers ≥ 1), or exit 2 naming the
 * flag that is not one.
 * @param {string} bench  its name, for the message
 * @param {number} rounds  the default rounds
 * @returns {{ rounds: number, mb: number }}
 */
export function pullFlags(bench, rounds) {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: String(rounds) }, mb: { type: 'string', default: '16' } } });
  /** @param {'rounds' | 'mb'} name */
  const whole = (name) => {
    const text = values[name] ?? '';
    if (/^[1-9][0-9]{0,5}$/.test(text)) return Number(text);
    console.error(`${bench} bench: --${name} ${JSON.stringify(text)}: give a whole number, 1 or more`);
    process.exit(2);
  };
  return { rounds: whole('rounds'), mb: whole('mb') };
}

/**
 * @param {{ probelet: () => Promise<unknown>, baseline: () => Promise<unknown> }} pulls
 * @param {{ rounds: number, reset: () => void, close: () => Promise<void> }} run
 *   `reset` removes the image (before each pull, and at the end); `close` ends probelet's runtime
 * @returns {Promise<{ probelet: number[], baseline: number[] }>}  milliseconds, rounded
 */
export async function racePulls(pulls, { rounds, reset, close }) {
  /** @type {{ probelet: number[], baseline: number[] }} */
  const timings = { probelet: [], baseline: [] };
  try {
    for (let round = 0; round < rounds; round++) {
      /** @type {('probelet' | 'baseline')[]} */
      const order = round % 2 === 0 ? ['probelet', 'baseline'] : ['baseline', 'probelet'];
      for (const who of order) {
        reset();
        const start = process.hrtime.bigint();
        await pulls[who]();
        timings[who].push(Math.round(Number(process.hrtime.bigint() - start) / 1e6));
      }
    }
  } finally {
    await close();
    try {
      reset();
    } catch {
      // already gone
    }
  }
  return timings;
}

/** @param {number[]} xs */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/**
 * Prints the JSON line (`<baseline>Ms`, `<baseline>MedianMs` named after the CLI) and the sentence.
 * @param {{ scenario: string, baseline: string, command: string, runtime: string, registry: string, mb: number, rounds: number }} run
 * @param {{ probelet: number[], baseline: number[] }} timings
 */
export function reportPulls(run, timings) {
  const p = median(timings.probelet);
  const b = median(timings.baseline);
  const ratio = Number((p / b).toFixed(2));
  const { scenario, runtime, registry, mb, rounds } = run;
  console.log(
    JSON.stringify({
      scenario,
      runtime,
      registry,
      mb,
      rounds,
      probeletMs: timings.probelet,
      [`${run.baseline}Ms`]: timings.baseline,
      probeletMedianMs: p,
      [`${run.baseline}MedianMs`]: b,
      ratio,
    }),
  );
  console.log(`pull of a ${mb} MiB image from ${registry} (${runtime}), median of ${rounds}: probelet ${p} ms, ${run.command} ${b} ms, ratio ${ratio.toFixed(2)}`);
}
