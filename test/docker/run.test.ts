/**
 * `probelet run --runtime docker` reading the manifests' own ConfigMap and Secret documents for
 * a pod's configMap/secret volumes, and refusing — before anything starts, naming the field and
 * why — a pod whose volumes the Docker runtime cannot mount, while the others run.
 */
import { afterEach, expect, it } from 'vitest';
import { exitCode, markerVar, nothingLeft, scratch, startRun, type Scratch } from '../cli/run-child.js';
import { BUSYBOX } from '../cri/helpers.js';
import { DOCKER_HOST, describeDocker } from './helpers.js';

let s: Scratch | undefined;
afterEach(() => {
  s?.cleanup();
  s = undefined;
});

describeDocker('docker: configMap and secret volumes from the manifests', () => {
  it('a pod reads its ConfigMap and Secret as files and turns Ready; a pod with an nfs volume is refused with its field', async () => {
    s = scratch();
    const pod = (name: string, volumes: unknown[], mounts: unknown[], check: string): unknown => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        terminationGracePeriodSeconds: 1,
        volumes,
        containers: [
          {
            name: 'c',
            image: BUSYBOX,
            command: ['sleep', '600'],
            env: [markerVar(s as Scratch)],
            volumeMounts: mounts,
            readinessProbe: { exec: { command: ['sh', '-c', check] }, periodSeconds: 1 },
          },
        ],
      },
    });
    const file = s.manifest(
      'app.yaml',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'conf' }, data: { 'app.conf': 'port=8080' } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, data: { token: Buffer.from('s3cret').toString('base64') }, stringData: { user: 'me' } },
      pod(
        'app',
        [
          { name: 'conf', configMap: { name: 'conf', items: [{ key: 'app.conf', path: 'etc/app.conf' }] } },
          { name: 'creds', secret: { secretName: 'creds' } },
        ],
        [
          { name: 'conf', mountPath: '/conf' },
          { name: 'creds', mountPath: '/creds' },
        ],
        'test "$(cat /conf/etc/app.conf) $(cat /creds/token) $(cat /creds/user)" = "port=8080 s3cret me"',
      ),
      pod('nfs', [{ name: 'data', nfs: { server: 'x', path: '/' } }], [{ name: 'data', mountPath: '/data' }], 'true'),
    );
    const run = startRun(s, [file, '--runtime', 'docker', '--docker-host', DOCKER_HOST, '--listen', '127.0.0.1:0', '-o', 'json', '--exit-on-ready', '--timeout', '40s']);
    // Ready, then stopped; the refused pod makes it exit 2 (a problem in the input) once the rest ran.
    expect(await exitCode(run, 60_000), run.stderr()).toBe(2);
    expect(run.stderr()).toContain('probelet: Pod "nfs" is not run on the docker runtime:\n  * spec.volumes[0].nfs: Forbidden: the docker runtime mounts only emptyDir, configMap, secret, hostPath volumes');
    expect(run.stdout()).toMatch(/"type":"pod".*"name":"app".*"type":"Ready","status":"True"/);
    expect(await nothingLeft(s.marker)).toBe(true);
  }, 70_000);
});
