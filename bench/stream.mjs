#!/usr/bin/env node
/**
 * `npm run bench -- --scenario stream [--clients 200] [--duration 20] [--pods 60]`: `/stream`
 * under clients that connect and never read (issue 21: 500 of them took probelet to 4.3 GB
 * and `/healthz` stopped answering). `probelet run` runs a busy manifest (pods whose exec
 * readiness probe flips every second: a pod update and an event a second each), then
 * `--clients` raw connections ask for `/stream` and never read, for `--duration` seconds,
 * while `/healthz` is asked twice a second. Goal: probelet's peak RSS ≤ 600 MB, every
 * `/healthz` within 1 s. The clients over the stream cap get 503 (counted). Stops by itself:
 * the clients are closed, probelet is sent SIGINT and must exit within 60 s (else SIGKILL,
 * and the bench fails). Prints one JSON line and a verdict; exit 1 when a goal was missed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/probelet.js', import.meta.url));
const GOAL_RSS_MB = 600;
const GOAL_HEALTHZ_MS = 1000;
const EXIT_LIMIT_MS = 60_000;

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

async function main() {
  const o = options(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'probelet-bench-stream-'));
  const file = join(dir, 'pods.yaml');
  writeFileSync(file, manifest(o.pods));
  const child = spawn(process.execPath, [BIN, 'run', file, '--listen', '127.0.0.1:0', '--log-dir', join(dir, 'logs')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const port = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`probelet run printed no address within 30 s: ${stderr}`)), 30_000);
    child.stdout.on('data', (c) => {
      out += c;
      const m = /Read-only API: http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout.resume();
        resolve(Number(m[1]));
      }
    });
  });
  // Let the run get busy before the clients come.
  await new Promise((r) => setTimeout(r, 3000));
  /** @type {Record<string, number>} */
  const counts = {};
  /** @type {number[]} */
  const answerMs = [];
  const sockets = [];
  for (let i = 0; i < o.clients; i++) sockets.push(stalledClient(port, counts, answerMs));
  const healthz = [];
  const end = Date.now() + o.durationS * 1000;
  while (Date.now() < end) {
    healthz.push(await healthzMs(port));
    await new Promise((r) => setTimeout(r, 500));
  }
  const peakRssMB = Math.round(rssMB(child.pid ?? 0));
  for (const s of sockets) s.destroy();
  child.kill('SIGINT');
  const killer = setTimeout(() => child.kill('SIGKILL'), EXIT_LIMIT_MS);
  const exit = await exited;
  clearTimeout(killer);
  rmSync(dir, { recursive: true, force: true });
  const slowest = Math.max(...healthz);
  const result = {
    scenario: 'stream',
    clients: o.clients,
    pods: o.pods,
    durationS: o.durationS,
    streamAnswers: counts,
    slowestStreamAnswerMs: Math.round(Math.max(0, ...answerMs)),
    peakRssMB,
    healthzAsked: healthz.length,
    healthzMaxMs: Number.isFinite(slowest) ? Math.round(slowest) : null,
    exit,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  const missed = [];
  if (peakRssMB > GOAL_RSS_MB) missed.push(`peak RSS ${peakRssMB} MB > ${GOAL_RSS_MB} MB`);
  if (!(slowest <= GOAL_HEALTHZ_MS)) missed.push(`slowest /healthz ${result.healthzMaxMs ?? 'never answered'} ms > ${GOAL_HEALTHZ_MS} ms`);
  if (exit.code !== 0) missed.push(`probelet run exited ${JSON.stringify(exit)} after SIGINT (want 0)`);
  process.stdout.write(missed.length === 0 ? `stream: goals met (RSS ≤ ${GOAL_RSS_MB} MB, /healthz ≤ ${GOAL_HEALTHZ_MS} ms)\n` : `stream: MISSED: ${missed.join('; ')}\n`);
  return missed.length === 0 ? 0 : 1;
}

process.exitCode = await main();
