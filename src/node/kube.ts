/**
 * The node agent's API clients, from `@kubernetes/client-node` (the official client; no
 * hand-written REST). Its typed calls turn timestamps into `Date`s; the kubelet works on the
 * API's JSON shapes (`kubernetes-types`), so what comes back is made plain again with
 * {@link plain} at this boundary and nowhere else.
 */
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  Watch,
  setHeaderOptions,
} from '@kubernetes/client-node';

export interface KubeClients {
  config: KubeConfig;
  core: CoreV1Api;
  coordination: CoordinationV1Api;
  watch: Watch;
  /** The API server's URL, for messages. */
  server: string;
}

/**
 * Loads a kubeconfig (a file, else `$KUBECONFIG` / `~/.kube/config` as kubectl does).
 * Throws an error naming the file and what is wrong with it.
 */
export function loadKubeClients(path?: string): KubeClients {
  const config = new KubeConfig();
  try {
    if (path !== undefined) config.loadFromFile(path);
    else config.loadFromDefault();
  } catch (err) {
    throw new Error(`kubeconfig ${path ?? '(default)'}: ${errorMessage(err)}`);
  }
  return kubeClientsFrom(config, `kubeconfig ${path ?? '(default)'}`);
}

/** The clients over a loaded kubeconfig; `source` names it in errors. */
export function kubeClientsFrom(config: KubeConfig, source = 'kubeconfig'): KubeClients {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error(`${source}: no current context with a cluster; set current-context`);
  return {
    config,
    core: config.makeApiClient(CoreV1Api),
    coordination: config.makeApiClient(CoordinationV1Api),
    watch: new Watch(config),
    server: cluster.server,
  };
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
