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
 */
import { ApiException, HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { NodeHttpLibrary, pooledAgent, pooledAuthentication } from '../node/connections.js';

/** A GET of `path` (`/apis/apps/v1/deployments`) with its query; resolves to the parsed body. */
export type GetJson = (path: string, query?: Readonly<Record<string, string | undefined>>) => Promise<unknown>;

/**
 * Connections at most: lists go one page after another, a few calls (events of restarted
 * pods) may run side by side.
 */
const CONNECTIONS = 4;

/** GETs on `server` (joined to the path as client-node joins them) with the kubeconfig's credentials; `close` ends the kept-alive connections. */
export function apiGetter(config: KubeConfig, server: string): { get: GetJson; close(): void } {
  const pool = pooledAgent(CONNECTIONS);
  const auth = pooledAuthentication(config, pool);
  const transport = new NodeHttpLibrary();
  const get: GetJson = async (path, query = {}) => {
    const context = new RequestContext(server + path, HttpMethod.GET);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) context.setQueryParam(name, value);
    context.setHeaderParam('Accept', 'application/json');
    await auth.applySecurityAuthentication(context);
    const response = await transport.send(context).toPromise();
    const text = await response.body.text();
    if (response.httpStatusCode < 200 || response.httpStatusCode > 299) throw new ApiException(response.httpStatusCode, `GET ${path}`, text, response.headers);
    return JSON.parse(text) as unknown;
  };
  return { get, close: () => pool.destroy() };
}
