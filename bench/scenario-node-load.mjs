#!/usr/bin/env node
/**
 * The load of `npm run bench -- --scenario node` (see scenario-node.mjs), in a process of
 * its own: 110 pods on the real ProbeManager, each container with a liveness and a
 * readiness probe at kubelet defaults, handlers mixed as on a typical node. Argument: JSON
 * `{ options, http, grpc }` (the targets' ports). Prints the run's JSON line.
 */
import { busyRun } from './lib/busy-run.mjs';
import { managerLoad } from './lib/probelet-load.mjs';
import { buildPods, handlerSpec } from './lib/pods.mjs';

/** @typedef {import('./lib/options.mjs').Handler} Handler */

export const NODE_PODS = 110;

/**
 * Handler of pod `p`, out of every ten pods: 6 HTTP, 2 TCP, 1 gRPC, 1 exec — HTTP checks
 * dominate real nodes; TCP for databases and caches; gRPC and exec are the minority.
 * @type {readonly Handler[]}
 */
export const NODE_MIX = ['http', 'http', 'tcp', 'http', 'grpc', 'http', 'tcp', 'http', 'exec', 'http'];

const config = JSON.parse(process.argv[2] ?? '{}');
/** @type {import('./lib/options.mjs').BenchOptions} */
const options = config.options;
const target = (/** @type {number} */ port) => ({ host: '127.0.0.1', port, path: '/healthz', scheme: /** @type {const} */ ('HTTP') });
const http = target(config.http);
const grpc = target(config.grpc);

const limitMs = (options.warmupS + options.durationS + 90) * 1000;
setTimeout(() => {
  process.stderr.write(`bench node scenario: still running after ${limitMs / 1000} s, giving up\n`);
  process.exit(3);
}, limitMs).unref();

const pods = buildPods({
  workers: NODE_PODS,
  containersPerPod: 1,
  handler: (p) => {
    const handler = NODE_MIX[p % NODE_MIX.length] ?? 'http';
    return handlerSpec(handler, handler === 'grpc' ? grpc : http);
  },
  liveness: true,
  periodS: options.periodS,
  timeoutS: options.timeoutS,
  podIP: http.host,
  started: true,
});
const { result } = await busyRun('probelet', options, http, (_o, _t, recorder) => managerLoad(pods, false, recorder));
const cpuPercent = Math.round((Number(result.cpuS) / Number(result.elapsedS)) * 1000) / 10;
const line = { scenario: 'node', pods: NODE_PODS, ...result, workers: NODE_PODS * 2, handler: 'mixed', cpuPercent };
process.stdout.write(`${JSON.stringify(line)}\n`, () => process.exit(0));
