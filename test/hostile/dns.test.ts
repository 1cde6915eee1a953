/**
 * A name that never resolves must not get healthy pods killed (issue 33). Node's default
 * lookup runs getaddrinfo on libuv's four pool threads; HTTP probes of a name whose DNS server
 * drops every query held all four, and a healthy pod's `localhost` liveness probe waited behind
 * them until it timed out, three times, and was killed. Here: a DNS server on a loopback
 * address of its own that reads queries and never answers, a resolv.conf naming it, bind-mounted
 * over /etc/resolv.conf in a mount namespace of the run's own (`unshare -m`, as root), and the
 * built `probelet run` with both pods for a few seconds. The healthy pod is never Unhealthy;
 * the other's probes fail in Go's words for a lookup cut by the client's timeout.
 */
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, REPO_ROOT } from '../cli/helpers.js';
import { nothingLeft, runLines, scratchPerTest, testPod } from '../cli/run-child.js';

const canUnshare = process.getuid?.() === 0 && existsSync('/usr/bin/unshare');
const reason = canUnshare ? '' : ' (skipped: needs root and unshare(1) for a mount namespace with its own resolv.conf)';

const NAME = 'never-answers.probelet.test';

const scratchOf = scratchPerTest();

/** A DNS server that reads every query and answers none, on 127.53.x.y:53 (an address no one else uses). */
async function droppingDnsServer(): Promise<{ address: string; queries(): number }> {
  const address = `127.53.${1 + Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
  const socket = dgram.createSocket('udp4');
  let queries = 0;
  socket.on('message', () => queries++);
  socket.bind(53, address);
  await once(socket, 'listening');
  onTestFinished(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  return { address, queries: () => queries };
}

describe('a name that never resolves', () => {
  it.runIf(canUnshare)(`does not delay another probe: the healthy pod's localhost probe stays on time${reason}`, async () => {
    const s = scratchOf();
    const dns = await droppingDnsServer();
    const resolvConf = join(s.dir, 'resolv.conf');
    writeFileSync(resolvConf, `nameserver ${dns.address}\n`);
    const healthy = http.createServer((_req, res) => res.end('ok'));
    healthy.listen(0, '127.0.0.1');
    await once(healthy, 'listening');
    onTestFinished(() => new Promise<void>((resolve) => healthy.close(() => resolve())));
    const port = (healthy.address() as AddressInfo).port;

    const probe = (host: string, p: number): unknown => ({ httpGet: { host, port: p, path: '/' }, periodSeconds: 1, timeoutSeconds: 1, failureThreshold: 3 });
    const stuck = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'hostile-dns-stuck' },
      spec: {
        terminationGracePeriodSeconds: 1,
        // Six probes a second of a name the server never answers: more than libuv's four threads.
        containers: ['a', 'b', 'c'].map((name) => ({
          name,
          image: 'busybox',
          command: ['sleep', '300'],
          env: [{ name: 'PROBELET_TEST_MARKER', value: s.marker }],
          livenessProbe: { ...(probe(NAME, 80) as object), failureThreshold: 1000 },
          readinessProbe: probe(NAME, 80),
        })),
      },
    };
    const ok = testPod(s, 'hostile-dns-healthy', ['sleep', '300'], { livenessProbe: probe('localhost', port) }, { terminationGracePeriodSeconds: 1 });
    const file = s.manifest('pods.yaml', stuck, ok);

    const child = spawn(
      '/usr/bin/unshare',
      ['-m', '--propagation', 'private', 'sh', '-c', 'mount --bind "$0" /etc/resolv.conf && exec "$@"', resolvConf, process.execPath, BIN, 'run', file, '--listen', '127.0.0.1:0', '-o', 'json', '--timeout', '12s'],
      { cwd: REPO_ROOT, env: s.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (t: string) => (stdout += t));
    child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    // A run whose lookups starve the pool cannot even stop in time: cut it, and let the checks below say why.
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const [code] = (await once(child, 'close')) as [number | null];
    clearTimeout(killer);
    expect(await nothingLeft(s.marker)).toBe(true);

    const events = runLines(stdout)
      .filter((l) => l.type === 'event')
      .map((l) => l.event as { reason?: string; message?: string; involvedObject?: { name?: string } });
    const of = (pod: string): typeof events => events.filter((e) => e.involvedObject?.name === pod);
    expect(dns.queries(), 'the resolver never asked the dropping server').toBeGreaterThan(0);
    expect(
      of('hostile-dns-healthy').filter((e) => e.reason === 'Unhealthy' || (e.reason === 'Killing' && e.message?.includes('failed liveness probe'))),
      `the healthy pod's probes were delayed\n--- stderr\n${stderr}`,
    ).toEqual([]);
    const unhealthy = of('hostile-dns-stuck').find((e) => e.reason === 'Unhealthy');
    expect(unhealthy?.message).toBe(
      `Readiness probe failed: Get "http://${NAME}:80/": dial tcp: lookup ${NAME}: i/o timeout (Client.Timeout exceeded while awaiting headers)`,
    );
    expect(code).toBe(0);
  }, 60_000);
});
