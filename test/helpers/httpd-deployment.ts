/**
 * The Deployment the shutdown tests of the image runtimes (docker, cri) run: busybox's httpd
 * serving `/healthz` from /www, Ready through an HTTP readiness probe, carrying the test's
 * marker so that leak checks find its processes.
 */
import { markerVar, type Scratch } from '../cli/run-child.js';
import { BUSYBOX } from '../cri/helpers.js';

export interface HttpdOptions {
  /** httpd and its shell ignore SIGTERM: only a kill stops them (and the grace is 60 s, not 2). */
  ignoresTerm: boolean;
  /** /www is an emptyDir volume (which the docker runtime makes); otherwise the shell makes it. */
  wwwVolume: boolean;
}

export function httpdDeployment(sc: Scratch, name: string, { ignoresTerm, wwwVolume }: HttpdOptions): unknown {
  const serve = ignoresTerm ? "trap '' TERM; httpd -f -p 8080 -h /www & wait" : 'exec httpd -f -p 8080 -h /www';
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: ignoresTerm ? 60 : 2,
          ...(wwwVolume ? { volumes: [{ name: 'www', emptyDir: {} }] } : {}),
          containers: [
            {
              name: 'httpd',
              image: BUSYBOX,
              command: ['sh', '-c', `${wwwVolume ? '' : 'mkdir -p /www; '}echo ok >/www/healthz; ${serve}`],
              env: [markerVar(sc)],
              ...(wwwVolume ? { volumeMounts: [{ name: 'www', mountPath: '/www' }] } : {}),
              readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1 },
            },
          ],
        },
      },
    },
  };
}
