#!/usr/bin/env node
/**
 * `npm run bench -- --scenario stream [--clients 200] [--duration 20] [--pods 60]`: `/stream`
 * under clients that connect and never read (issue 21: 500 of them took probelet to 4.3 GB
 * and `/healthz` stopped answering). `probelet run -o json` runs a busy manifest (pods whose
 * exec readiness probe flips every second: a pod update and an event a second each, beside an
 * exec liveness probe of period 1 s), then measures two windows of `--duration` seconds each,
 * `/healthz` asked twice a second in both: the baseline window without clients, then the
 * window where `--clients` raw connections ask for `/stream` and never read.
 *
 * Goals (issue 21 §2): probelet's peak RSS ≤ 600 MB, every `/healthz` within 1 s, and probes
 * on time. "On time" is read from the run's own `{"type":"probe"}` lines (the flight
 * recorder's `due`, the ticker's tick, and `start`): a probe's lateness is `start − due`,
 * plus one period for every tick it skipped (consecutive dues of one probe more than a period
 * apart). Goal: p99 lateness ≤ 100 ms (10 % of the 1 s period) with the clients; the same
 * figures of the baseline window (same run, same probelet) are printed beside as a ratio.
 *
 * The clients over the stream cap get 503 (counted). Stops by itself after warm-up + 2 ×
 * duration: the clients are closed, probelet is sent SIGINT and must exit within 60 s (else
 * SIGKILL, and the bench fails). Prints one JSON line and a verdict; exit 1 when a goal was
 * missed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/probelet.js', import.meta.url));
const GOAL_RSS_MB = 600;
const GOAL_HEALTHZ_MS = 1000;
const EXIT_LIMIT_MS = 60_000;
/** The probes' period (`periodSeconds: 1` in `manifest`): lateness is measured against it. */
const PERIOD_MS = 1000;
/** On time: p99 lateness within 10 % of the period. */
const GOAL_LATENESS_P99_MS = 100;
const WARMUP_MS = 3000;

/** @param {string[]} argv */
function options(argv) {
  const o = { clients: 200, durationS: 20, pods: 60 };
  for (let i = 0; i < argv.length; i += 2) {
    const value = Number(argv[i + 1]);
    if (!Number.isInteger(value) || value < 1) throw new Error(`${argv[i]} wants a whole number from 1, got ${argv[i + 1]}`);
    if (argv[i] === '--clients') o.clients = value;
    else if (argv[i] === '--duration') o.durationS = value;
    else if (argv[i] === '--pods') o.pods = value;
    else throw new Error(`unknown option ${argv[i]} (--clients, --duration, --pods)`);
  }
  return o;
}

/** Pods whose readiness flips every second (an exec probe on the clock's parity) and a liveness probe that passes. */
function manifest(pods) {
  const docs = [];
  for (let i = 0; i < pods; i++) {
    docs.push(`apiVersion: v1
kind: Pod
metadata: {name: busy-${i}}
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: app
      image: busybox
      command: [sleep, "3600"]
      readinessProbe:
        exec: {command: [sh, -c, 'exit $(( $(date +%s) % 2 ))']}
        periodSeconds: 1
        failureThreshold: 1
      livenessProbe:
        exec: {command: ["true"]}
        periodSeconds: 1
`);
  }
  return docs.join('---\n');
}

/** @param {number} pid */
function rssMB(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'latin1');
    return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** @param {number} port */
function healthzMs(port) {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - started : Infinity));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(Infinity));
  });
}

/**
 * A client that asks for the stream and never reads.
 * @param {number} port
 * @param {Record<string, number>} counts  answers by status code
 * @param {number[]} answerMs  how long each answer took
 */
