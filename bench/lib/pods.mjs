/**
 * The pods a benchmark run probes: N containers spread over pods of K, each with one
 * readiness probe of the chosen handler, and the status a kubelet would have generated for
 * them (running since long ago, at the target's address).
 */

/** @typedef {import('./options.mjs').Handler} Handler */
/** @typedef {import('./options.mjs').Target} Target */

/** Long before any kubelet start: these containers are not restart survivors' concern. */
const LONG_AGO = '2020-01-01T00:00:00Z';

/**
 * The probe's handler part, as a pod spec would give it.
 * @param {Handler} handler
 * @param {Target} target
 */
export function handlerSpec(handler, target) {
  switch (handler) {
    case 'http':
      return { httpGet: { path: target.path, port: target.port, scheme: target.scheme } };
    case 'tcp':
      return { tcpSocket: { port: target.port } };
    case 'grpc':
      return { grpc: { port: target.port, service: '' } };
    case 'exec':
      return { exec: { command: ['/bin/true'] } };
  }
}

/**
 * @typedef {object} PodsOptions
 * @property {number} workers
 * @property {number} containersPerPod
 * @property {Record<string, unknown> | ((pod: number) => Record<string, unknown>)} handler  From
 *   {@link handlerSpec}, or one per pod index.
 * @property {boolean} [liveness]  Also a liveness probe like the readiness one (kubelet defaults otherwise).
 * @property {number} periodS
 * @property {number} timeoutS
 * @property {string} podIP
 * @property {boolean} started  false: readiness workers wait for the container and never probe.
 */

/**
 * @param {PodsOptions} o
 * @returns {{ pod: import('../../dist/index.js').Pod, status: import('../../dist/index.js').PodStatus }[]}
 */
export function buildPods(o) {
  const pods = [];
  for (let first = 0, p = 0; first < o.workers; first += o.containersPerPod, p++) {
    const count = Math.min(o.containersPerPod, o.workers - first);
    const uid = `bench-uid-${p}`;
    const names = Array.from({ length: count }, (_, i) => `c${i}`);
    const handler = typeof o.handler === 'function' ? o.handler(p) : o.handler;
    const probe = {
      ...handler,
      periodSeconds: o.periodS,
      timeoutSeconds: o.timeoutS,
      successThreshold: 1,
      failureThreshold: 3,
    };
    const pod = {
      metadata: { name: `bench-${p}`, namespace: 'bench', uid },
      spec: {
        containers: names.map((name) => ({
          name,
          image: 'bench',
          readinessProbe: probe,
          ...(o.liveness ? { livenessProbe: probe } : {}),
        })),
      },
    };
    const status = {
      phase: 'Running',
      podIP: o.podIP,
      podIPs: [{ ip: o.podIP }],
      startTime: LONG_AGO,
      containerStatuses: names.map((name) => ({
        name,
        containerID: `bench://${uid}/${name}`,
        image: 'bench',
        imageID: 'bench',
        ready: false,
        restartCount: 0,
        started: o.started,
        state: { running: { startedAt: LONG_AGO } },
      })),
    };
    pods.push({ pod, status });
  }
  return pods;
}
