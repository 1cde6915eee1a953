/**
 * The baseline's probes: the least code that probes the way the kubelet does — a fresh
 * connection (or process) per probe, a timeout, at most 10 KiB of output read — with none of
 * probelet's fidelity work (Go wording, header order, redirects policy, RST on close, metrics).
 * Each resolves to "healthy?" and never rejects.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { Client, Metadata, credentials } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';

const MAX_OUTPUT_BYTES = 10 * 1024;

/** @typedef {import('./options.mjs').Handler} Handler */
/** @typedef {import('./options.mjs').Target} Target */

/**
 * @param {Handler} handler
 * @param {Target} target
 * @param {number} timeoutMs
 * @returns {() => Promise<boolean>}
 */
export function baselineProbe(handler, target, timeoutMs) {
  switch (handler) {
    case 'http':
      return () => httpProbe(target, timeoutMs);
    case 'tcp':
      return () => tcpProbe(target, timeoutMs);
    case 'grpc':
      return () => grpcProbe(target, timeoutMs);
    case 'exec':
      return () => execProbe(timeoutMs);
  }
}

/**
 * A settle-once promise with a timeout; `onTimeout` cleans up whatever is in flight.
 * @param {number} timeoutMs
 * @param {(finish: (ok: boolean) => void) => (() => void)} start  Returns the timeout clean-up.
 * @returns {Promise<boolean>}
 */
function bounded(timeoutMs, start) {
  return new Promise((resolve) => {
    let done = false;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    /** @param {boolean} ok */
    const finish = (ok) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(ok);
    };
    const onTimeout = start(finish);
    timer = setTimeout(() => {
      onTimeout();
      finish(false);
    }, timeoutMs);
  });
}

/**
 * @param {Target} t
 * @param {number} timeoutMs
 */
function httpProbe(t, timeoutMs) {
  return bounded(timeoutMs, (finish) => {
    const client = t.scheme === 'HTTPS' ? https : http;
    const req = client.get(
      { host: t.host, port: t.port, path: t.path, agent: false, rejectUnauthorized: false, headers: { 'User-Agent': 'kube-probe/bench' } },
      (res) => {
        const ok = (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400;
        let size = 0;
        res.on('data', (/** @type {Buffer} */ chunk) => {
          size += chunk.length;
          if (size < MAX_OUTPUT_BYTES) return;
          req.destroy();
          finish(ok);
        });
        res.on('end', () => finish(ok));
        res.on('error', () => finish(false));
      },
    );
    req.on('error', () => finish(false));
    return () => req.destroy();
  });
}

/**
 * @param {Target} t
 * @param {number} timeoutMs
 */
function tcpProbe(t, timeoutMs) {
  return bounded(timeoutMs, (finish) => {
    const socket = net.connect({ host: t.host, port: t.port });
    socket.once('connect', () => {
      socket.destroy();
      finish(true);
    });
    socket.on('error', () => finish(false));
    return () => socket.destroy();
  });
}

const CHECK = healthService['Check'];

/**
 * A fresh client per probe, with a private subchannel pool: grpc-js would otherwise share one
 * connection between all clients of a target, which is not how the kubelet probes.
 * @param {Target} t
 * @param {number} timeoutMs
 */
function grpcProbe(t, timeoutMs) {
  return bounded(timeoutMs, (finish) => {
    if (!CHECK) throw new Error('grpc-health-check has no Check method');
    const client = new Client(`${t.host}:${t.port}`, credentials.createInsecure(), {
      'grpc.use_local_subchannel_pool': 1,
    });
    const close = () => client.close();
    client.makeUnaryRequest(
      CHECK.path,
      CHECK.requestSerialize,
      CHECK.responseDeserialize,
      { service: '' },
      new Metadata(),
      { deadline: Date.now() + timeoutMs },
      (err, response) => {
        close();
        finish(!err && /** @type {{ status?: unknown } | undefined} */ (response)?.status === 'SERVING');
      },
    );
    return close;
  });
}

/** @param {number} timeoutMs */
function execProbe(timeoutMs) {
  return bounded(timeoutMs, (finish) => {
    const child = spawn('/bin/true', [], { stdio: ['ignore', 'pipe', 'pipe'] });
    /** @type {Buffer[]} */
    const kept = [];
    let size = 0;
    /** @param {Buffer} chunk */
    const keep = (chunk) => {
      if (size >= MAX_OUTPUT_BYTES) return;
      const part = chunk.subarray(0, MAX_OUTPUT_BYTES - size);
      kept.push(part);
      size += part.length;
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', () => finish(false));
    child.on('close', (code) => finish(code === 0));
    return () => child.kill('SIGKILL');
  });
}
