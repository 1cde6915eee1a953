/**
 * The node's authenticated API behind `kubectl logs`, on a real HTTPS server: only clients
 * with a certificate of the client CA get in; the kubelet's paths, options and error words;
 * `--previous` from the log file beside the current one's. Certificates made with openssl.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { startKubeletServer, type KubeletServer } from '../../src/node/kubelet-server.js';
import type { RuntimeContainerStatus } from '../../src/runtime/types.js';
import { realClock } from '../../src/util/clock.js';

const DIR = mkdtempSync(join(tmpdir(), 'probelet-kubelet-server-'));
const pem = (name: string): Buffer => readFileSync(join(DIR, name));

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { stdio: 'ignore', cwd: DIR });
}

/** A CA, a certificate it signs for `name` (server or client use), and one of another CA. */
function makeCertificates(): void {
  for (const ca of ['ca', 'rogue-ca']) openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${ca}.key`, '-out', `${ca}.crt`, '-days', '1', '-subj', `/CN=${ca}`);
  const sign = (name: string, ca: string, ext: string): void => {
    openssl('req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    writeFileSync(join(DIR, `${name}.ext`), ext);
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`);
  };
  sign('serving', 'ca', 'extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n');
  sign('apiserver', 'ca', 'extendedKeyUsage=clientAuth\n');
  sign('intruder', 'rogue-ca', 'extendedKeyUsage=clientAuth\n');
}

interface Reply {
  status: number;
  body: string;
}

function get(port: number, path: string, client: 'apiserver' | 'intruder' | 'none'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        ca: pem('ca.crt'),
        ...(client === 'none' ? {} : { cert: pem(`${client}.crt`), key: pem(`${client}.key`) }),
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const logDir = join(DIR, 'pods', 'default_web_uid-web', 'app');
const current: RuntimeContainerStatus = {
  id: 'containerd://c2',
  podUID: 'uid-web',
  name: 'app',
  attempt: 1,
  image: 'img',
  state: 'running',
  createdAt: 0,
  startedAt: 0,
  logPath: join(logDir, '1.log'),
};
const pod: Pod = {
  metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
  spec: { containers: [{ name: 'app', image: 'img' }] },
  status: {
    containerStatuses: [
      { name: 'app', image: 'img', imageID: '', ready: true, restartCount: 1, containerID: 'containerd://c2', lastState: { terminated: { exitCode: 137, containerID: 'containerd://c1' } }, state: { running: {} } },
    ],
  },
};

describe('the authenticated API (kubectl logs)', () => {
  let server: KubeletServer;

  beforeAll(async () => {
    makeCertificates();
    mkdirSync(logDir, { recursive: true });
    writeFileSync(join(logDir, '0.log'), '2026-11-27T04:00:00.000000000Z stdout F before the restart\n');
    writeFileSync(join(logDir, '1.log'), '2026-11-27T04:01:00.000000000Z stdout F one\n2026-11-27T04:01:01.500000000Z stderr F two\n');
    server = await startKubeletServer({
      host: '127.0.0.1',
      port: 0,
      cert: pem('serving.crt'),
      key: pem('serving.key'),
      clientCA: pem('ca.crt'),
      pods: () => [pod],
      runtime: { runsImages: true, containerStatus: (id) => (id === current.id ? { ...current } : undefined), containerLogs: () => '' },
      clock: realClock,
    });
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    rmSync(DIR, { recursive: true, force: true });
  });

  it('serves the container’s log to a client of the CA, with the kubelet’s options', async () => {
    const base = '/containerLogs/default/web/app';
    expect(await get(server.port, base, 'apiserver')).toEqual({ status: 200, body: 'one\ntwo\n' });
    expect((await get(server.port, `${base}?tailLines=1&timestamps=true`, 'apiserver')).body).toBe('2026-11-27T04:01:01.5Z two\n');
    expect((await get(server.port, `${base}?limitBytes=5`, 'apiserver')).body).toBe('one\nt');
    expect((await get(server.port, `${base}?previous=true`, 'apiserver')).body).toBe('before the restart\n');
  });

  it('refuses a client without a certificate, or with one of another CA', async () => {
    await expect(get(server.port, '/containerLogs/default/web/app', 'none')).rejects.toThrow();
    await expect(get(server.port, '/containerLogs/default/web/app', 'intruder')).rejects.toThrow();
  });

  it('answers in the kubelet’s words for what is not there', async () => {
    expect(await get(server.port, '/containerLogs/default/nope/app', 'apiserver')).toEqual({ status: 404, body: 'pod "nope" does not exist' });
    expect(await get(server.port, '/containerLogs/default/web/db', 'apiserver')).toEqual({ status: 404, body: 'container "db" not found in pod "web"' });
    expect(await get(server.port, '/exec/default/web/app', 'apiserver')).toEqual({ status: 404, body: '404 page not found\n' });
    expect((await get(server.port, '/containerLogs/default/web/app?limitBytes=x', 'apiserver')).status).toBe(400);
  });
});
