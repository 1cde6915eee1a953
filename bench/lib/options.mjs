/**
 * Command-line options of `npm run bench`, parsed once in the orchestrator and handed to
 * each load child as JSON, so parent and children can never disagree about the load.
 */

/** @typedef {'http' | 'tcp' | 'grpc' | 'exec'} Handler */

/**
 * @typedef {object} Target
 * @property {string} host   Address probed (also the pods' IP).
 * @property {number} port
 * @property {string} path   HTTP path (with query), '/healthz' by default.
 * @property {'HTTP' | 'HTTPS'} scheme
 */

/**
 * @typedef {object} BenchOptions
 * @property {Handler} handler
 * @property {number} workers
 * @property {number} periodS
 * @property {number} durationS      Length of the measured window.
 * @property {number} warmupS        Not measured: start-up jitter spreads the first probes over it.
 * @property {number} timeoutS       Probe timeout.
 * @property {number} containersPerPod
 * @property {string | undefined} target  As given; undefined: the bench starts its own.
 * @property {boolean} baseline
 * @property {boolean} idle
 * @property {boolean} cpuProf
 * @property {string | undefined} scenario  A whole-node scenario (bench/scenario-*.mjs) instead of one handler.
 * @property {'fin' | 'reset'} probeClose  How probelet's probes close their connections (ProberOptions.probeClose):
 *   'fin' as the kubelet (default; TIME_WAIT on the probing side), 'reset' the opt-in (none).
 */

const HANDLERS = ['http', 'tcp', 'grpc', 'exec'];

/** Scenarios and their defaults (kubelet defaults: period 10 s, timeout 1 s). */
const SCENARIOS = {
  node: { periodS: 10, timeoutS: 1, durationS: 300 },
};

export const USAGE = `usage: npm run bench -- [--handler http|tcp|grpc|exec] [--workers N] [--period S]
       [--duration S] [--warmup S] [--timeout S] [--containers-per-pod K]
       [--target URL|HOST:PORT] [--baseline] [--idle] [--cpu-prof] [--probe-close fin|reset]
       npm run bench -- --scenario node [--duration S]    (110 pods at kubelet defaults, HTTP/TCP/gRPC/exec mixed)
       npm run bench -- --scenario check [--objects N]   (probelet check over N workload objects)
       npm run bench -- --scenario simulate              (probelet simulate: a day of the demo pod, 1,000 pods for an hour)
       npm run bench -- --scenario stream [--clients 200] [--duration 20]  (/stream clients that never read, during a busy run)
       npm run bench -- --scenario kubelet [--pods N] [--window S]  (the real kubelet beside probelet run --runtime cri; needs npm run cluster:up)
       npm run bench -- --scenario fleet [--vs kwok | --scale M1,M2,…] [--nodes N] [--pods M | --pods-per-node K] [--limit S]  (probelet node --runtime simulated under the real API server, with --vs kwok beside kwok and probelet --lean-writes, --scale its memory and CPU flat across sizes; needs cluster:env)
       npm run bench -- --scenario check-cluster [--objects N] [--runs R]  (probelet check --cluster -A over N workload objects in the API server; needs cluster:env)
       npm run bench -- --scenario cri-pull [--rounds 3] [--mb 16]   (a pull from the test registry through the CRI runtime against ctr pull on the same containerd; needs cri:up, registry:env)
       npm run bench -- --scenario docker-pull [--rounds 5] [--mb 16]  (the same through the Docker runtime against docker pull; needs docker:up, registry:env)`;

/** Scenarios that are benches of their own (bench/NAME.mjs, own process); the others are probe-worker loads (`SCENARIOS`). */
const SEPARATE_SCENARIOS = ['check', 'simulate', 'stream', 'kubelet', 'fleet', 'rollout', 'check-cluster', 'cri-pull', 'docker-pull'];

/**
 * The scenario asked for with `--scenario NAME` when it is a bench of its own (bench/NAME.mjs),
 * or undefined for the probe-worker bench (and its scenarios, such as `node`).
 * @param {readonly string[]} argv
 * @returns {string | undefined}
 */
