/**
 * Just enough of a Kubernetes API client for bench/kubelet.mjs: JSON requests with the admin
 * client certificate of the kubeconfig `npm run cluster:up` writes. (The oracle has its own in
 * TypeScript, test/oracle/kube-api.ts; the bench runs as plain .mjs without a build step.)
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import yaml from 'js-yaml';

/**
 * @param {string} kubeconfigPath
 * @returns {(method: string, path: string, body?: unknown) => Promise<{ status: number, body: any }>}
 */
export function kubeApi(kubeconfigPath) {
  const config = /** @type {any} */ (yaml.load(readFileSync(kubeconfigPath, 'utf8')));
  const cluster = config?.clusters?.[0]?.cluster;
  const user = config?.users?.[0]?.user;
  if (cluster === undefined || user === undefined) throw new Error(`${kubeconfigPath}: no cluster or user`);
  const server = new URL(cluster.server);
  const tls = {
    ca: readFileSync(cluster['certificate-authority']),
    cert: readFileSync(user['client-certificate']),
    key: readFileSync(user['client-key']),
  };
  return (method, path, body) =>
    new Promise((resolve, reject) => {
      const req = request(
        { method, host: server.hostname, port: server.port, path, ...tls, headers: { accept: 'application/json', 'content-type': 'application/json' }, timeout: 30_000 },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => {
            try {
              resolve({ status: res.statusCode ?? 0, body: text === '' ? {} : JSON.parse(text) });
            } catch (err) {
              reject(err);
            }
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 30 s`)));
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
}
