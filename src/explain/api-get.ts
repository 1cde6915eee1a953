/**
 * A GET of the API's own JSON, undecoded: what `check --cluster` lists its workloads with.
 *
 * The typed clients of client-node decode every object into its model classes (their
 * `ObjectSerializer` walks each field against a type map, turns timestamps into `Date`s), and
 * `plain` then turns them back into the API's JSON — a tenth of `check --cluster`'s CPU over
 * 5,000 objects, to get back the JSON the API server had sent. `check` wants that JSON
 * (it reads files the same way), so lists are parsed once with `JSON.parse` and handed on.
 *
 * The request is client-node's all the same: its kubeconfig authentication (certificates,
 * tokens, exec plugins, proxies) and the node agent's transport, on one keep-alive agent so
 * pages after the first skip the TLS handshake. A failed call is client-node's `ApiException`
 * (status and the API's Status body), so `httpStatus`/`errorMessage` read it as any other.
 *
 * One answer is read up to {@link maxResponseBytes} and no further, whatever the server sends
 * (a body without end, a `Content-Length` of gigabytes): lists come in pages of a few MB
 * (cluster-objects.ts), and the limit leaves room for a server that ignores `limit`.
 */
import { ApiException, HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { NodeHttpLibrary, pooledAgent, pooledAuthentication } from '../node/connections.js';
import { SourceError } from './source-error.js';

/** A GET of `path` (`/apis/apps/v1/deployments`) with its query; resolves to the parsed body. */
export type GetJson = (path: string, query?: Readonly<Record<string, string | undefined>>) => Promise<unknown>;

/**
 * Connections at most: lists go one page after another, a few calls (events of restarted
 * pods) may run side by side.
 */
const CONNECTIONS = 4;

/**
 * The most of one answer read, in MiB. A pod as the API server sends it is about 5 KB
 * (examples/explain/slow-start-pod.json: 4.8 KB with its managedFields and status), so a page of
 * 500 objects is a few MB, and even a server that ignores `limit` and sends 5,000 pods of real
 * apps (several times that size) at once stays well below.
 */
export const MAX_RESPONSE_MIB = 256;
/** The variable that sets another limit, for a cluster whose answers are larger. */
export const MAX_RESPONSE_VAR = 'PROBELET_API_MAX_RESPONSE_MIB';
/** The body is parsed as one string, and V8 holds none longer than 2^29 − 24 characters (just under 512 MiB). */
const MOST_MIB = 511;

/** The limit of one answer in bytes: {@link MAX_RESPONSE_MIB}, or what `$PROBELET_API_MAX_RESPONSE_MIB` says. */
export function maxResponseBytes(env: NodeJS.ProcessEnv = process.env): number {
  const set = env[MAX_RESPONSE_VAR];
  if (set === undefined || set === '') return MAX_RESPONSE_MIB * 2 ** 20;
  const mib = /^[0-9]{1,4}$/.test(set) ? Number(set) : NaN;
  if (!(mib >= 1 && mib <= MOST_MIB)) throw new SourceError(`${MAX_RESPONSE_VAR}=${set}: give a whole number of MiB from 1 to ${MOST_MIB} (the default is ${MAX_RESPONSE_MIB})`);
  return mib * 2 ** 20;
}

function responseTooLarge(request: string, maxBytes: number): SourceError {
  return new SourceError(
    `${request}: the API server's answer is larger than ${maxBytes / 2 ** 20} MiB, the most probelet reads of one answer (lists are asked for in pages of a few MB); if this cluster's answers really are that large, raise it with ${MAX_RESPONSE_VAR}=N (MiB, at most ${MOST_MIB})`,
  );
}

/** GETs on `server` (joined to the path as client-node joins them) with the kubeconfig's credentials; `close` ends the kept-alive connections. */
export function apiGetter(config: KubeConfig, server: string): { get: GetJson; close(): void } {
  const pool = pooledAgent(CONNECTIONS);
  const auth = pooledAuthentication(config, pool);
  const maxBytes = maxResponseBytes();
  const transport = new NodeHttpLibrary({ maxBytes, tooLarge: (request) => responseTooLarge(request, maxBytes) });
  const get: GetJson = async (path, query = {}) => {
    const context = new RequestContext(server + path, HttpMethod.GET);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) context.setQueryParam(name, value);
    context.setHeaderParam('Accept', 'application/json');
    await auth.applySecurityAuthentication(context);
    const response = await transport.send(context).toPromise();
    const text = await response.body.text();
    if (response.httpStatusCode < 200 || response.httpStatusCode > 299) throw new ApiException(response.httpStatusCode, `GET ${path}`, text, response.headers);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // A proxy's or load balancer's page in front of the API server, answered with 200.
      throw new SourceError(`GET ${path}: the answer is not JSON (${JSON.stringify(text.slice(0, 60))}${text.length > 60 ? '…' : ''}): is the kubeconfig's server the API server, not a proxy or web page in front of it?`);
    }
  };
  return { get, close: () => pool.destroy() };
}
