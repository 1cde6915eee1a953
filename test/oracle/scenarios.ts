/**
 * The oracle's scenarios: one Pod manifest each, run once on the real kubelet and once under
 * `probelet run --runtime cri`, each on its own containerd with the busybox test image. A
 * scenario's probed server (if any) is on 127.0.0.1 and the probes reach it through
 * `httpGet.host` / `tcpSocket.host`: the only thing that differs between the two manifests is
 * that server's port.
 *
 * `tolerance` is how far (seconds) two corresponding times may be apart: one probe period
 * (a worker's ticker is not aligned with its container's start) plus the relist (1 s, PLEG)
 * plus, where a container restarts after CrashLoopBackOff, the pod worker's requeue: a sync
 * that returns the back-off error is requeued after wait.Jitter(backOffPeriod = 10 s, 0.5)
 * unless the back-off's own expiry comes first (pkg/kubelet/pod_workers.go, completeWork:
 * workerBackOffPeriodJitterFactor; kubecontainer.MinBackoffExpiration), plus the runtime's
 * latency: with all scenarios' pods starting at once on 2 cores, containerd took up to 9 s from
 * an init container's exit to the next container's start (Pulled, Created, Started) where it
 * usually takes 1 — `RUNTIME` below.
 */
import type { Container, Pod, Probe } from '../../src/api/types.js';
import type { Responder, ServerKind } from './probe-server.js';
import { PRIVATE_IMAGE, PUBLIC_IMAGE, PUBLIC_REGISTRY, registrySecret } from './registry.js';

export const ORACLE_IMAGE = 'probelet.local/busybox:test';
/**
 * The namespace of the oracle's pods on the real kubelet's node. `PROBELET_ORACLE_NAMESPACE` gives
 * a run a namespace of its own, so that two oracle runs on one cluster never share a pod name.
 */
export const ORACLE_NAMESPACE = process.env.PROBELET_ORACLE_NAMESPACE ?? 'oracle';
/** PLEG's relist period (pkg/kubelet/kubelet.go genericPlegRelistPeriod). */
const RELIST = 1;
/** The pod worker's requeue after a back-off error, at most: 10 s × (1 + 0.5). */
const REQUEUE = 15;
/** Creating and starting a container on a containerd loaded by every scenario at once. */
export const RUNTIME = 3;

export interface Scenario {
  name: string;
  /** What it exercises, for the table's heading. */
  about: string;
  /** Seconds from the first container start to the moment both records are taken. */
  duration: number;
  tolerance: number;
  /** In the fast subset `npm test` runs against a live cluster. */
  fast?: boolean;
  /**
   * The probe that kills begins to fail some time into a run, not at each start (a server
   * that turns bad after a while): the restart rule checks only the earliest kill.
   */
  failsLater?: boolean;
  server?: { kind: ServerKind; respond?: Responder };
  /** The pod for a server on `port` (0 when the scenario has none). */
  pod(port: number): Pod;
  /**
   * Time zero of the records and of `duration`: the first container start (the default), or
   * the pod's creation (`created`: its first appearance to the harness, on both agents) for
   * scenarios whose containers start late or never (image pulls that fail).
   */
  from?: 'created';
  /**
   * Objects the pod needs (its pull Secrets), in its namespace: created through the API
   * before the pod on the kubelet, documents of `probelet run`'s manifest beside it.
   */
  objects?: () => ApiObject[];
  /**
   * Changes while it runs: `at` seconds after the pod's creation these objects replace theirs
   * (a Secret's new password) — through the API, and by rewriting `run`'s manifest.
   */
  updates?: Array<{ at: number; objects: () => ApiObject[] }>;
  /** Runs only where the test registries are (registry:up) and the kubelet's containerd trusts them. */
  needsRegistry?: boolean;
}

/** A namespaced API object of a scenario (a Secret). */
export interface ApiObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [field: string]: unknown;
}

