/**
 * Node e2e "Container Lifecycle Hook" (test/e2e/common/node/lifecycle_hook.go: "should
 * execute poststart/prestop exec/http hook properly"), on the real process runtime and real
 * clock: the hook runs in the container's environment (exec) or reaches a real server on
 * 127.0.0.1 (httpGet, `User-Agent: kube-lifecycle/1.35`); a preStop runs before the
 * container gets its SIGTERM.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { container, run, sh, startKubelet, stopKubelets, until, waitRunning, pod } from './helpers.js';

const servers: Server[] = [];
afterEach(async ({ task }) => {
  await stopKubelets(task.id);
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

describe.concurrent('Container Lifecycle Hook', () => {
  it('exec hooks: postStart runs once the container has started, preStop before its SIGTERM', async ({ task }) => {
    const h = startKubelet(task.id);
    const log = join(h.dir, 'order');
    // The container notes its SIGTERM; the hooks note themselves, in the container's env.
    const app = container(h, 'app', sh(`trap 'echo term >> ${log}; exit 0' TERM; while true; do sleep 0.1; done`), {
      env: [{ name: 'WHO', value: 'hook' }],
      lifecycle: {
        postStart: { exec: { command: sh(`echo "poststart $WHO" >> ${log}`) } },
        preStop: { exec: { command: sh(`echo "prestop $WHO" >> ${log}`) } },
      },
    });
    const [admitted] = run(h, pod('hooks', [app], { terminationGracePeriodSeconds: 10 }));
    await waitRunning(h, 'hooks', 'app');
    await until(() => existsSync(log) || undefined, 5_000);
    expect(readFileSync(log, 'utf8')).toBe('poststart hook\n');
    await h.kubelet.deletePod(admitted!.metadata!.uid!);
    expect(readFileSync(log, 'utf8')).toBe('poststart hook\nprestop hook\nterm\n');
  });

  it('httpGet hooks reach the server with kube-lifecycle/1.35, postStart at the start, preStop at the deletion', async ({ task }) => {
    const h = startKubelet(task.id);
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.url} ${req.headers['user-agent']}`);
      res.end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const app = container(h, 'app', ['sleep', '600'], {
      lifecycle: {
        postStart: { httpGet: { path: '/poststart', port, host: '127.0.0.1', scheme: 'HTTP' } },
        preStop: { httpGet: { path: '/prestop', port, host: '127.0.0.1', scheme: 'HTTP' } },
      },
    });
    const [admitted] = run(h, pod('http-hooks', [app], { terminationGracePeriodSeconds: 10 }));
    await waitRunning(h, 'http-hooks', 'app');
    await until(() => (seen.length > 0 ? true : undefined), 5_000);
    expect(seen).toEqual(['/poststart kube-lifecycle/1.35']);
    await h.kubelet.deletePod(admitted!.metadata!.uid!);
    expect(seen).toEqual(['/poststart kube-lifecycle/1.35', '/prestop kube-lifecycle/1.35']);
  });
});
