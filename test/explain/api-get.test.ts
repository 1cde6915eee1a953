/**
 * `check --cluster` against an API server that sends too much: a real HTTP server on
 * 127.0.0.1 standing in for it. An answer without end, one that declares more than the limit,
 * and a list whose continue token never ends each stop the command with exit 2 and a message
 * naming the URL, the limit and how to raise it — never a process that fills its memory or
 * pages forever. The namespaces are listed in pages too.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runCheck, type CheckFlags } from '../../src/cli/check/check.js';
import { MAX_RESPONSE_MIB, MAX_RESPONSE_VAR } from '../../src/explain/api-get.js';

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

let server: Server;
let base = '';
let dir = '';
let handler: Handler;
/** Each request's path and query, as the server saw it. */
let requests: string[] = [];

beforeEach(async () => {
  requests = [];
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push(url.pathname + url.search);
    handler(req, res, url);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'probelet-api-get-'));
});

afterEach(async () => {
  vi.unstubAllEnvs();
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
  rmSync(dir, { recursive: true, force: true });
});

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** `check --cluster` (one namespace, or -A) on the server, through a kubeconfig as a user writes it. */
async function checkCluster(scope: { namespace: string } | { allNamespaces: true }): Promise<{ code: number; stderr: string }> {
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      // client-node speaks plain HTTP only to a server whose TLS is not verified anyway.
      `clusters: [{name: t, cluster: {server: "${base}", insecure-skip-tls-verify: true}}]`,
      'users: [{name: t, user: {}}]',
      'contexts: [{name: t, context: {cluster: t, user: t, namespace: default}}]',
      'current-context: t',
    ].join('\n'),
  );
  let stderr = '';
  const flags: CheckFlags = { output: 'json', failOn: 'never', startupTime: [], disable: [], cluster: true, kubeconfig, ...scope };
  const code = await runCheck([], flags, { stdout: () => undefined, stderr: (s) => void (stderr += s) });
  return { code, stderr };
}

describe('check --cluster: what one answer of the API server may hold', () => {
  it('an answer without end is cut off at the limit: exit 2, the URL, the limit and how to raise it', async () => {
    vi.stubEnv(MAX_RESPONSE_VAR, '1');
    let sent = 0;
    let cut = false;
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"kind":"DeploymentList","items":[');
      const chunk = Buffer.from(`${JSON.stringify({ metadata: { name: 'x'.repeat(200) } })},`.repeat(100));
      const more = (): void => {
        while (!res.destroyed && res.write(chunk)) sent += chunk.length;
        if (!res.destroyed) res.once('drain', more);
      };
      res.on('close', () => (cut = true));
      more();
    };
    const { code, stderr } = await checkCluster({ namespace: 'web' });
    expect(code).toBe(2);
    expect(stderr).toContain(`GET ${base}/apis/apps/v1/namespaces/web/deployments?limit=500: the API server's answer is larger than 1 MiB`);
    expect(stderr).toContain(`raise it with ${MAX_RESPONSE_VAR}=N`);
    await vi.waitFor(() => expect(cut).toBe(true));
    // What the server got out before the connection was closed: the limit and the sockets' buffers.
    expect(sent).toBeLessThan(16 * 2 ** 20);
  });

  it('an answer that declares more than the limit is refused before its body is read', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String((MAX_RESPONSE_MIB + 1) * 2 ** 20) });
      // Then nothing: only the header can tell.
      res.write('{');
    };
    const { code, stderr } = await checkCluster({ namespace: 'web' });
    expect(code).toBe(2);
    expect(stderr).toContain(`larger than ${MAX_RESPONSE_MIB} MiB`);
  });

  it(`${MAX_RESPONSE_VAR} that is no number of MiB: exit 2 naming it`, async () => {
    vi.stubEnv(MAX_RESPONSE_VAR, '2GB');
    handler = (_req, res) => json(res, 200, { items: [] });
    const { code, stderr } = await checkCluster({ namespace: 'web' });
    expect(code).toBe(2);
    expect(stderr).toContain(`${MAX_RESPONSE_VAR}=2GB: give a whole number of MiB from 1 to 511`);
    expect(requests).toEqual([]);
  });

  it('a continue token given back unchanged ends the listing with exit 2, not a loop', async () => {
    handler = (_req, res) => json(res, 200, { items: [], metadata: { continue: 'again' } });
    const { code, stderr } = await checkCluster({ namespace: 'web' });
    expect(code).toBe(2);
    expect(stderr).toContain(`GET /apis/apps/v1/namespaces/web/deployments: the API server gave the same continue token again`);
    expect(requests).toHaveLength(2);
  });

  it('an answer that is not JSON (a proxy\'s page): exit 2 naming the request, not a bare SyntaxError', async () => {
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Sign in to continue</body></html>');
    const { code, stderr } = await checkCluster({ namespace: 'web' });
    expect(code).toBe(2);
    expect(stderr).toContain('GET /apis/apps/v1/namespaces/web/deployments: the answer is not JSON ("<html><body>Sign in to continue</body></html>")');
  });

  it('-A without the right to list cluster-wide: the namespaces are listed in pages too', async () => {
    handler = (_req, res, url) => {
      if (url.pathname === '/apis/apps/v1/deployments') {
        json(res, 403, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'deployments.apps is forbidden' });
      } else if (url.pathname === '/api/v1/namespaces') {
        const first = url.searchParams.get('continue') === null;
        json(res, 200, { items: [{ metadata: { name: first ? 'a' : 'b' } }], metadata: first ? { continue: 'page2' } : {} });
      } else json(res, 200, { items: [] });
    };
    const { code, stderr } = await checkCluster({ allNamespaces: true });
    expect(code, stderr).toBe(0);
    expect(requests).toContain('/api/v1/namespaces?limit=500');
    expect(requests).toContain('/api/v1/namespaces?limit=500&continue=page2');
    expect(requests).toContain('/apis/apps/v1/namespaces/b/deployments?limit=500');
  });
});
