/**
 * The machine's load beside an oracle run, so that "late" is measured and not guessed: the
 * load average sampled through the run, and the real kubelet's own lateness read from its
 * metrics on its own port (the PLEG's relist interval beyond its 1 s
 * period, and how long its pod workers' syncs took). And a load of our own, bounded in time,
 * for the "busy machine" runs: CPU spinners and a writer, each a child process that ends by
 * itself at its deadline even if this one dies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg, tmpdir } from 'node:os';
import { PLEG_RELIST_PERIOD_MS } from '../../src/prober/start-latency.js';
import type { KubeApi } from './kube-api.js';

/** The load average (1 min) seen during a run. */
export interface LoadSample {
  mean: number;
  max: number;
}

/** Samples `loadavg()[0]` every `everyMs` until stopped. */
export function sampleLoad(everyMs = 5_000): { stop(): LoadSample } {
  const seen: number[] = [loadavg()[0] ?? 0];
  const timer = setInterval(() => seen.push(loadavg()[0] ?? 0), everyMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      seen.push(loadavg()[0] ?? 0);
      const round = (x: number) => Math.round(x * 10) / 10;
      return { mean: round(seen.reduce((a, b) => a + b, 0) / seen.length), max: round(Math.max(...seen)) };
    },
  };
}

/** One Prometheus histogram's cumulative buckets (upper bound in s → count), its sum and count. */
interface Histogram {
  buckets: [number, number][];
  sum: number;
  count: number;
}

/** Sums a histogram's series (all label sets) from a Prometheus text page. */
function histogram(page: string, name: string): Histogram {
  const buckets = new Map<number, number>();
  let sum = 0;
  let count = 0;
  for (const line of page.split('\n')) {
    if (!line.startsWith(name)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (!Number.isFinite(value)) continue;
    const rest = line.slice(name.length);
    if (rest.startsWith('_bucket')) {
      const le = /le="([^"]+)"/.exec(rest)?.[1];
      const bound = le === '+Inf' ? Infinity : Number(le);
      buckets.set(bound, (buckets.get(bound) ?? 0) + value);
    } else if (rest.startsWith('_sum')) sum += value;
    else if (rest.startsWith('_count')) count += value;
  }
  return { buckets: [...buckets.entries()].sort((a, b) => a[0] - b[0]), sum, count };
}

/** What happened between two pages of one histogram: its mean and the bucket bound holding the 99th percentile. */
function between(before: Histogram, after: Histogram): { mean: number; p99: number; count: number } {
  const count = after.count - before.count;
  if (count <= 0) return { mean: 0, p99: 0, count: 0 };
  const prior = new Map(before.buckets);
  const p99 = after.buckets.find(([le, n]) => n - (prior.get(le) ?? 0) >= 0.99 * count)?.[0] ?? Infinity;
  return { mean: (after.sum - before.sum) / count, p99, count };
}

/** The kubelet's own lateness over a run, in seconds. */
export interface KubeletLateness {
  /** The PLEG relist interval's 99th percentile beyond its period (a late relist shows changes late). */
  relistLateP99: number;
  /** A pod worker sync's mean and 99th percentile duration. */
  syncMean: number;
  syncP99: number;
  /** The slack this gives the rule: a late relist plus a slow sync, both at their 99th percentile. */
  seconds: number;
}

const RELIST_INTERVAL = 'kubelet_pleg_relist_interval_seconds';
const POD_WORKER = 'kubelet_pod_worker_duration_seconds';

/** Reads the kubelet's metrics now and, when `finish` is called, says how late it ran since. Undefined when the node proxy does not answer. */
export async function watchKubeletLateness(api: KubeApi, node: string): Promise<{ finish(): Promise<KubeletLateness | undefined> } | undefined> {
  // Read on 127.0.0.1, where the kubelet serves too (and, since cluster:up gives it `--node-ip`, on
  // the node's address), with the admin certificate, which its client CA and webhook authorization accept.
  let port: number | undefined;
  try {
    const n = await api.call<{ status?: { daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } } }>('GET', `/api/v1/nodes/${node}`);
    port = n.body.status?.daemonEndpoints?.kubeletEndpoint?.Port;
  } catch {
    return undefined;
  }
  if (port === undefined) return undefined;
  const page = async (): Promise<string | undefined> => {
    try {
      const r = await api.text('/metrics', port);
      return r.status === 200 ? r.text : undefined;
    } catch {
      return undefined;
    }
  };
  const first = await page();
  if (first === undefined) return undefined;
  return {
    async finish() {
      const last = await page();
      if (last === undefined) return undefined;
      const relist = between(histogram(first, RELIST_INTERVAL), histogram(last, RELIST_INTERVAL));
      const sync = between(histogram(first, POD_WORKER), histogram(last, POD_WORKER));
      const finite = (x: number) => (Number.isFinite(x) ? x : 60);
      const relistLateP99 = Math.max(0, finite(relist.p99) - PLEG_RELIST_PERIOD_MS / 1000);
      const round = (x: number) => Math.round(x * 100) / 100;
      return {
        relistLateP99: round(relistLateP99),
        syncMean: round(sync.mean),
        syncP99: round(finite(sync.p99)),
        seconds: round(relistLateP99 + finite(sync.p99)),
      };
    },
  };
}

/**
 * Loads the machine for `seconds`: `cpus` processes spinning and one writing and syncing
 * `ioMegabytes` at a time to a temporary file, over and over. Each child ends by itself at the
 * deadline (so a killed oracle leaves nothing behind for long); `stop()` ends them sooner.
 */
export function startLoad(options: { seconds: number; cpus: number; ioMegabytes?: number }): { stop(): void } {
  const deadline = Date.now() + options.seconds * 1000;
  const children: ChildProcess[] = [];
  const node = (code: string): void => {
    const child = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
    children.push(child);
  };
  for (let i = 0; i < options.cpus; i++) node(`const end=${deadline};while(Date.now()<end){for(let j=0;j<1e6;j++);}`);
  const mb = options.ioMegabytes ?? 64;
  const file = `${tmpdir()}/probelet-oracle-load-${process.pid}`;
  node(
    `const fs=require('fs');const end=${deadline};const b=Buffer.alloc(1<<20,7);const f=${JSON.stringify(file)};` +
      `process.on('SIGTERM',()=>{fs.rmSync(f,{force:true});process.exit(0);});` +
      `try{while(Date.now()<end){const fd=fs.openSync(f,'w');for(let i=0;i<${mb}&&Date.now()<end;i++)fs.writeSync(fd,b);fs.fsyncSync(fd);fs.closeSync(fd);}}finally{fs.rmSync(f,{force:true});}`,
  );
  return {
    stop() {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
    },
  };
}
