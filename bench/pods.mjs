/**
 * `npm run bench -- --pods [N]`: `probelet run` of a List of N Pods (default 1,000), each
 * `sleep 1000` with a TCP readiness probe on a port this bench listens on, beside the
 * least code that does the same (spawn N detached `sleep`s with their output piped, one TCP
 * connect each, SIGTERM all, wait for every exit). Measures, from the moment the process was started:
 *
 *   start       every container is running (the pod's status says so)
 *   firstProbe  every pod is Ready (its first readiness probe succeeded)
 *   shutdown    SIGTERM to probelet → probelet has exited (every `sleep` dies at once on
 *               SIGTERM, so this is all probelet's own shutdown cost)
 *
 * probelet is driven through its CLI (`-o json`), as a user runs it; one JSON line per run,
 * then a table and the ratio. `--cpu-prof` writes probelet's CPU profile to bench/profiles/.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { podLineReader } from '../dist/cli/run/json-lines.js';

const BIN = fileURLToPath(new URL('../bin/probelet.js', import.meta.url));
const PROFILE_DIR = fileURLToPath(new URL('./profiles/', import.meta.url));
/** Every phase must end within this long, else the run is killed and reported as failed. */
const PHASE_LIMIT_MS = 120_000;

/** @param {number} n @param {number} port */
function podList(n, port) {
  const items = [];
  for (let i = 0; i < n; i++) {
    items.push({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `scale-${i}` },
      spec: {
        containers: [
          {
            name: 'sleep',
            image: 'busybox',
            command: ['sleep', '1000'],
            readinessProbe: { tcpSocket: { port }, periodSeconds: 1 },
          },
        ],
      },
    });
  }
  return { apiVersion: 'v1', kind: 'List', items };
}

/** @returns {Promise<{ port: number, close: () => Promise<void> }>} */
async function listen() {
  /** @type {Set<import('node:net').Socket>} */
  const sockets = new Set();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  server.listen({ host: '127.0.0.1', port: 0, backlog: 4096 });
  await new Promise((resolve) => server.once('listening', resolve));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    port: address.port,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve(undefined));
      }),
  };
}

/**
 * @param {number} n
 * @param {number} port
 * @param {string} dir
 * @param {boolean} cpuProf
 */
async function runProbelet(n, port, dir, cpuProf) {
  const file = join(dir, 'pods.json');
  writeFileSync(file, JSON.stringify(podList(n, port)));
  const t0 = performance.now();
  const profile = cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=probelet-pods-${Date.now()}.cpuprofile`] : [];
  const child = spawn(process.execPath, [...profile, BIN, 'run', file, '--listen', '127.0.0.1:0', '-o', 'json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = `${stderr}${String(d)}`.slice(-4000)));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const running = new Set();
  const ready = new Set();
  let start = 0;
  let firstProbe = 0;
  /** @type {(value?: unknown) => void} */
  let allReady = () => undefined;
  const readyNow = new Promise((resolve) => (allReady = resolve));
  // The pod at every change: `pod` lines and the `containerStatus` lines after them.
  const readPod = podLineReader();
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (!line.startsWith('{"type":"pod"') && !line.startsWith('{"type":"containerStatus"')) return;
    const pod = readPod(JSON.parse(line));
    if (pod === undefined) return;
    const name = pod.metadata?.name ?? '';
    if (pod.status?.containerStatuses?.[0]?.state?.running) running.add(name);
    if ((pod.status?.conditions ?? []).some((/** @type {{ type: string, status: string }} */ c) => c.type === 'Ready' && c.status === 'True')) ready.add(name);
    if (start === 0 && running.size === n) start = performance.now() - t0;
    if (firstProbe === 0 && ready.size === n) {
      firstProbe = performance.now() - t0;
      allReady();
    }
  });
  const limit = setTimeout(() => child.kill('SIGKILL'), PHASE_LIMIT_MS);
  await Promise.race([readyNow, exited]);
  clearTimeout(limit);
  const t1 = performance.now();
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), PHASE_LIMIT_MS);
  const exit = await exited;
  clearTimeout(killer);
  const shutdown = performance.now() - t1;
  if (firstProbe === 0) throw new Error(`probelet run did not get every pod Ready (exit ${JSON.stringify(exit)}): ${stderr}`);
  return { impl: 'probelet', pods: n, startMs: Math.round(start), firstProbeMs: Math.round(firstProbe), shutdownMs: Math.round(shutdown), exit };
}

/**
 * The least code: spawn N detached sleeps (output piped), connect once each, SIGTERM every group, wait.
 * @param {number} n
 * @param {number} port
 */
async function runBaseline(n, port) {
  const t0 = performance.now();
  const children = [];
  for (let i = 0; i < n; i++) {
    // Output captured through pipes, as container logs must be.
    const c = spawn('sleep', ['1000'], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout?.resume();
    c.stderr?.resume();
    children.push(c);
  }
  await Promise.all(children.map((c) => new Promise((resolve, reject) => c.once('spawn', resolve).once('error', reject))));
  const start = performance.now() - t0;
  const { connect } = await import('node:net');
  await Promise.all(
    children.map(
      () =>
        new Promise((resolve, reject) => {
          const s = connect({ host: '127.0.0.1', port }, () => {
            s.resetAndDestroy();
            resolve(undefined);
          });
          s.once('error', reject);
        }),
    ),
  );
  const firstProbe = performance.now() - t0;
  const t1 = performance.now();
  const exits = children.map((c) => new Promise((resolve) => c.once('exit', resolve)));
  for (const c of children) process.kill(-(c.pid ?? 0), 'SIGTERM');
  await Promise.all(exits);
  const shutdown = performance.now() - t1;
  return { impl: 'baseline', pods: n, startMs: Math.round(start), firstProbeMs: Math.round(firstProbe), shutdownMs: Math.round(shutdown) };
}

/** @param {Record<string, unknown>[]} runs */
function table(runs) {
  const cols = ['impl', 'pods', 'startMs', 'firstProbeMs', 'shutdownMs'];
  const rows = [cols, ...runs.map((r) => cols.map((c) => String(r[c] ?? '-')))];
  const widths = cols.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((v, i) => v.padStart(widths[i] ?? 0)).join('  ')).join('\n');
}

/**
 * @param {readonly string[]} argv  arguments after --pods
 * @returns {Promise<number>} exit code
 */
export async function benchPods(argv) {
  const n = argv[0] !== undefined && /^\d+$/.test(argv[0]) ? Number(argv[0]) : 1000;
  const cpuProf = argv.includes('--cpu-prof');
  const dir = mkdtempSync(join(tmpdir(), 'probelet-bench-pods-'));
  const target = await listen();
  try {
    const runs = [];
    runs.push(await runProbelet(n, target.port, dir, cpuProf));
    process.stdout.write(`${JSON.stringify(runs[0])}\n`);
    runs.push(await runBaseline(n, target.port));
    process.stdout.write(`${JSON.stringify(runs[1])}\n`);
    process.stdout.write(`\n${table(runs)}\n`);
    const [p, b] = runs;
    if (p && b) {
      const ratio = (/** @type {string} */ k) => (Number(b[k]) > 0 ? (Number(p[k]) / Number(b[k])).toFixed(2) : '-');
      process.stdout.write(`probelet ÷ baseline: start ${ratio('startMs')}×, first probe ${ratio('firstProbeMs')}×, shutdown ${ratio('shutdownMs')}×\n`);
    }
    process.stdout.write('(measured on this machine now; compare runs from one invocation only)\n');
    return 0;
  } finally {
    await target.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