function pod(name: string, containers: Container[], extra: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `oracle-${name}`, namespace: ORACLE_NAMESPACE },
    spec: {
      automountServiceAccountToken: false,
      // No cluster DNS here: ClusterFirst would add a MissingClusterDNS event on the kubelet.
      dnsPolicy: 'Default',
      terminationGracePeriodSeconds: 2,
      containers,
      ...extra,
    },
  };
}

function app(command: string, probes: Partial<Pick<Container, 'livenessProbe' | 'readinessProbe' | 'startupProbe'>> = {}, name = 'app'): Container {
  return { name, image: ORACLE_IMAGE, command: ['sh', '-c', command], ...probes };
}

const SLEEP = 'trap "exit 0" TERM; sleep 3600 & wait';
const httpProbe = (port: number, path = '/healthz', more: Partial<Probe> = {}): Probe => ({
  httpGet: { host: '127.0.0.1', port, path },
  ...more,
});
const execProbe = (command: string, more: Partial<Probe> = {}): Probe => ({ exec: { command: ['sh', '-c', command] }, ...more });
const after = (seconds: number, status: number, before = 200): Responder => (t) => ({ status: t < seconds ? before : status });

export const SCENARIOS: Scenario[] = [
  {
    name: 'exec-liveness-slow-app',
    about: 'liveness exec P=10 F=3 on an app needing 40 s: repeated kills over 5 min, restart times and first BackOff (kubernetes#22240)',
    duration: 320,
    tolerance: 10 + RELIST + REQUEUE + RUNTIME,
    pod: () =>
      pod('exec-liveness-slow-app', [
        app(`sleep 40; touch /tmp/ok; ${SLEEP}`, { livenessProbe: execProbe('test -f /tmp/ok', { periodSeconds: 10, failureThreshold: 3 }) }),
      ]),
  },
  {
    name: 'exec-liveness-always-fails',
    about: 'liveness exec failing at once, P=2 F=1: CrashLoopBackOff growth over 5 min',
    duration: 300,
    tolerance: 2 + RELIST + REQUEUE + RUNTIME,
    pod: () => pod('exec-liveness-always-fails', [app(SLEEP, { livenessProbe: execProbe('exit 1', { periodSeconds: 2, failureThreshold: 1 }) })]),
  },
  {
    name: 'startup-kills',
    about: 'startup probe never succeeding (P=2 F=3): startup kills over 5 min',
    duration: 300,
    tolerance: 2 + RELIST + REQUEUE + RUNTIME,
    pod: () => pod('startup-kills', [app(SLEEP, { startupProbe: execProbe('exit 1', { periodSeconds: 2, failureThreshold: 3 }) })]),
  },
  {
    name: 'http-liveness-500',
    about: 'HTTP liveness answering 500 after 10 s (P=3 F=2): kill, restart, events with the status code',
    duration: 60,
    tolerance: 3 + RELIST + REQUEUE + RUNTIME,
    fast: true,
    server: { kind: 'http', respond: after(10, 500) },
    failsLater: true,
    pod: (port) => pod('http-liveness-500', [app(SLEEP, { livenessProbe: httpProbe(port, '/healthz', { periodSeconds: 3, failureThreshold: 2 }) })]),
  },
  {
    name: 'http-headers',
    about: 'HTTP readiness with custom headers and a query: what reaches the server (User-Agent, Accept, close)',
    duration: 20,
    tolerance: 2 + RELIST + RUNTIME,
    fast: true,
    server: { kind: 'http' },
    pod: (port) =>
      pod('http-headers', [
        app(SLEEP, {
          readinessProbe: {
            httpGet: { host: '127.0.0.1', port, path: '/ready?x=1', httpHeaders: [{ name: 'X-Probe', value: 'oracle' }, { name: 'Accept', value: 'application/json' }] },
            periodSeconds: 2,
          },
        }),
      ]),
  },
  {
    name: 'http-redirect',
    about: 'HTTP readiness redirected (302) to another path on the same host: followed',
    duration: 20,
    tolerance: 2 + RELIST + RUNTIME,
    server: { kind: 'http', respond: (_t, path) => (path === '/old' ? { status: 302, location: '/new' } : { status: 200 }) },
    pod: (port) => pod('http-redirect', [app(SLEEP, { readinessProbe: httpProbe(port, '/old', { periodSeconds: 2 }) })]),
  },
  {
    name: 'http-readiness-flap',
    about: 'readiness flapping: 200 for 10 s, 503 for 10 s, … (P=1 F=2 S=2)',
    duration: 60,
    tolerance: 1 + RELIST + RUNTIME,
    fast: true,
    server: { kind: 'http', respond: (t) => ({ status: Math.floor(t / 10) % 2 === 0 ? 200 : 503 }) },
    pod: (port) =>
      pod('http-readiness-flap', [app(SLEEP, { readinessProbe: httpProbe(port, '/ready', { periodSeconds: 1, failureThreshold: 2, successThreshold: 2 }) })]),
  },
  {
    name: 'tcp-ok',
    about: 'TCP readiness on a listening port: how the prober closes',
    duration: 15,
    tolerance: 2 + RELIST + RUNTIME,
    fast: true,
    server: { kind: 'tcp' },
    pod: (port) => pod('tcp-ok', [app(SLEEP, { readinessProbe: { tcpSocket: { host: '127.0.0.1', port }, periodSeconds: 2 } })]),
  },
  {
    name: 'tcp-liveness-refused',
    about: 'TCP liveness on a closed port (P=2 F=2): kill, restart, event message',
    duration: 60,
    tolerance: 2 + RELIST + REQUEUE + RUNTIME,
    pod: () => pod('tcp-liveness-refused', [app(SLEEP, { livenessProbe: { tcpSocket: { host: '127.0.0.1', port: 1 }, periodSeconds: 2, failureThreshold: 2 } })]),
  },
  {
    name: 'exec-timeout',
    about: 'exec readiness that outlives timeoutSeconds 1: the timeout message',
    duration: 30,
    tolerance: 3 + RELIST + RUNTIME,
    fast: true,
    pod: () => pod('exec-timeout', [app(SLEEP, { readinessProbe: execProbe('sleep 5', { periodSeconds: 3, timeoutSeconds: 1 }) })]),
  },
  {
    name: 'exec-exit-code',
    about: 'exec readiness exiting 3 with output: the Unhealthy message',
    duration: 20,
    tolerance: 2 + RELIST + RUNTIME,
    pod: () => pod('exec-exit-code', [app(SLEEP, { readinessProbe: execProbe('echo not yet; exit 3', { periodSeconds: 2 }) })]),
  },
  {
    name: 'startup-gating',
    about: 'startup exec succeeding after 12 s gates readiness and liveness',
    duration: 40,
    tolerance: 2 + RELIST + RUNTIME,
    pod: () =>
      pod('startup-gating', [
        app(`sleep 12; touch /tmp/up; ${SLEEP}`, {
          startupProbe: execProbe('test -f /tmp/up', { periodSeconds: 2, failureThreshold: 30 }),
          readinessProbe: execProbe('true', { periodSeconds: 2 }),
          livenessProbe: execProbe('true', { periodSeconds: 2 }),
        }),
      ]),
  },
  {
    name: 'initial-delay-multiple',
    about: 'liveness HTTP 500 with initialDelaySeconds 10 = 2 × periodSeconds 5, F=1: when the first probe lands (kubernetes#130393)',
    duration: 45,
    tolerance: 5 + RELIST + REQUEUE + RUNTIME,
    server: { kind: 'http', respond: () => ({ status: 500 }) },
    pod: (port) =>
      pod('initial-delay-multiple', [app(SLEEP, { livenessProbe: httpProbe(port, '/healthz', { initialDelaySeconds: 10, periodSeconds: 5, failureThreshold: 1 }) })]),
  },
  {
    name: 'initial-delay-not-multiple',
    about: 'liveness HTTP 500 with initialDelaySeconds 7, periodSeconds 5, F=1',
    duration: 45,
    tolerance: 5 + RELIST + REQUEUE + RUNTIME,
    server: { kind: 'http', respond: () => ({ status: 500 }) },
    pod: (port) =>
      pod('initial-delay-not-multiple', [app(SLEEP, { livenessProbe: httpProbe(port, '/healthz', { initialDelaySeconds: 7, periodSeconds: 5, failureThreshold: 1 }) })]),
  },
  {
    name: 'sigterm-ignored-probe-grace',
    about: 'liveness kill of a container ignoring SIGTERM, probe-level terminationGracePeriodSeconds 4 (pod: 30)',
    duration: 40,
    tolerance: 2 + RELIST + REQUEUE + RUNTIME,
    pod: () =>
      pod(
        'sigterm-ignored-probe-grace',
        [app('trap "" TERM; while true; do sleep 1; done', { livenessProbe: execProbe('exit 1', { periodSeconds: 2, failureThreshold: 1, terminationGracePeriodSeconds: 4 }) })],
        { terminationGracePeriodSeconds: 30 },
      ),
  },
  {
    name: 'probe-grace-floor',
    about: 'probe-level terminationGracePeriodSeconds 1 on a container ignoring SIGTERM: the 2 s floor',
    duration: 30,
    tolerance: 2 + RELIST + REQUEUE + RUNTIME,
    pod: () =>
      pod('probe-grace-floor', [
        app('trap "" TERM; while true; do sleep 1; done', { livenessProbe: execProbe('exit 1', { periodSeconds: 2, failureThreshold: 1, terminationGracePeriodSeconds: 1 }) }),
      ]),
  },
  {
    name: 'never-exit-1',
    about: 'restartPolicy Never, the container exits 1 after 3 s',
    duration: 20,
    tolerance: RELIST + 1 + RUNTIME,
    fast: true,
    pod: () => pod('never-exit-1', [app('sleep 3; exit 1')], { restartPolicy: 'Never' }),
  },
  {
    name: 'onfailure-exit-0',
    about: 'restartPolicy OnFailure, the container exits 0 after 3 s: not restarted',
    duration: 20,
    tolerance: RELIST + 1 + RUNTIME,
    pod: () => pod('onfailure-exit-0', [app('sleep 3; exit 0')], { restartPolicy: 'OnFailure' }),
  },
  {
    name: 'onfailure-exit-1',
    about: 'restartPolicy OnFailure, the container exits 1 after 3 s: back-off restarts',
    duration: 90,
    tolerance: RELIST + REQUEUE + RUNTIME,
    pod: () => pod('onfailure-exit-1', [app('sleep 3; exit 1')], { restartPolicy: 'OnFailure' }),
  },
  {
    name: 'always-exit-0',
    about: 'restartPolicy Always, the container exits 0 after 3 s: back-off restarts',
    duration: 90,
    tolerance: RELIST + REQUEUE + RUNTIME,
    pod: () => pod('always-exit-0', [app('sleep 3; exit 0')]),
  },
  {
    name: 'init-container',
    about: 'an init container running 3 s, then the app with readiness',
    duration: 20,
    tolerance: 2 + RELIST + RUNTIME,
    pod: () =>
      pod('init-container', [app(SLEEP, { readinessProbe: execProbe('true', { periodSeconds: 2 }) })], {
        initContainers: [{ name: 'init', image: ORACLE_IMAGE, command: ['sh', '-c', 'sleep 3'] }],
      }),
  },
  {
    name: 'sidecar-readiness',
    about: 'a restartable init container (sidecar) with a startup and a readiness probe, then the app',
    duration: 30,
    tolerance: 2 + RELIST + RUNTIME,
    pod: () =>
      pod('sidecar-readiness', [app(SLEEP, { readinessProbe: execProbe('true', { periodSeconds: 2 }) })], {
        initContainers: [
          {
            name: 'sidecar',
            image: ORACLE_IMAGE,
            restartPolicy: 'Always',
            command: ['sh', '-c', `sleep 4; touch /tmp/up; ${SLEEP}`],
            startupProbe: execProbe('test -f /tmp/up', { periodSeconds: 1, failureThreshold: 30 }),
            readinessProbe: execProbe('true', { periodSeconds: 2 }),
          },
        ],
      }),
  },
  {
    name: 'two-containers',
    about: 'two containers, one failing liveness: only it restarts',
    duration: 60,
    tolerance: 2 + RELIST + REQUEUE + RUNTIME,
    pod: () =>
      pod('two-containers', [
        app(SLEEP, { readinessProbe: execProbe('true', { periodSeconds: 2 }) }, 'steady'),
        app(SLEEP, { livenessProbe: execProbe('exit 1', { periodSeconds: 2, failureThreshold: 2 }) }, 'flaky'),
      ]),
  },
  {
    name: 'exits-while-probed',
    about: 'a container exiting 2 after 5 s while readiness and liveness probe it',
    duration: 60,
    tolerance: 2 + RELIST + REQUEUE + RUNTIME,
    pod: () =>
      pod('exits-while-probed', [
        app('sleep 5; exit 2', { readinessProbe: execProbe('true', { periodSeconds: 2 }), livenessProbe: execProbe('true', { periodSeconds: 2 }) }),
      ]),
  },
  {
    name: 'http-named-port',
    about: 'HTTP readiness on a named container port',
    duration: 15,
    tolerance: 2 + RELIST + RUNTIME,
    server: { kind: 'http' },
    pod: (port) =>
      pod('http-named-port', [
        { ...app(SLEEP, { readinessProbe: { httpGet: { host: '127.0.0.1', port: 'probe', path: '/named' }, periodSeconds: 2 } }), ports: [{ name: 'probe', containerPort: port || 1 }] },
      ]),
  },
  {
    name: 'http-404',
    about: 'HTTP readiness answered 404: the failure message',
    duration: 15,
    tolerance: 2 + RELIST + RUNTIME,
    server: { kind: 'http', respond: () => ({ status: 404 }) },
    pod: (port) => pod('http-404', [app(SLEEP, { readinessProbe: httpProbe(port, '/missing', { periodSeconds: 2 }) })]),
  },
  {
    name: 'http-redirect-other-host',
    about: 'HTTP readiness redirected to another host name (localhost): not followed, a ProbeWarning',
    duration: 15,
    tolerance: 2 + RELIST + RUNTIME,
    server: { kind: 'http', respond: (_t, path) => (path === '/away' ? { status: 302, location: 'http://localhost:1/elsewhere' } : { status: 200 }) },
    pod: (port) => pod('http-redirect-other-host', [app(SLEEP, { readinessProbe: httpProbe(port, '/away', { periodSeconds: 2 }) })]),
  },
  {
    name: 'http-success-threshold',
    about: 'HTTP readiness with successThreshold 3, periodSeconds 2: Ready after the third success',
    duration: 20,
    tolerance: 2 + RELIST + RUNTIME,
    server: { kind: 'http' },
    pod: (port) => pod('http-success-threshold', [app(SLEEP, { readinessProbe: httpProbe(port, '/ready', { periodSeconds: 2, successThreshold: 3 }) })]),
  },
  {
    name: 'readiness-at-start',
    about: 'readiness exec with periodSeconds 30: the first probe comes at start, not a period later',
    duration: 20,
    tolerance: 2 + RELIST + RUNTIME,
    pod: () => pod('readiness-at-start', [app(SLEEP, { readinessProbe: execProbe('true', { periodSeconds: 30 }) })]),
  },
  {
    name: 'never-exit-0',
    about: 'restartPolicy Never, the container exits 0 after 3 s: Succeeded',
    duration: 15,
    tolerance: RELIST + 1 + RUNTIME,
    pod: () => pod('never-exit-0', [app('sleep 3; exit 0')], { restartPolicy: 'Never' }),
  },
  {
    name: 'pod-grace-sigterm-ignored',
    about: 'liveness kill of a container ignoring SIGTERM with the pod\'s terminationGracePeriodSeconds 5 (no probe-level one)',
    duration: 45,
    tolerance: 2 + RELIST + REQUEUE + RUNTIME,
    pod: () =>
      pod('pod-grace-sigterm-ignored', [app('trap "" TERM; while true; do sleep 1; done', { livenessProbe: execProbe('exit 1', { periodSeconds: 2, failureThreshold: 1 }) })], {
        terminationGracePeriodSeconds: 5,
      }),
  },
  {
    name: 'sidecar-liveness-kill',
    about: 'a sidecar (restartable init container) failing liveness is restarted; the app keeps running',
    duration: 60,
    tolerance: 2 + RELIST + REQUEUE + RUNTIME,
    pod: () =>
      pod('sidecar-liveness-kill', [app(SLEEP, { readinessProbe: execProbe('true', { periodSeconds: 2 }) })], {
        initContainers: [
          {
            name: 'sidecar',
            image: ORACLE_IMAGE,
            restartPolicy: 'Always',
            command: ['sh', '-c', SLEEP],
            livenessProbe: execProbe('exit 1', { periodSeconds: 2, failureThreshold: 2 }),
          },
        ],
      }),
  },
  {
    name: 'https-readiness',
    fast: true,
    about: 'HTTPS readiness on a self-signed TLS server (scheme HTTPS: not verified): what reaches it',
    duration: 20,
    tolerance: 2 + RELIST + RUNTIME,
    server: { kind: 'https' },
    pod: (port) =>
      pod('https-readiness', [app(SLEEP, { readinessProbe: { httpGet: { host: '127.0.0.1', port, path: '/tls', scheme: 'HTTPS' }, periodSeconds: 2 } })]),
  },
  {
    name: 'grpc-readiness',
    fast: true,
    about: 'gRPC readiness without a service on a host-network pod: SERVING after 6 s',
    duration: 25,
    tolerance: 2 + RELIST + RUNTIME,
    server: { kind: 'grpc', respond: after(6, 200, 503) },
    pod: (port) => pod('grpc-readiness', [app(SLEEP, { readinessProbe: { grpc: { port }, periodSeconds: 2 } })], { hostNetwork: true }),
  },
  {
    name: 'grpc-service-liveness',
    about: 'gRPC liveness with service "app" NOT_SERVING after 8 s (P=2 F=2): the failure message, kill',
    duration: 40,
    tolerance: 2 + RELIST + REQUEUE + RUNTIME,
    server: { kind: 'grpc', respond: after(8, 503) },
    failsLater: true,
    pod: (port) =>
      pod('grpc-service-liveness', [app(SLEEP, { livenessProbe: { grpc: { port, service: 'app' }, periodSeconds: 2, failureThreshold: 2 } })], {
        hostNetwork: true,
      }),
  },
  {
    name: 'grpc-unknown-service',
    about: 'gRPC readiness asking a service the server does not know (NOT_FOUND): the message',
    duration: 15,
    tolerance: 2 + RELIST + RUNTIME,
    server: { kind: 'grpc', respond: () => ({ status: 404 }) },
    pod: (port) => pod('grpc-unknown-service', [app(SLEEP, { readinessProbe: { grpc: { port, service: 'nope' }, periodSeconds: 2 } })], { hostNetwork: true }),
  },
  {
    name: 'exec-timeout-liveness',
    about: 'exec liveness outliving timeoutSeconds 1 (P=3 F=2): timed out, kill, restart',
    duration: 40,
    tolerance: 3 + RELIST + REQUEUE + RUNTIME,
    pod: () => pod('exec-timeout-liveness', [app(SLEEP, { livenessProbe: execProbe('sleep 5', { periodSeconds: 3, failureThreshold: 2, timeoutSeconds: 1 }) })]),
  },
  {
    name: 'never-liveness-kill',
    about: 'restartPolicy Never, liveness exec failing (P=2 F=2): killed, not restarted, pod Failed',
    duration: 20,
    tolerance: 2 + RELIST + RUNTIME,
    pod: () =>
      pod('never-liveness-kill', [app(SLEEP, { livenessProbe: execProbe('exit 1', { periodSeconds: 2, failureThreshold: 2 }) })], { restartPolicy: 'Never' }),
  },
  {
    name: 'onfailure-liveness-kill',
    about: 'restartPolicy OnFailure, a liveness kill of a container exiting 0 on SIGTERM: restarted all the same',
    duration: 40,
    tolerance: 2 + RELIST + REQUEUE + RUNTIME,
    pod: () =>
      pod('onfailure-liveness-kill', [app(SLEEP, { livenessProbe: execProbe('exit 1', { periodSeconds: 2, failureThreshold: 2 }) })], { restartPolicy: 'OnFailure' }),
  },
  {
    name: 'readiness-delay-not-multiple',
    about: 'HTTP readiness with initialDelaySeconds 5, periodSeconds 3: when the first probe and Ready come',
    duration: 20,
    tolerance: 3 + RELIST + RUNTIME,
    server: { kind: 'http' },
    pod: (port) => pod('readiness-delay-not-multiple', [app(SLEEP, { readinessProbe: httpProbe(port, '/ready', { initialDelaySeconds: 5, periodSeconds: 3 }) })]),
  },
  {
    name: 'three-containers-readiness',
    about: 'three containers ready at 0, 5 and 10 s (exec readiness, P=1): the pod is Ready with the last',
    duration: 35,
    // Both agents create and start the three one after another: under the full oracle's load each
    // step took up to RUNTIME (b started at 3 s on the kubelet, 7 s under probelet; c at 5 and 12 s).
    tolerance: 1 + RELIST + 3 * RUNTIME,
    pod: () =>
      pod('three-containers-readiness', [
        app(`touch /tmp/ok; ${SLEEP}`, { readinessProbe: execProbe('test -f /tmp/ok', { periodSeconds: 1 }) }, 'a'),
        app(`sleep 5; touch /tmp/ok; ${SLEEP}`, { readinessProbe: execProbe('test -f /tmp/ok', { periodSeconds: 1 }) }, 'b'),
        app(`sleep 10; touch /tmp/ok; ${SLEEP}`, { readinessProbe: execProbe('test -f /tmp/ok', { periodSeconds: 1 }) }, 'c'),
      ]),
  },
  {
    name: 'prestop-sleep-probe-grace',
    about: 'liveness kill of a container ignoring SIGTERM with a preStop sleep of 3 s and probe-level grace 7 s: the hook uses up 3 s, SIGKILL 4 s later',
    duration: 40,
    tolerance: 2 + RELIST + REQUEUE + RUNTIME,
    pod: () =>
      pod(
        'prestop-sleep-probe-grace',
        [
          {
            ...app('trap "" TERM; while true; do sleep 1; done', { livenessProbe: execProbe('exit 1', { periodSeconds: 2, failureThreshold: 1, terminationGracePeriodSeconds: 7 }) }),
            lifecycle: { preStop: { sleep: { seconds: 3 } } },
          },
        ],
        { terminationGracePeriodSeconds: 30 },
      ),
  },
  {
    name: 'poststart-exec-fails',
    about: 'a postStart exec hook exiting 1: FailedPostStartHook, Killing, PostStartHookError, restarts with back-off',
    duration: 60,
    tolerance: RELIST + REQUEUE + RUNTIME,
    pod: () => pod('poststart-exec-fails', [{ ...app(SLEEP), lifecycle: { postStart: { exec: { command: ['sh', '-c', 'exit 1'] } } } }]),
  },
  {
    name: 'prestop-http-exec-fails',
    about: 'liveness kills with preStop hooks: HTTP 500 after 6 s and a preStop httpGet to the probed server (kube-lifecycle/1.35); a second container killed by exec liveness whose preStop exec exits 3 (FailedPreStopHook)',
    duration: 40,
    tolerance: 3 + RELIST + REQUEUE + RUNTIME,
    server: { kind: 'http', respond: (t, path) => ({ status: path === '/healthz' && t >= 6 ? 500 : 200 }) },
    pod: (port) =>
      pod('prestop-http-exec-fails', [
        {
          ...app(SLEEP, { livenessProbe: httpProbe(port, '/healthz', { periodSeconds: 3, failureThreshold: 2 }) }),
          lifecycle: { preStop: { httpGet: { host: '127.0.0.1', port, path: '/prestop' } } },
        },
        {
          ...app(SLEEP, { livenessProbe: execProbe('exit 1', { initialDelaySeconds: 10, periodSeconds: 5, failureThreshold: 1 }) }, 'side'),
          lifecycle: { preStop: { exec: { command: ['sh', '-c', 'exit 3'] } } },
        },
      ]),
  },
  {
    name: 'registry-pull',
    about: 'imagePullPolicy Always from the TLS test registry (registry:up): Pulling, Pulled with its time and size, then the start',
    duration: 20,
    tolerance: RELIST + RUNTIME,
    from: 'created',
    needsRegistry: true,
    pod: () => pod('registry-pull', [{ ...app(SLEEP), image: PUBLIC_IMAGE, imagePullPolicy: 'Always' }]),
  },
  {
    name: 'registry-missing-tag',
    about: 'a tag the registry does not have: Failed (NotFound), ErrImagePull, then ImagePullBackOff with the 10 s → 20 s back-off, each failed sync requeued after 10 s × jitter',
    duration: 60,
    tolerance: RELIST + REQUEUE + RUNTIME,
    from: 'created',
    needsRegistry: true,
    pod: () => pod('registry-missing-tag', [{ ...app(SLEEP), image: `${PUBLIC_REGISTRY}/probelet/busybox:missing` }]),
  },
  {
    name: 'registry-wrong-password',
    about: 'a private image whose pull Secret has a wrong password (401, ErrImagePull, back-off); the Secret updated at 22 s (between the second pull and the third, whatever the jitter), the third pull works and the container starts',
    duration: 60,
    tolerance: RELIST + REQUEUE + RUNTIME,
    from: 'created',
    needsRegistry: true,
    objects: () => [registrySecret('oracle-pull-password', ORACLE_NAMESPACE, 'wrong-password')],
    updates: [{ at: 22, objects: () => [registrySecret('oracle-pull-password', ORACLE_NAMESPACE)] }],
    pod: () =>
      pod('registry-wrong-password', [{ ...app(SLEEP), image: PRIVATE_IMAGE, imagePullPolicy: 'Always' }], { imagePullSecrets: [{ name: 'oracle-pull-password' }] }),
  },
  {
    name: 'registry-never-absent',
    about: 'imagePullPolicy Never and the image not on the node: ErrImageNeverPull at each sync (requeued after 10 s × jitter), no pull',
    duration: 40,
    tolerance: RELIST + REQUEUE + RUNTIME,
    from: 'created',
    needsRegistry: true,
    pod: () => pod('registry-never-absent', [{ ...app(SLEEP), image: `${PUBLIC_REGISTRY}/probelet/busybox:never-pulled`, imagePullPolicy: 'Never' }]),
  },
];
