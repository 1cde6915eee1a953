/**
 * `npm run bench -- --soak [--workers 5000] [--duration 600]`: N HTTP readiness workers at a
 * 1 s period (timeout 1 s) through the real ProbeManager and Prober, for `--duration`
 * seconds, against a target (its own process) that fails 10 % of requests (500) and stalls
 * 5 % past the timeout; then `removePod` of every pod. Passes when afterwards:
 *
 * - no worker is left and no probe is in flight;
 * - no socket, timer or child process is left (Node's active resources, /proc);
 * - the heap (after a full GC) has not grown by more than 10 % over where it was before the
 *   workers started (after a short warm-up round: code and hidden classes are made once).
 *   The flight recorder keeps the history of removed pods on purpose (`probelet run` reads it
 *   after its pods are gone; at most `capacity` attempts per ring): that is reported as
 *   `historiesKeptMB`, and the heap is compared once the removed pods' histories are
 *   forgotten (`FlightRecorder.forgetPod`, what an agent calls when a pod is gone for good),
 *   before the start (the warm-up's) and at the end alike;
 * - the soak process exits by itself (nothing keeps its event loop alive).
 *
 * The soak runs in a child (`node bench/soak.mjs run CONFIG`) so its exit is observable;
 * the target is `node bench/soak.mjs target`. Prints one JSON line and a verdict; exit 1
 * when a check failed.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { getHeapSpaceStatistics } from 'node:v8';
import { buildPods } from './lib/pods.mjs';
import { waitUntil } from './lib/wait.mjs';

const SELF = fileURLToPath(import.meta.url);
const FAIL_RATIO = 0.1;
const STALL_RATIO = 0.05;
const PERIOD_S = 1;
const TIMEOUT_S = 1;
/** A stalled answer comes this long after the request: past the probe's timeout. */
const STALL_MS = TIMEOUT_S * 1000 + 1500;
/** How long the soak process may take to exit once it has reported. */
const EXIT_LIMIT_MS = 15_000;
const HEAP_TOLERANCE = 0.1;
/** After removing every worker, a moment for the last closed sockets and their buffers to go. */
const SETTLE_MS = 1000;
/** The warm-up round before the heap's start is measured. */
const WARMUP_S = 5;

// --- the target -------------------------------------------------------------------------

function target() {
  const stalled = new Set();
  const server = http.createServer((req, res) => {
    const roll = Math.random();
    if (roll < STALL_RATIO) {
      const timer = setTimeout(() => {
        stalled.delete(timer);
        res.end('late');
      }, STALL_MS);
      stalled.add(timer);
      res.on('close', () => {
        clearTimeout(timer);
        stalled.delete(timer);
      });
      return;
    }
    res.writeHead(roll < STALL_RATIO + FAIL_RATIO ? 500 : 200, { 'Content-Type': 'text/plain' });
    res.end(roll < STALL_RATIO + FAIL_RATIO ? 'failing' : 'ok');
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  server.listen({ port: 0, host: '127.0.0.1', backlog: 8192 }, () => {
    const address = /** @type {import('node:net').AddressInfo} */ (server.address());
    process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
  });
  // Ends with its parent: stdin closes when the bench exits, however it exits.
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
}

// --- the soak process -----------------------------------------------------------------

/** @returns {number} */
function heapAfterGC() {
  const gc = /** @type {(() => void) | undefined} */ (/** @type {Record<string, unknown>} */ (globalThis)['gc']);
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

/** @returns {Record<string, number>} used bytes per V8 heap space */
function heapSpaces() {
  return Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size]));
}