export function scenarioOf(argv) {
  const at = argv.findIndex((a) => a === '--scenario' || a.startsWith('--scenario='));
  if (at < 0) return undefined;
  const arg = argv[at] ?? '';
  const name = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[at + 1];
  if (name !== undefined && name in SCENARIOS) return undefined;
  const all = [...Object.keys(SCENARIOS), ...SEPARATE_SCENARIOS];
  if (name === undefined || !SEPARATE_SCENARIOS.includes(name)) throw new Error(`--scenario must be one of ${all.join(', ')}`);
  return name;
}

/**
 * @param {readonly string[]} argv  Arguments after the script name.
 * @returns {BenchOptions}
 */
export function parseOptions(argv) {
  /** @type {Map<string, string>} */
  const values = new Map();
  const flags = new Set();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (['--baseline', '--idle', '--cpu-prof'].includes(name)) {
      flags.add(name);
      continue;
    }
    if (!['--handler', '--workers', '--period', '--duration', '--warmup', '--timeout', '--containers-per-pod', '--target', '--scenario', '--probe-close'].includes(name)) {
      throw new Error(`unknown option ${JSON.stringify(arg)}`);
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new Error(`${name} needs a value`);
    values.set(name, value);
  }
  const handler = values.get('--handler') ?? 'http';
  if (!HANDLERS.includes(handler)) throw new Error(`--handler must be one of ${HANDLERS.join(', ')}`);
  const idle = flags.has('--idle');
  const probeClose = values.get('--probe-close') ?? 'fin';
  if (probeClose !== 'fin' && probeClose !== 'reset') throw new Error('--probe-close must be fin or reset');
  const scenario = values.get('--scenario');
  if (scenario !== undefined && !(scenario in SCENARIOS)) throw new Error(`--scenario must be one of ${Object.keys(SCENARIOS).join(', ')}`);
  const defaults = scenario === undefined ? undefined : SCENARIOS[/** @type {keyof typeof SCENARIOS} */ (scenario)];
  const periodS = positive(values, '--period', defaults?.periodS ?? (idle ? 3600 : 1));
  const options = {
    handler: /** @type {Handler} */ (handler),
    workers: Math.trunc(positive(values, '--workers', 1000)),
    periodS,
    durationS: positive(values, '--duration', defaults?.durationS ?? (idle ? 5 : 10)),
    // Idle runs have no warm-up: nothing probes.
    warmupS: idle ? 0 : positive(values, '--warmup', periodS, true),
    timeoutS: positive(values, '--timeout', defaults?.timeoutS ?? 1),
    containersPerPod: Math.trunc(positive(values, '--containers-per-pod', 1)),
    target: values.get('--target'),
    baseline: flags.has('--baseline'),
    idle,
    cpuProf: flags.has('--cpu-prof'),
    scenario,
    probeClose: /** @type {'fin' | 'reset'} */ (probeClose),
  };
  if (options.target !== undefined && handler === 'exec') throw new Error('--target makes no sense for exec');
  if (options.target !== undefined) parseTarget(handler, options.target); // fail early
  return options;
}

/**
 * @param {Map<string, string>} values
 * @param {string} name
 * @param {number} fallback
 * @param {boolean} [zeroOk]
 */
function positive(values, name, fallback, zeroOk = false) {
  const text = values.get(name);
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0 || (n === 0 && !zeroOk)) throw new Error(`${name} must be a positive number`);
  return n;
}

/**
 * Where to probe: a URL for http, HOST:PORT for tcp and grpc.
 * @param {string} handler
 * @param {string} text
 * @returns {Target}
 */
export function parseTarget(handler, text) {
  if (handler === 'http') {
    const url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('--target must be an http(s) URL');
    const https = url.protocol === 'https:';
    return {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port || (https ? 443 : 80)),
      path: `${url.pathname}${url.search}`,
      scheme: https ? 'HTTPS' : 'HTTP',
    };
  }
  const match = /^\[?([^\]]*?)\]?:(\d+)$/.exec(text);
  if (!match) throw new Error('--target must be HOST:PORT');
  return { host: match[1] || '127.0.0.1', port: Number(match[2]), path: '/healthz', scheme: 'HTTP' };
}
