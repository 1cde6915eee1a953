/**
 * `npm run bench -- --scenario node [--duration S]`: what users compare with a kubelet.
 * 110 pods (a kubelet's default max pods), each container with a liveness and a readiness
 * probe at kubelet defaults (period 10 s, timeout 1 s), HTTP/TCP/gRPC/exec mixed as on a
 * typical node (scenario-node-load.mjs), for 5 minutes by default. Targets (an HTTP server,
 * also probed by TCP, and a gRPC health server) run in processes of their own. Reports CPU %
 * (children included: the spawner and the exec'd commands), max RSS (spawner included),
 * lateness and false failures (every target is healthy: any failed probe is one).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = (/** @type {string} */ path) => fileURLToPath(new URL(path, import.meta.url));

/**
 * Starts `node args…` and resolves with its first JSON line; killed after `limitMs`.
 * @param {string[]} args
 * @param {number} limitMs
 * @param {boolean} keepStdin  the targets exit when their stdin closes
 */
function start(args, limitMs, keepStdin) {
  const child = spawn(process.execPath, args, { stdio: [keepStdin ? 'pipe' : 'ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  /** @type {Promise<Record<string, unknown>>} */
  const answer = new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args[0]} gave no answer within ${limitMs / 1000} s`));
    }, limitMs);
    createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stdout) }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      clearTimeout(timer);
      resolve(JSON.parse(line));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args[0]} exited with ${code} before answering`));
    });
  });
  return { child, exited, answer };
}

/**
 * @param {import('./lib/options.mjs').BenchOptions} o
 * @returns {Promise<Record<string, unknown>>} the run's JSON line, already printed
 */
export async function runNodeScenario(o) {
  const maxSeconds = String(o.warmupS + o.durationS + 120);
  const targets = [start([here('./target.mjs'), 'http', maxSeconds], 15_000, true), start([here('./target.mjs'), 'grpc', maxSeconds], 15_000, true)];
  try {
    const [http, grpc] = await Promise.all(targets.map((t) => t.answer));
    const config = JSON.stringify({ options: o, http: http?.['port'], grpc: grpc?.['port'] });
    const load = start(['--expose-gc', here('./scenario-node-load.mjs'), config], (o.warmupS + o.durationS + 120) * 1000, false);
    const result = await load.answer;
    await load.exited;
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return result;
  } finally {
    for (const t of targets) t.child.kill('SIGTERM');
    await Promise.all(targets.map((t) => t.exited));
  }
}

/** @param {Record<string, unknown>} r */
export function nodeSummary(r) {
  return (
    `node: ${r['pods']} pods, ${r['workers']} probe workers (HTTP/TCP/gRPC/exec), ${r['probesPerS']} probes/s over ${r['elapsedS']} s: ` +
    `CPU ${r['cpuPercent']} % of one core, max RSS ${r['maxRssMB']} MB, lateness p50/p99/max ${r['latenessP50Ms']}/${r['latenessP99Ms']}/${r['latenessMaxMs']} ms, ` +
    `false failures ${r['failed']} of ${r['probes']}, event-loop p99 ${r['eventLoopDelayP99Ms']} ms`
  );
}
