#!/usr/bin/env node
/**
 * One benchmark run in a process of its own (started by run.mjs), so that every
 * implementation starts from a fresh heap and RSS and children's CPU is its own.
 * Argument: JSON `{ impl, options, target }`. Prints the run's JSON line on stdout, preceded
 * when profiling by `#window [startUs,endUs]` (the measured window on the monotonic clock,
 * which run.mjs stores in the profile for profile-summary.mjs).
 */
import { baselineLoad } from './lib/baseline-load.mjs';
import { busyRun } from './lib/busy-run.mjs';
import { idleRun } from './lib/idle-run.mjs';
import { probeletLoad } from './lib/probelet-load.mjs';

/**
 * @typedef {object} LoadConfig
 * @property {'probelet' | 'baseline'} impl
 * @property {import('./lib/options.mjs').BenchOptions} options
 * @property {import('./lib/options.mjs').Target} target
 */

const config = /** @type {LoadConfig} */ (JSON.parse(process.argv[2] ?? '{}'));
const { impl, options, target } = config;

// Everything stops by itself: a run that hangs is killed well after it should have ended.
const limitMs = (options.warmupS + options.durationS + 90) * 1000;
setTimeout(() => {
  process.stderr.write(`bench load: ${impl} still running after ${limitMs / 1000} s, giving up\n`);
  process.exit(3);
}, limitMs).unref();

const factory = impl === 'probelet' ? probeletLoad : baselineLoad;
const { result, windowUs } = await (options.idle ? idleRun : busyRun)(impl, options, target, factory);
const windowLine = options.cpuProf ? `#window ${JSON.stringify(windowUs)}\n` : '';
// Exit explicitly (grpc-js may keep handles a while); the CPU profile is still written.
process.stdout.write(`${windowLine}${JSON.stringify(result)}\n`, () => process.exit(0));
