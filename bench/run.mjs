#!/usr/bin/env node
/**
 * `npm run bench -- [options]` (see lib/options.mjs): N probe workers against a target,
 * probelet's real ProbeManager and, with --baseline, the least code that probes the same
 * way. Each run is a fresh child process (bench/load.mjs) so heap, RSS and children's CPU
 * are its own; the target, unless --target is given, is another process so its CPU is not
 * counted. Prints one JSON line per run, then a table, then the ratio line.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { USAGE, parseOptions, parseTarget, scenarioOf } from './lib/options.mjs';
import { ratioLine, table } from './lib/report.mjs';
import { recorderCostReport, takeRecorderCostFlag } from './lib/recorder-cost.mjs';
import { nodeSummary, runNodeScenario } from './scenario-node.mjs';

/** @typedef {import('./lib/options.mjs').BenchOptions} BenchOptions */
/** @typedef {import('./lib/options.mjs').Target} Target */

const here = (/** @type {string} */ path) => fileURLToPath(new URL(path, import.meta.url));
const PROFILE_DIR = here('./profiles/');

/**
 * Starts a child and resolves with its first JSON line (`{…}`) and the `#window` line
 * before it, if any; the child is killed (by its pid, through this handle) if no JSON line
 * comes within `limitMs`.
 * @param {string} label  for messages
 * @param {string[]} args  node arguments
 * @param {number} limitMs
 * @param {boolean} keepStdin  true: stdin stays a pipe (the target exits when it closes)
 */
function startChild(label, args, limitMs, keepStdin) {
  const child = spawn(process.execPath, args, { stdio: [keepStdin ? 'pipe' : 'ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  /** @type {Promise<{ json: string, window: number[] | undefined }>} */
  const answer = new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${label} gave no answer within ${limitMs / 1000} s`));
    }, limitMs);
    /** @type {number[] | undefined} */
    let window;
    createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stdout) }).on('line', (line) => {
      if (line.startsWith('#window ')) window = JSON.parse(line.slice('#window '.length));
      if (!line.startsWith('{')) return;
      clearTimeout(timer);
      resolve({ json: line, window });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code} before answering`));
    });
  });
  return { child, exited, answer };
}

/**
 * Records the measured window (monotonic µs, the profile's own clock) in the profile as
 * `benchWindowUs`, for profile-summary.mjs; DevTools ignores the extra field.
 * @param {string} path
 * @param {number[]} window
 */
function stampProfile(path, window) {
  try {
    const profile = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...profile, benchWindowUs: window }));
  } catch (err) {
    process.stderr.write(`bench: could not mark the window in ${path}: ${String(err)}\n`);
  }
}

/**
 * @param {BenchOptions} o
 * @returns {Promise<{ target: Target, stop: () => Promise<void> }>}
 */
