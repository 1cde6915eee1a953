/**
 * Just enough of a Kubernetes API client for the oracle: requests and watches with the admin
 * client certificate of the kubeconfig `npm run cluster:up` writes. The one hand-written client
 * left: `probelet node` and the benchmarks use @kubernetes/client-node; the oracle's calls by
 * path (four of them) stay here, as they were written before the project had a client library.
 */
import { readFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { load } from 'js-yaml';

export interface KubeApi {
  call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** A GET whose answer is text; `port`: another server on the same host with the same client certificate (the kubelet's). */
  text(path: string, port?: number): Promise<{ status: number; text: string }>;
  /** Streams a watch's objects to `onEvent` until the returned stop is called. */
  watch<T>(path: string, onEvent: (type: string, object: T) => void): () => void;
}

interface Kubeconfig {
  clusters: { cluster: { server: string; 'certificate-authority': string } }[];
  users: { user: { 'client-certificate': string; 'client-key': string } }[];
}

export function kubeApi(kubeconfigPath: string): KubeApi {
  const config = load(readFileSync(kubeconfigPath, 'utf8')) as Kubeconfig;
  const cluster = config.clusters[0]?.cluster;
  const user = config.users[0]?.user;
  if (cluster === undefined || user === undefined) throw new Error(`${kubeconfigPath}: no cluster or user`);
  const server = new URL(cluster.server);
  const tls = {
    ca: readFileSync(cluster['certificate-authority']),
    cert: readFileSync(user['client-certificate']),
    key: readFileSync(user['client-key']),
  };
  const options = (method: string, path: string, port: string | number = server.port): RequestOptions => ({
    method,
    host: server.hostname,
    port,
    path,
    ...tls,
    headers: { accept: 'application/json', 'content-type': 'application/json' },
  });
  const send = (method: string, path: string, body?: unknown, port?: number): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const req = request(options(method, path, port), (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  return {
    call: async (method, path, body) => {
      const { status, text } = await send(method, path, body);
      return { status, body: (text === '' ? {} : JSON.parse(text)) as never };
    },
    text: (path, port) => send('GET', path, undefined, port),
    watch: (path, onEvent) => {
      const req = request(options('GET', path), (res) => {
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let nl: number;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            if (line.trim() === '') continue;
            const event = JSON.parse(line) as { type: string; object: never };
            onEvent(event.type, event.object);
          }
        });
      });
      req.on('error', () => undefined);
      req.end();
      return () => req.destroy();
    },
  };
}
