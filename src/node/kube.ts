/**
 * The node agent's API clients, from `@kubernetes/client-node` (the official client; no
 * hand-written REST). Its typed calls turn timestamps into `Date`s; the kubelet works on the
 * API's JSON shapes (`kubernetes-types`), so what comes back is made plain again with
 * {@link plain} at this boundary and nowhere else.
 *
 * Connections. client-node 1.4 makes a new `https.Agent` for every call (its
 * `applySecurityAuthentication`): a TLS handshake per request and no bound on how many run at
 * once — a fleet of 5,000 pods opened a connection for each of its writes, and its Lease
 * renewals waited in that crowd (one 55 s). As the kubelet does (`cmd/kubelet/app/server.go` builds a
 * client for pods, one for events, and a heartbeat client), each kind of traffic here has a
 * client of its own, each on one keep-alive agent: pod traffic and events on a bounded number
 * of connections (a flood of status writes queues in the agent, not on the wire), the Lease and
 * node status on connections of their own that no pod write can occupy.
 */
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  Observable,
  PatchStrategy,
  ServerConfiguration,
  Watch,
  createConfiguration,
  setHeaderOptions,
  type Configuration,
  type ObservableMiddleware,
} from '@kubernetes/client-node';
import { NodeHttpLibrary, pooledAgent, pooledAuthentication, pooledWatchConfig, type PooledAgent } from './connections.js';

export interface KubeClients {
  config: KubeConfig;
  /** Pods (list, status writes, deletes) and registration. */
  core: CoreV1Api;
  coordination: CoordinationV1Api;
  /** Events, on connections of their own (the kubelet's `EventClient`). */
  events: CoreV1Api;
  /**
   * The heartbeats (Lease renewals, node status), on connections no other traffic uses (the
   * kubelet's `HeartbeatClient`): a flood of pod writes can never hold one back.
   */
  heartbeat: { core: CoreV1Api; coordination: CoordinationV1Api };
  watch: Watch;
  /** The API server's URL, for messages. */
  server: string;
  /** Closes the kept-alive connections (the node stopped). */
  close(): void;
}

/**
 * Connections at most for pod traffic, and for events, of the whole process (a fleet's nodes
 * share them). A few are plenty for an API server's answer time of milliseconds; more only
 * cost memory and handshakes.
 */
export const POD_CONNECTIONS = 16;
export const EVENT_CONNECTIONS = 8;
/** The heartbeats' connections: a fleet's Lease renewals fall in the same second now and then. */
export const HEARTBEAT_CONNECTIONS = 8;
/**
 * Nodes a heartbeat connection serves in a large fleet: each renews its Lease every 10 s, so ten
 * make a renewal a second on a connection, which an API server answering within a second keeps
 * up with. A kubelet renews on a connection of its own; 500 nodes' 50 renewals a second on 8
 * connections fell behind an API server taking half a second a write (gaps near the 40 s grace).
 */
export const NODES_PER_HEARTBEAT_CONNECTION = 10;

/** The heartbeat connections of a process running `nodes` nodes: 8, or one per ten nodes in a large fleet. */
export function heartbeatConnections(nodes: number): number {
  return Math.max(HEARTBEAT_CONNECTIONS, Math.ceil(nodes / NODES_PER_HEARTBEAT_CONNECTION));
}

/**
 * Loads a kubeconfig (a file, else `$KUBECONFIG` / `~/.kube/config` as kubectl does).
 * Throws an error naming the file and what is wrong with it.
 */
export function loadKubeClients(path?: string, nodes = 1): KubeClients {
  const config = new KubeConfig();
  try {
    if (path !== undefined) config.loadFromFile(path);
    else config.loadFromDefault();
  } catch (err) {
    throw new Error(`kubeconfig ${path ?? '(default)'}: ${errorMessage(err)}`);
  }
  return kubeClientsFrom(config, `kubeconfig ${path ?? '(default)'}`, nodes);
}

/** The clients over a loaded kubeconfig for a process of `nodes` nodes; `source` names it in errors. */
export function kubeClientsFrom(config: KubeConfig, source = 'kubeconfig', nodes = 1): KubeClients {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error(`${source}: no current context with a cluster; set current-context`);
  const pods = pooledAgent(POD_CONNECTIONS);
  const events = pooledAgent(EVENT_CONNECTIONS);
  const heartbeat = pooledAgent(heartbeatConnections(nodes));
  // Each watch holds its connection for as long as it lasts: shared, never capped.
  const watches = pooledAgent(Infinity);
  const transport = new NodeHttpLibrary();
  const configuration = (pool: PooledAgent): Configuration =>
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: pooledAuthentication(config, pool) },
      httpApi: transport,
    });
  return {
    config,
    core: new CoreV1Api(configuration(pods)),
    coordination: new CoordinationV1Api(configuration(pods)),
    events: new CoreV1Api(configuration(events)),
    heartbeat: { core: new CoreV1Api(configuration(heartbeat)), coordination: new CoordinationV1Api(configuration(heartbeat)) },
    watch: new Watch(pooledWatchConfig(config, watches)),
    server: cluster.server,
    close: () => {
      pods.destroy();
      events.destroy();
      heartbeat.destroy();
      watches.destroy();
    },
  };
}

/**
 * Options for a call given up after `ms` (the heartbeat client's timeout), added to `options`
 * (e.g. {@link strategicMergePatch}). The timer is the socket's, as the kubelet's
 * `http.Client.Timeout` is: wall time, which never keeps the process alive.
 */
export function withTimeout(ms: number, options?: ReturnType<typeof setHeaderOptions>): ReturnType<typeof setHeaderOptions> {
  // Shaped as client-node's own `setHeaderMiddleware`.
  const timeout: ObservableMiddleware = {
    pre: (context) => {
      context.setSignal(AbortSignal.timeout(ms));
      return new Observable(Promise.resolve(context));
    },
    post: (response) => new Observable(Promise.resolve(response)),
  };
  return { ...options, middleware: [...(options?.middleware ?? []), timeout], middlewareMergeStrategy: 'append' };
}

/** Options for a strategic merge patch (what the kubelet sends for pod and node status). */
export const strategicMergePatch = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
/** Options for a JSON merge patch. */
export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** The HTTP status of a failed call (typed call or watch), if it had one. */
export function httpStatus(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code;
  const code = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** What a failed call says: the API's Status message when there is one, else the error's. */
export function errorMessage(err: unknown): string {
  if (err instanceof ApiException) {
    const body: unknown = err.body;
    let message: string | undefined;
    if (typeof body === 'string') {
      try {
        message = (JSON.parse(body) as { message?: string }).message;
      } catch {
        message = body;
      }
    } else {
      message = (body as { message?: string } | null)?.message;
    }
    return `${err.code}: ${message ?? err.message}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * The API's JSON for an object the typed client decoded (its `Date`s back to RFC 3339 in
 * whole seconds, as the API serializes `metav1.Time`).
 */
export function plain<T>(value: unknown): T {
  return JSON.parse(
    JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' && WHOLE_SECOND_ISO.test(v) ? v.replace(/\.000Z$/, 'Z') : v)),
  ) as T;
}

const WHOLE_SECOND_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/;