function stalledClient(port, counts, answerMs) {
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined);
  const t0 = performance.now();
  socket.once('data', (chunk) => {
    socket.pause();
    answerMs.push(performance.now() - t0);
    const status = /^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 'none';
    counts[status] = (counts[status] ?? 0) + 1;
  });
  socket.write(`GET /stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  return socket;
}

/**
 * @typedef {object} Attempt  one `{"type":"probe"}` line of the run
 * @property {string} key  pod/container/probe type: one worker
 * @property {number} due  the tick it ran for (ms since the epoch)
 * @property {number} start  when it started
 */

/**
 * @param {number[]} sorted  ascending
 * @param {number} q  0..1
 */
function percentile(sorted, q) {
  return sorted.length === 0 ? null : sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}

/**
 * Lateness of the attempts that started in [from, to): `start − due`, plus one period per tick
 * the worker skipped (its previous due more than a period before; a manual trigger rephases
 * the schedule, so only whole periods count).
 * @param {Attempt[]} attempts  in the order the run printed them (per worker, in order)
 * @param {number} from
 * @param {number} to
 */
function latenessIn(attempts, from, to) {
  /** @type {Map<string, number>} */
  const lastDue = new Map();
  const late = [];
  let skippedTicks = 0;
  for (const a of attempts) {
    const before = lastDue.get(a.key);
    lastDue.set(a.key, a.due);
    if (a.start < from || a.start >= to) continue;
    const skipped = before === undefined ? 0 : Math.max(0, Math.floor((a.due - before) / PERIOD_MS) - 1);
    skippedTicks += skipped;
    late.push(a.start - a.due + skipped * PERIOD_MS);
  }
  late.sort((x, y) => x - y);
  return { probes: late.length, skippedTicks, p50Ms: percentile(late, 0.5), p99Ms: percentile(late, 0.99), maxMs: late.at(-1) ?? null };
}

/**
 * `/healthz` twice a second until `ms` have passed.
 * @param {number} port
 * @param {number} ms
 */
async function healthzFor(port, ms) {
  const times = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    times.push(await healthzMs(port));
    await new Promise((r) => setTimeout(r, 500));
  }
  return times;
}

/** @param {number[]} times */
function slowestMs(times) {
  const slowest = Math.max(...times);
  return Number.isFinite(slowest) ? Math.round(slowest) : null;
}

async function main() {
  const o = options(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'probelet-bench-stream-'));
  const file = join(dir, 'pods.yaml');
  writeFileSync(file, manifest(o.pods));
  const child = spawn(process.execPath, [BIN, 'run', file, '--listen', '127.0.0.1:0', '--log-dir', join(dir, 'logs'), '-o', 'json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  /** @type {Attempt[]} */
  const attempts = [];
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`probelet run printed no address within 30 s: ${stderr}`)), 30_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('{"type":"probe"')) {
        const { pod, container, probeType, attempt } = JSON.parse(line);
        if (attempt !== undefined) attempts.push({ key: `${pod}/${container}/${probeType}`, due: attempt.due, start: attempt.start });
      } else if (line.startsWith('{"type":"run"')) {
        clearTimeout(timer);
        resolve(Number(new URL(JSON.parse(line).url).port));
      }
    });
  });
  // Let the run get busy, then the baseline window (no clients), then the clients' window.
  await new Promise((r) => setTimeout(r, WARMUP_MS));
  const baselineFrom = Date.now();
  const baselineHealthz = await healthzFor(port, o.durationS * 1000);
  const clientsFrom = Date.now();
  /** @type {Record<string, number>} */
  const counts = {};
  /** @type {number[]} */
  const answerMs = [];
  const sockets = [];
  for (let i = 0; i < o.clients; i++) sockets.push(stalledClient(port, counts, answerMs));
  const healthz = await healthzFor(port, o.durationS * 1000);
  const clientsTo = Date.now();
  const peakRssMB = Math.round(rssMB(child.pid ?? 0));
  for (const s of sockets) s.destroy();
  child.kill('SIGINT');
  const killer = setTimeout(() => child.kill('SIGKILL'), EXIT_LIMIT_MS);
  const exit = await exited;
  clearTimeout(killer);
  rmSync(dir, { recursive: true, force: true });
  const baseline = latenessIn(attempts, baselineFrom, clientsFrom);
  const withClients = latenessIn(attempts, clientsFrom, clientsTo);
  const lateness = {
    periodMs: PERIOD_MS,
    withClients,
    baseline,
    p99Ratio: withClients.p99Ms !== null && baseline.p99Ms ? Number((withClients.p99Ms / baseline.p99Ms).toFixed(2)) : null,
  };
  const result = {
    scenario: 'stream',
    clients: o.clients,
    pods: o.pods,
    durationS: o.durationS,
    streamAnswers: counts,
    slowestStreamAnswerMs: Math.round(Math.max(0, ...answerMs)),
    peakRssMB,
    healthzAsked: healthz.length,
    healthzMaxMs: slowestMs(healthz),
    baselineHealthzMaxMs: slowestMs(baselineHealthz),
    lateness,
    loadAverage: readFileSync('/proc/loadavg', 'latin1').split(' ').slice(0, 3).join(' '),
    exit,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  const fmt = (/** @type {ReturnType<typeof latenessIn>} */ l) =>
    `p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms, max ${l.maxMs} ms, ${l.skippedTicks} ticks skipped of ${l.probes} probes`;
  process.stdout.write(`lateness with ${o.clients} clients: ${fmt(withClients)}\nlateness baseline (same run, no clients): ${fmt(baseline)}\n`);
  process.stdout.write(`p99 ratio (clients / baseline): ${lateness.p99Ratio ?? 'n/a (baseline p99 0 ms)'}\n`);
  const missed = [];
  if (peakRssMB > GOAL_RSS_MB) missed.push(`peak RSS ${peakRssMB} MB > ${GOAL_RSS_MB} MB`);
  if (!(Math.max(...healthz) <= GOAL_HEALTHZ_MS)) missed.push(`slowest /healthz ${result.healthzMaxMs ?? 'never answered'} ms > ${GOAL_HEALTHZ_MS} ms`);
  if (withClients.probes === 0) missed.push('no probe ran while the clients were connected');
  else if (!((withClients.p99Ms ?? Infinity) <= GOAL_LATENESS_P99_MS)) {
    const also = (baseline.p99Ms ?? Infinity) > GOAL_LATENESS_P99_MS ? ` (the baseline missed too: ${baseline.p99Ms} ms; a loaded machine?)` : '';
    missed.push(`p99 probe lateness ${withClients.p99Ms} ms > ${GOAL_LATENESS_P99_MS} ms${also}`);
  }
  if (exit.code !== 0) missed.push(`probelet run exited ${JSON.stringify(exit)} after SIGINT (want 0)`);
  process.stdout.write(
    missed.length === 0
      ? `stream: goals met (RSS ≤ ${GOAL_RSS_MB} MB, /healthz ≤ ${GOAL_HEALTHZ_MS} ms, p99 probe lateness ≤ ${GOAL_LATENESS_P99_MS} ms)\n`
      : `stream: MISSED: ${missed.join('; ')}\n`,
  );
  return missed.length === 0 ? 0 : 1;
}

process.exitCode = await main();