function childProcesses() {
  let n = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

/** Active resources that would keep the process alive or hold a socket, by type. */
function leftovers() {
  /** @type {Record<string, number>} */
  const counts = {};
  for (const kind of process.getActiveResourcesInfo()) {
    if (['TCPSocketWrap', 'TCPServerWrap', 'TLSWrap', 'Timeout', 'Immediate', 'ProcessWrap', 'Http2Session'].includes(kind)) {
      counts[kind] = (counts[kind] ?? 0) + 1;
    }
  }
  return counts;
}

/** @param {{ workers: number, durationS: number, port: number }} config */
async function soak(config) {
  const lib = await import('../dist/index.js');
  const statusManager = new lib.StatusManager();
  const built = buildPods({
    workers: config.workers,
    containersPerPod: 1,
    handler: { httpGet: { path: '/healthz', port: config.port, scheme: 'HTTP' } },
    periodS: PERIOD_S,
    timeoutS: TIMEOUT_S,
    podIP: '127.0.0.1',
    started: true,
  });
  for (const { pod, status } of built) statusManager.setPodStatus(pod, status);
  const pods = built.map(({ pod }) => statusManager.getPod(pod.metadata?.uid ?? '')).filter((p) => p !== undefined);

  const real = new lib.Prober({ runner: new lib.LocalCommandRunner() });
  const counts = { probes: 0, success: 0, failure: 0, errored: 0, inFlight: 0 };
  /** Failure outputs (numbers masked) and how often, to tell the target's answers from overload. */
  const failures = new Map();
  /** @type {import('../dist/prober/context.js').ProbeFunction} */
  const prober = {
    async probe(probeType, pod, status, container, containerID, note) {
      counts.probes++;
      counts.inFlight++;
      try {
        // `note`: the flight recorder's slot, passed on so it keeps what it would without this wrapper.
        const verdict = await real.probeWithDetails(probeType, pod, status, container, containerID, note);
        if (verdict.error !== undefined) counts.errored++;
        else if (verdict.result === 'success') counts.success++;
        else {
          counts.failure++;
          const why = verdict.outcome.output.replace(/\d+/g, 'N').slice(0, 80);
          failures.set(why, (failures.get(why) ?? 0) + 1);
        }
        return { result: verdict.result, ...(verdict.error ? { error: verdict.error } : {}) };
      } finally {
        counts.inFlight--;
      }
    },
  };
  const manager = new lib.ProbeManager({
    statusProvider: statusManager,
    livenessResults: new lib.ResultsManager(),
    readinessResults: new lib.ResultsManager(),
    startupResults: new lib.ResultsManager(),
    runner: new lib.LocalCommandRunner(),
    prober,
    startTime: Date.now(),
    random: Math.random,
  });

  // One short round first: code, hidden classes and Node's own pools are made once per
  // process, and are not what a soak looks for. The heap is compared from after it.
  const heapCold = heapAfterGC();
  for (const pod of pods) manager.addPod(pod);
  await new Promise((resolve) => setTimeout(resolve, WARMUP_S * 1000));
  for (const pod of pods) manager.removePod(pod);
  await waitUntil(() => manager.workerCount() === 0 && counts.inFlight === 0, 30_000);
  forgetHistories(manager, pods);
  Object.assign(counts, { probes: 0, success: 0, failure: 0, errored: 0 });
  failures.clear();
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const heapStart = heapAfterGC();
  const spacesStart = heapSpaces();
  const started = performance.now();
  for (const pod of pods) manager.addPod(pod);
  let heapPeak = 0;
  const sampler = setInterval(() => (heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)), 1000);
  await new Promise((resolve) => setTimeout(resolve, config.durationS * 1000));
  clearInterval(sampler);
  const removeAt = performance.now();
  for (const pod of pods) manager.removePod(pod);
  await waitUntil(() => manager.workerCount() === 0 && counts.inFlight === 0, 30_000);
  const removeMs = performance.now() - removeAt;
  // Sockets closed by a reset or by the peer go away on the next turns of the loop.
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const heapWithHistories = heapAfterGC();
  const historiesKept = manager.flightRecorder?.histories().reduce((n, h) => n + h.attempts.length, 0) ?? 0;
  forgetHistories(manager, pods);
  const heapEnd = heapAfterGC();
  const left = leftovers();
  const children = childProcesses();
  const result = {
    workers: config.workers,
    durationS: Math.round((removeAt - started) / 100) / 10,
    ...counts,
    probesPerS: Math.round(counts.probes / ((removeAt - started) / 1000)),
    topFailures: Object.fromEntries([...failures].sort((a, b) => b[1] - a[1]).slice(0, 3)),
    removeAllMs: Math.round(removeMs),
    workersLeft: manager.workerCount(),
    leftovers: left,
    children,
    heapColdMB: Math.round(heapCold / 2 ** 20 * 10) / 10,
    heapGrowthBySpaceKB: Object.fromEntries(
      Object.entries(heapSpaces()).map(([space, used]) => [space, Math.round((used - (spacesStart[space] ?? 0)) / 1024)]),
    ),
    heapStartMB: Math.round(heapStart / 2 ** 20 * 10) / 10,
    heapPeakMB: Math.round(heapPeak / 2 ** 20 * 10) / 10,
    historiesKept,
    historiesKeptMB: Math.round((heapWithHistories - heapEnd) / 2 ** 20 * 10) / 10,
    heapEndMB: Math.round(heapEnd / 2 ** 20 * 10) / 10,
    heapEndRatio: Math.round((heapEnd / heapStart) * 1000) / 1000,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  // Nothing more: the process must now exit by itself.
}

/**
 * Drops the flight recorder's rings of removed pods (they outlive their workers by design).
 * @param {{ flightRecorder?: { forgetPod(uid: string): void } }} manager
 * @param {ReadonlyArray<{ metadata?: { uid?: string } }>} pods
 */
function forgetHistories(manager, pods) {
  for (const pod of pods) manager.flightRecorder?.forgetPod(pod.metadata?.uid ?? '');
}

// --- the orchestrator ------------------------------------------------------------------

/**
 * @param {string[]} args
 * @param {boolean} keepStdin
 */
function child(args, keepStdin) {
  const proc = spawn(process.execPath, args, { stdio: [keepStdin ? 'pipe' : 'ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal, at: performance.now() })));
  /** @type {Promise<Record<string, unknown>>} */
  const firstJson = new Promise((resolve, reject) => {
    createInterface({ input: /** @type {import('node:stream').Readable} */ (proc.stdout) }).on('line', (line) => {
      if (line.startsWith('{')) resolve({ ...JSON.parse(line), reportedAt: performance.now() });
    });
    proc.once('exit', (code) => reject(new Error(`${args[1] ?? ''} exited with ${code} before answering`)));
  });
  return { proc, exited, firstJson };
}

/**
 * @param {readonly string[]} argv  arguments after --soak
 * @returns {Promise<number>} exit code
 */
export async function benchSoak(argv) {
  let workers = 5000;
  let durationS = 600;
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = (argv[i] ?? '').split('=');
    const value = Number(inline ?? argv[++i]);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} needs a positive number`);
    if (name === '--workers') workers = Math.trunc(value);
    else if (name === '--duration') durationS = value;
    else throw new Error(`unknown soak option ${JSON.stringify(name)} (--workers N, --duration S)`);
  }
  const tgt = child([SELF, 'target'], true);
  try {
    const { port } = /** @type {{ port: number }} */ (await tgt.firstJson);
    const run = child(['--expose-gc', SELF, 'run', JSON.stringify({ workers, durationS, port })], false);
    const limit = setTimeout(() => run.proc.kill('SIGKILL'), (durationS + 120) * 1000);
    const result = await run.firstJson;
    clearTimeout(limit);
    const killer = setTimeout(() => run.proc.kill('SIGKILL'), EXIT_LIMIT_MS);
    const exit = /** @type {{ code: number | null, signal: string | null, at: number }} */ (await run.exited);
    clearTimeout(killer);
    const exitedByItself = exit.signal === null && exit.code === 0;
    const { reportedAt, ...shown } = result;
    const report = { ...shown, exitedByItself, exitMs: Math.round(exit.at - Number(reportedAt)) };
    process.stdout.write(`${JSON.stringify(report)}\n`);
    const problems = [];
    if (result['workersLeft'] !== 0) problems.push('workers left');
    if (Object.keys(/** @type {object} */ (result['leftovers'])).length > 0) problems.push(`resources left: ${JSON.stringify(result['leftovers'])}`);
    if (result['children'] !== 0) problems.push('child processes left');
    // Growth is what a soak looks for; ending below the start (garbage of the warm-up round) is fine.
    if (Number(result['heapEndRatio']) > 1 + HEAP_TOLERANCE) problems.push(`heap ${String(result['heapEndRatio'])}× its start`);
    if (!exitedByItself) problems.push(`did not exit by itself within ${EXIT_LIMIT_MS / 1000} s`);
    process.stdout.write(problems.length === 0 ? 'soak: passed\n' : `soak: FAILED: ${problems.join('; ')}\n`);
    return problems.length === 0 ? 0 : 1;
  } finally {
    tgt.proc.stdin?.end();
    await tgt.exited;
  }
}

if (process.argv[1] === SELF) {
  if (process.argv[2] === 'target') target();
  else if (process.argv[2] === 'run') await soak(JSON.parse(process.argv[3] ?? '{}'));
}
