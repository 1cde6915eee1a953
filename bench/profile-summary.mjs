#!/usr/bin/env node
/**
 * Where the time went in a V8 CPU profile (`npm run bench -- --cpu-prof` writes them to
 * bench/profiles/):
 *
 *   node bench/profile-summary.mjs bench/profiles/probelet-http-….cpuprofile [--top 25]
 *
 * Prints self time per function and per source file/package, and total (inclusive) time of
 * probelet's own functions. Self time is the sum of the sampling intervals (timeDeltas) of
 * the samples whose leaf is the function — more exact than hitCount × nominal interval.
 * Profiles written by run.mjs carry the run's measured window; only samples inside it
 * count, so start-up, warm-up and wind-down are left out.
 */
import { readFileSync } from 'node:fs';

/**
 * @typedef {object} ProfileNode
 * @property {number} id
 * @property {{ functionName: string, url: string, lineNumber: number }} callFrame
 * @property {number[]} [children]
 */

/**
 * @typedef {object} Profile
 * @property {ProfileNode[]} nodes
 * @property {number[]} samples
 * @property {number[]} timeDeltas  µs since the previous sample
 * @property {number} startTime  µs, monotonic clock
 * @property {number[]} [benchWindowUs]  the measured window, added by run.mjs
 */

// Piped into `head`: stop quietly.
process.stdout.on('error', () => process.exit(0));

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args[topAt + 1]) : 25;
const files = args.filter((a, i) => !a.startsWith('--') && (topAt < 0 || i !== topAt + 1));
if (files.length === 0) {
  process.stderr.write('usage: node bench/profile-summary.mjs FILE.cpuprofile... [--top N]\n');
  process.exit(2);
}

/**
 * Short name of a script: the package for node_modules, the path under dist/ or bench/,
 * node's own modules as they are.
 * @param {string} url
 */
function moduleOf(url) {
  if (url === '') return '(native/VM)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] ?? url;
  const own = /\/(dist|bench)\/(.*)$/.exec(url);
  return own ? `${own[1]}/${own[2]}` : url;
}

/** @param {ProfileNode} node */
function nameOf(node) {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'}  ${moduleOf(url)}${url ? `:${lineNumber + 1}` : ''}`;
}

/**
 * The samples inside the run's measured window (`benchWindowUs`, stamped by run.mjs on
 * the profile's own monotonic clock), or all of them.
 * @param {Profile} profile
 */
function windowOf(profile) {
  const window = profile.benchWindowUs;
  if (!window) return { from: 0, to: profile.samples.length, marked: false };
  const [start = 0, end = Infinity] = window;
  let t = profile.startTime;
  let from = profile.samples.length;
  let to = profile.samples.length;
  profile.timeDeltas.forEach((delta, i) => {
    t += delta;
    if (t >= start && from === profile.samples.length) from = i;
    if (t > end && to === profile.samples.length) to = i;
  });
  return { from, to, marked: true };
}

/**
 * @param {Map<string, number>} totals
 * @param {number} all
 * @param {string} heading
 */
function print(totals, all, heading) {
  const rows = [...totals].sort((a, b) => b[1] - a[1]).slice(0, top);
  process.stdout.write(`\n${heading}\n      ms      %\n`);
  for (const [name, us] of rows) {
    process.stdout.write(`${(us / 1000).toFixed(1).padStart(8)} ${((100 * us) / all).toFixed(1).padStart(6)}  ${name}\n`);
  }
}

/** @param {Map<string, number>} map @param {string} key @param {number} us */
const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);

for (const file of files) {
  const profile = /** @type {Profile} */ (JSON.parse(readFileSync(file, 'utf8')));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  /** @type {Map<number, number>} */
  const parentOf = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);

  const { from, to, marked } = windowOf(profile);
  const selfByFunction = new Map();
  const selfByModule = new Map();
  const totalOwn = new Map();
  let all = 0;
  let idle = 0;
  for (let i = from; i < to; i++) {
    const id = profile.samples[i] ?? 0;
    const node = byId.get(id);
    const us = profile.timeDeltas[i] ?? 0;
    if (!node) continue;
    all += us;
    if (node.callFrame.functionName === '(idle)') idle += us;
    add(selfByFunction, nameOf(node), us);
    add(selfByModule, moduleOf(node.callFrame.url), us);
    // Inclusive time of probelet's (dist/) functions: once per sample per function.
    const seen = new Set();
    for (let at = /** @type {number | undefined} */ (id); at !== undefined; at = parentOf.get(at)) {
      const frame = byId.get(at);
      if (!frame || !/\/dist\//.test(frame.callFrame.url)) continue;
      const name = nameOf(frame);
      if (!seen.has(name)) add(totalOwn, name, us);
      seen.add(name);
    }
  }
  const scope = marked ? 'measured window only' : 'whole process (no benchWindowUs)';
  process.stdout.write(`${file}\n${scope}: ${(all / 1000).toFixed(0)} ms sampled, ${((all - idle) / 1000).toFixed(0)} ms busy\n`);
  print(selfByFunction, all, `top ${top} functions by self time`);
  print(selfByModule, all, `top ${top} modules by self time`);
  print(totalOwn, all, `top ${top} probelet (dist/) functions by total time, callees included`);
}
