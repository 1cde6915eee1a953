/**
 * The fleet bench's reach into the cluster and the machine: kubectl and client-node on the
 * KUBECONFIG's admin identity, watches that resume, a process's CPU and peak RSS from /proc, the
 * control plane's processes (cluster/up.sh's pid files) and the API server's write counts.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { parseRequestTotals } from './fleet-report.mjs';

/** The KUBECONFIG's first file (an admin identity: a fleet writes every one of its nodes). */
export function kubeconfigPath() {
  const path = process.env.KUBECONFIG?.split(':')[0];
  if (!path) throw new Error('no KUBECONFIG: run `npm run cluster:up`, then eval "$(npm run -s cluster:env)"');
  return path;
}

/**
 * @param {string[]} args
 * @param {string} [input]
 */
export const kubectl = (args, input) =>
  execFileSync('kubectl', ['--kubeconfig', kubeconfigPath(), ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...(input ? { input } : {}) });

/**
 * kubectl without blocking the event loop: the watches keep their clocks while it runs.
 * @param {string[]} args
 * @param {string} [input]
 * @returns {Promise<string>}
 */
export function kubectlAsync(args, input) {
  return new Promise((resolve, reject) => {
    const child = execFile('kubectl', ['--kubeconfig', kubeconfigPath(), ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
    );
    child.stdin?.end(input ?? '');
  });
}

/** @type {KubeConfig | undefined} */
let loaded;
export function kubeConfig() {
  if (!loaded) {
    loaded = new KubeConfig();
    loaded.loadFromFile(kubeconfigPath());
  }
  return loaded;
}

/**
 * Follows a collection with a watch (client-node's; no list of 5,000 pods every 2 s, which
 * loaded the machine it measures): `onEvent` gets each object as the API serializes it; a watch
 * the server ends resumes from the last version seen. Returns the stop.
 * @param {string} path
 * @param {(type: string, object: any) => void} onEvent
 */
export function follow(path, onEvent) {
  let stopped = false;
  /** @type {AbortController | undefined} */ let current;
  /** @type {string | undefined} */ let resourceVersion;
  const start = () => {
    if (stopped) return;
    new Watch(kubeConfig())
      .watch(path, { allowWatchBookmarks: true, ...(resourceVersion ? { resourceVersion } : {}) }, (type, object) => {
        if (object?.metadata?.resourceVersion) resourceVersion = object.metadata.resourceVersion;
        if (type === 'ERROR') resourceVersion = undefined;
        else if (type !== 'BOOKMARK') onEvent(type, object);
      }, () => setTimeout(start, 500))
      .then((c) => (stopped ? c.abort() : (current = c)), () => setTimeout(start, 500));
  };
  start();
  return () => {
    stopped = true;
    current?.abort();
  };
}

const TICKS = 100;
/**
 * A process's CPU (user + system, seconds), RSS now (VmRSS, MB) and peak RSS (VmHWM, MB), or
 * undefined once it is gone.
 * @param {number} pid
 */
export function procSample(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpu = (Number(f[11]) + Number(f[12])) / TICKS;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const hwm = /VmHWM:\s+(\d+)/.exec(status);
    const rss = /VmRSS:\s+(\d+)/.exec(status);
    return { cpuS: cpu, rssMB: rss ? Number(rss[1]) / 1024 : 0, peakRssMB: hwm ? Number(hwm[1]) / 1024 : 0 };
  } catch {
    return undefined;
  }
}

/**
 * The pids of kube-apiserver and etcd when KUBECONFIG is a `cluster:up` one (`$D/admin.kubeconfig`,
 * pid files `$D/run/NAME.pid` holding "PID STARTTIME"); undefined for what is not found (another
 * cluster: the report then shows no control-plane CPU).
 */
export function controlPlanePids() {
  const dir = dirname(kubeconfigPath());
  const pid = (/** @type {string} */ name) => {
    const file = join(dir, 'run', `${name}.pid`);
    if (!existsSync(file)) return undefined;
    const n = Number(readFileSync(file, 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(n) && n > 0 && procSample(n) ? n : undefined;
  };
  return { apiserver: pid('kube-apiserver'), etcd: pid('etcd') };
}

/** The API server's write requests so far, by `VERB resource` (its /metrics, read with kubectl). */
export async function requestTotals() {
  return parseRequestTotals(await kubectlAsync(['get', '--raw', '/metrics']));
}
