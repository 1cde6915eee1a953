/**
 * Shared by the CLI tests: run `main()` in-process with captured output, run the real
 * executable, and start the real local servers the probes are aimed at.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { expect } from 'vitest';
import { main } from '../../src/cli/main.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `probelet ARGS` in this process: fast, and every byte written is captured. */
export async function runCli(args: string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
  });
  return { code, stdout, stderr };
}

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = fileURLToPath(new URL('../../bin/probelet.js', import.meta.url));

/**
 * Runs a script of the built package (`npm run build` first) as its own process, so the
 * exit status is the real one. Killed after `killAfterMs` so a hang fails instead of stalling.
 */
export async function runNode(
  script: string,
  args: string[],
  { killAfterMs = 20_000, env = process.env }: { killAfterMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<CliRun & { signal: string | null }> {
  const child = spawn(process.execPath, [script, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  const [code, signal] = (await once(child, 'close')) as [number | null, string | null];
  clearTimeout(killer);
  return { code: code ?? -1, signal, stdout, stderr };
}

export interface TestHttpServer {
  port: number;
  /** Headers of every request received, in order. */
  requests: http.IncomingHttpHeaders[];
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1:0; `handler` may leave a request unanswered. */
export async function startHttpServer(handler: http.RequestListener): Promise<TestHttpServer> {
  const requests: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.headers);
    handler(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A TCP port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A TCP listener on 127.0.0.1:0 that accepts and drops connections. */
export async function startTcpServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A standard grpc.health.v1 server on 127.0.0.1:0 answering with `statuses` ('' = whole server). */
export async function startGrpcHealthServer(
  statuses: Record<string, 'SERVING' | 'NOT_SERVING'>,
): Promise<{ port: number; close(): void }> {
  const server = new Server();
  new HealthImplementation(statuses).addToServer(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  return { port, close: () => server.forceShutdown() };
}

/** The single JSON document `--output json` printed. */
export function parseJson(stdout: string): Record<string, unknown> {
  expect(stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(stdout) as Record<string, unknown>;
}