async function startTarget(o) {
  const idleTarget = { host: '127.0.0.1', port: 9, path: '/healthz', scheme: /** @type {const} */ ('HTTP') };
  if (o.idle || o.handler === 'exec') return { target: idleTarget, stop: async () => undefined };
  if (o.target !== undefined) return { target: parseTarget(o.handler, o.target), stop: async () => undefined };
  const maxSeconds = (o.warmupS + o.durationS + 120) * (o.baseline ? 2 : 1);
  const { child, exited, answer } = startChild('target', [here('./target.mjs'), o.handler, String(maxSeconds)], 15_000, true);
  const { port } = /** @type {{ port: number }} */ (JSON.parse((await answer).json));
  return {
    target: { host: '127.0.0.1', port, path: '/healthz', scheme: 'HTTP' },
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * @param {'probelet' | 'baseline'} impl
 * @param {BenchOptions} o
 * @param {Target} target
 * @returns {Promise<Record<string, unknown>>}
 */
async function runOnce(impl, o, target) {
  const flags = ['--expose-gc'];
  const profile = `${PROFILE_DIR}${impl}-${o.idle ? 'idle' : o.handler}-${Date.now()}.cpuprofile`;
  if (o.cpuProf) {
    mkdirSync(PROFILE_DIR, { recursive: true });
    flags.push('--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${basename(profile)}`);
  }
  const config = JSON.stringify({ impl, options: o, target });
  const limitMs = (o.warmupS + o.durationS + 120) * 1000;
  const { exited, answer } = startChild(`${impl} run`, [...flags, here('./load.mjs'), config], limitMs, false);
  const { json, window } = await answer;
  await exited; // the profile is written on exit
  process.stdout.write(`${json}\n`);
  if (o.cpuProf && window !== undefined) {
    stampProfile(profile, window);
    process.stderr.write(`bench: ${impl} profile: ${relative(process.cwd(), profile)}\n`);
  }
  return /** @type {Record<string, unknown>} */ (JSON.parse(json));
}

async function main() {
  const argv = process.argv.slice(2);
  // Scenarios of their own (not N workers against a target): see their files.
  if (argv[0] === '--pods') return (await import('./pods.mjs')).benchPods(argv.slice(1));
  if (argv[0] === '--soak') return (await import('./soak.mjs')).benchSoak(argv.slice(1));
  // `--scenario check|simulate`: benches of their own (bench/check.mjs, bench/simulate.mjs), own processes.
  let scenario;
  try {
    scenario = scenarioOf(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return 2;
  }
  if (scenario !== undefined) return runScenario(scenario, process.argv.slice(2));
  let o;
  const { recorderCost, rest } = takeRecorderCostFlag(argv);
  try {
    o = parseOptions(rest);
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return 2;
  }
  if (!existsSync(here('../dist/index.js'))) {
    process.stderr.write('bench: dist/ is missing: run `npm run build` first\n');
    return 2;
  }
  if (o.scenario === 'node') {
    process.stdout.write(`\n${nodeSummary(await runNodeScenario(o))}\n`);
    return 0;
  }
  const { target, stop } = await startTarget(o);
  /** @type {Record<string, unknown>[]} */
  const runs = [];
  try {
    if (recorderCost) {
      // The flight recorder off (as the baseline), then on: see lib/recorder-cost.mjs.
      runs.push(await runOnce('probelet', { ...o, flightRecorder: false }, target));
      runs.push(await runOnce('probelet', o, target));
    } else {
      runs.push(await runOnce('probelet', o, target));
      if (o.baseline) runs.push(await runOnce('baseline', o, target));
    }
  } finally {
    await stop();
  }
  if (recorderCost && runs[0] !== undefined && runs[1] !== undefined) {
    process.stdout.write(`\n${recorderCostReport(runs[0], runs[1])}\n(measured on this machine now; compare runs from one invocation only)\n`);
    return 0;
  }
  process.stdout.write(`\n${table(runs)}\n`);
  const ratio = ratioLine(runs);
  if (ratio !== undefined) process.stdout.write(`${ratio}\n`);
  process.stdout.write('(measured on this machine now; compare runs from one invocation only)\n');
  return 0;
}

/**
 * @param {string} name
 * @param {string[]} argv  all arguments; `--scenario NAME` is dropped, the rest go to the scenario
 */
async function runScenario(name, argv) {
  const at = argv.findIndex((a) => a === '--scenario' || a.startsWith('--scenario='));
  const rest = argv.filter((_, i) => i !== at && !(argv[at] === '--scenario' && i === at + 1));
  if (!existsSync(here('../dist/index.js'))) {
    process.stderr.write('bench: dist/ is missing: run `npm run build` first\n');
    return 2;
  }
  const child = spawn(process.execPath, [here(`./${name}.mjs`), ...rest], { stdio: ['ignore', 'inherit', 'inherit'] });
  const [code] = /** @type {[number | null]} */ (await new Promise((resolve) => child.once('exit', (...args) => resolve(args))));
  return code ?? 1;
}

// Piped into `head`: stop quietly.
process.stdout.on('error', () => process.exit(0));
process.exitCode = await main();
