/**
 * The part of the kubelet's authenticated API (port 10250, pkg/kubelet/server) that
 * `kubectl logs` needs: the API server proxies `GET /containerLogs/{namespace}/{pod}/{container}`
 * to the node's `daemonEndpoints.kubeletEndpoint.Port` over HTTPS, presenting its kubelet
 * client certificate (`--kubelet-client-certificate`) and checking the node's serving
 * certificate (`--kubelet-certificate-authority`). Clients are authenticated by a certificate
 * of the client CA (`--client-ca-file`), as the kubelet's x509 authentication does; every
 * authenticated client is allowed (the kubelet would ask the API server, webhook
 * authorization). `exec`, `attach` and `port-forward` (SPDY/WebSocket streams) are not served.
 */
import { closeSync, openSync, readSync, fstatSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { dirname, join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Pod } from '../api/types.js';
import type { ContainerRuntime, RuntimeContainerStatus } from '../runtime/types.js';
import type { Clock } from '../util/clock.js';
import { formatLine, parseCriLines, parseLogOptions, rawLines, selectLines, type LogLine, type LogOptions } from './container-logs.js';

/** How often a followed log file is read for what was added. */
const FOLLOW_POLL_MS = 250;

export interface KubeletServerOptions {
  host: string;
  port: number;
  /** PEM serving certificate and key (`--tls-cert-file`, `--tls-private-key-file`). */
  cert: string | Buffer;
  key: string | Buffer;
  /** PEM CA whose certificates authenticate clients (`--client-ca-file`). */
  clientCA: string | Buffer;
  /** The pods as the kubelet last generated their status. */
  pods: () => readonly Pod[];
  runtime: Pick<ContainerRuntime, 'containerStatus' | 'containerLogs' | 'runsImages'>;
  clock: Clock;
}

export interface KubeletServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startKubeletServer(options: KubeletServerOptions): Promise<KubeletServer> {
  const follows = new Set<() => void>();
  const server: Server = createServer(
    { cert: options.cert, key: options.key, ca: options.clientCA, requestCert: true, rejectUnauthorized: true },
    (req, res) => handle(options, req, res, follows),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : options.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const end of follows) end();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function writeError(res: ServerResponse, code: number, message: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(message);
}

function handle(options: KubeletServerOptions, req: IncomingMessage, res: ServerResponse, follows: Set<() => void>): void {
  const url = new URL(req.url ?? '/', 'https://node');
  const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(url.pathname);
  if (req.method !== 'GET' || !m) {
    writeError(res, 404, '404 page not found\n');
    return;
  }
  const [namespace, podName, containerName] = [m[1], m[2], m[3]].map((x) => decodeURIComponent(x ?? ''));
  let logOptions: LogOptions;
  try {
    logOptions = parseLogOptions(url.searchParams);
  } catch {
    writeError(res, 400, '{"message": "Unable to decode query."}');
    return;
  }
  const pod = options.pods().find((p) => p.metadata?.namespace === namespace && p.metadata?.name === podName);
  if (!pod) {
    writeError(res, 404, `pod "${podName ?? ''}" does not exist`);
    return;
  }
  const inSpec = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].some((c) => c.name === containerName);
  if (!inSpec) {
    writeError(res, 404, `container "${containerName ?? ''}" not found in pod "${podName ?? ''}"`);
    return;
  }
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  const cs = statuses.find((s) => s.name === containerName);
  const id = logOptions.previous ? cs?.lastState?.terminated?.containerID : cs?.containerID;
  let container = id ? options.runtime.containerStatus(id) : undefined;
  if (logOptions.previous && id && !container && cs?.containerID) {
    // The runtime forgot the instance it replaced; its log file stays beside the current one's (`<attempt>.log`).
    const current = options.runtime.containerStatus(cs.containerID);
    const path = current?.logPath ? join(dirname(current.logPath), `${Math.max(0, (cs.restartCount ?? 1) - 1)}.log`) : undefined;
    if (current && path && path !== current.logPath && existsSync(path)) container = { ...current, id, state: 'exited', logPath: path };
  }
  if (!id || !container) {
    const what = logOptions.previous ? `previous terminated container "${containerName ?? ''}"` : `container "${containerName ?? ''}"`;
    writeError(res, 400, `${what} in pod "${podName ?? ''}" not found`);
    return;
  }
  res.writeHead(200, { 'Content-Type': 'text/plain' });
  streamLogs(options, container, logOptions, res, follows);
}

/** Sends the selected lines, then with `follow` what is added until the container stops or the client goes. */
function streamLogs(options: KubeletServerOptions, container: RuntimeContainerStatus, logOptions: LogOptions, res: ServerResponse, follows: Set<() => void>): void {
  let budget = logOptions.limitBytes ?? Infinity;
  /** Writes lines within the byte limit; false once it is reached. */
  const send = (lines: readonly LogLine[]): boolean => {
    for (const line of lines) {
      const text = Buffer.from(formatLine(line, logOptions.timestamps));
      if (text.length >= budget) {
        res.write(text.subarray(0, budget));
        budget = 0;
        return false;
      }
      budget -= text.length;
      res.write(text);
    }
    return true;
  };
  const path = options.runtime.runsImages && container.logPath && existsSync(container.logPath) ? container.logPath : undefined;
  if (!path) {
    // No CRI log file: the runtime's own (raw) output; nothing to follow.
    send(selectLines(rawLines(options.runtime.containerLogs(container.id)), logOptions, options.clock.now()));
    res.end();
    return;
  }
  const pending = { text: '' };
  let offset = 0;
  const readNew = (): LogLine[] => {
    const { text, next } = readFrom(path, offset);
    // Only whole lines: a line still being written is read at the next poll.
    const complete = text.lastIndexOf('\n') + 1;
    offset = next - (Buffer.byteLength(text) - Buffer.byteLength(text.slice(0, complete)));
    return parseCriLines(text.slice(0, complete), pending);
  };
  if (!send(selectLines(readNew(), logOptions, options.clock.now())) || !logOptions.follow) {
    res.end();
    return;
  }
  let timer: unknown;
  const end = (): void => {
    options.clock.clearTimeout(timer);
    follows.delete(end);
    res.end();
  };
  follows.add(end);
  res.on('close', end);
  const poll = (): void => {
    timer = options.clock.setTimeout(() => {
      if (!send(readNew())) return end();
      const now = options.runtime.containerStatus(container.id) ?? container;
      // The container ended: what it wrote last is in the file already.
      if (!now || now.state === 'exited') {
        send(readNew());
        return end();
      }
      poll();
    }, FOLLOW_POLL_MS);
  };
  poll();
}

/** The file from `offset` on, and the offset after it. */
function readFrom(path: string, offset: number): { text: string; next: number } {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    if (size <= offset) return { text: '', next: size < offset ? 0 : offset };
    const buffer = Buffer.alloc(size - offset);
    readSync(fd, buffer, 0, buffer.length, offset);
    return { text: buffer.toString('utf8'), next: size };
  } catch {
    return { text: '', next: offset };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
