/**
 * How the agent's API clients reach the API server: one keep-alive agent per kind of traffic
 * (see kube.ts), standing in for the agent client-node makes for every call, and a transport
 * over `node:https` in place of client-node's node-fetch 2.7. node-fetch reports a
 * "Premature close" for a chunked response whose socket was handed straight to the next
 * queued request (its `fixResponseChunkedTransferBadEnding` sees the next request's listener
 * on the socket) — exactly what a bounded keep-alive agent does under load, and the API server
 * answers with chunked bodies above 4 KiB. The typed calls, serialization and authentication
 * stay client-node's; only the bytes travel here.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type AgentOptions } from 'node:https';
import {
  Observable,
  ResponseContext,
  type HttpLibrary,
  type KubeConfig,
  type RequestContext,
  type SecurityAuthentication,
} from '@kubernetes/client-node';

export interface PooledAgent {
  /** The kept-alive agent standing for one client-node made for a single call. */
  agentFor(made: unknown): unknown;
  destroy(): void;
}

/** The TLS settings an agent is made from: a new agent only when they change (a renewed certificate). */
const TLS_FIELDS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

function sameTLS(a: AgentOptions, b: AgentOptions): boolean {
  return TLS_FIELDS.every((field) => {
    const x: unknown = a[field];
    const y: unknown = b[field];
    if (Buffer.isBuffer(x) && Buffer.isBuffer(y)) return x.equals(y);
    return x === y;
  });
}

/**
 * One keep-alive agent with at most `maxSockets` connections, made from the TLS settings of
 * the agents client-node makes per call (it reads the kubeconfig's files at every call, so a
 * renewed certificate gets a new agent; calls still on the old one fail and are retried as any
 * failed call is). A proxy's or plain HTTP agent is left as client-node made it.
 */
export function pooledAgent(maxSockets: number): PooledAgent {
  let current: { options: AgentOptions; agent: HttpsAgent } | undefined;
  return {
    agentFor(made) {
      if (!(made instanceof HttpsAgent) || made.constructor !== HttpsAgent) return made;
      const options = made.options;
      if (current === undefined || !sameTLS(current.options, options)) {
        current?.agent.destroy();
        // LIFO reuse keeps the fewest connections open when traffic falls.
        current = { options, agent: new HttpsAgent({ ...options, keepAlive: true, maxSockets, scheduling: 'lifo' }) };
      }
      return current.agent;
    },
    destroy: () => current?.agent.destroy(),
  };
}

/** The kubeconfig's authentication (headers, client certificate, refreshed tokens) on the pooled agent. */
export function pooledAuthentication(config: KubeConfig, pool: PooledAgent): SecurityAuthentication {
  return {
    getName: () => 'default',
    async applySecurityAuthentication(context: RequestContext) {
      await config.applySecurityAuthentication(context);
      context.setAgent(pool.agentFor(context.getAgent()) as HttpsAgent);
    },
  };
}

/**
 * The kubeconfig as client-node's `Watch` reads it, its agent the pool's: `Watch` asks
 * `applyToFetchOptions` for a new agent at every watch (and every re-watch after the API
 * server ends one), which would be one TLS agent, handshake and idle socket per watch.
 */
export function pooledWatchConfig(config: KubeConfig, pool: PooledAgent): KubeConfig {
  const shared = Object.create(config) as KubeConfig;
  shared.applyToFetchOptions = async (options) => {
    const init = await config.applyToFetchOptions(options);
    return { ...init, agent: pool.agentFor(init.agent) as typeof init.agent };
  };
  return shared;
}

/** The response's headers as client-node keeps them: lower-case names, one string each. */
function headersOf(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** The most of one response a transport reads, and the error it ends a larger one with. */
export interface BodyLimit {
  maxBytes: number;
  /** The error for the response of `url` (method and URL, as sent) that would pass `maxBytes`. */
  tooLarge(url: string): Error;
}

/**
 * client-node's `HttpLibrary` over `node:http(s)`: the request's agent, headers, body and abort
 * signal as given. With a `limit`, a response that declares or sends more than its `maxBytes`
 * is cut off there (its connection destroyed, never reused) and the call fails with
 * `limit.tooLarge`: a server cannot make the reader hold more than that.
 */
export class NodeHttpLibrary implements HttpLibrary {
  constructor(private readonly limit?: BodyLimit) {}

  send(context: RequestContext): Observable<ResponseContext> {
    const limit = this.limit;
    return new Observable(
      new Promise<ResponseContext>((resolve, reject) => {
        const body = context.getBody();
        if (body !== undefined && typeof body !== 'string') {
          reject(new Error(`${context.getHttpMethod()} ${context.getUrl()}: only JSON bodies are sent by the node agent`));
          return;
        }
        const url = new URL(context.getUrl());
        const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
        const signal = context.getSignal();
        const req = send(
          url,
          {
            method: context.getHttpMethod(),
            // Node sends no Content-Length of its own for a DELETE with a body (the pod deletion's
            // preconditions): the API server would take the body for the next request on the connection.
            headers: body === undefined ? context.getHeaders() : { ...context.getHeaders(), 'content-length': String(Buffer.byteLength(body)) },
            agent: context.getAgent(),
            ...(signal ? { signal } : {}),
          },
          (res) => {
            const chunks: Buffer[] = [];
            let received = 0;
            const cutOff = (l: BodyLimit): void => {
              req.destroy();
              reject(l.tooLarge(`${context.getHttpMethod()} ${context.getUrl()}`));
            };
            if (limit !== undefined && Number(res.headers['content-length'] ?? 0) > limit.maxBytes) {
              cutOff(limit);
              return;
            }
            res.on('data', (chunk: Buffer) => {
              received += chunk.length;
              if (limit !== undefined && received > limit.maxBytes) cutOff(limit);
              else chunks.push(chunk);
            });
            res.on('error', reject);
            res.on('end', () => {
              const bytes = Buffer.concat(chunks);
              resolve(
                new ResponseContext(res.statusCode ?? 0, headersOf(res.headers), {
                  text: () => Promise.resolve(bytes.toString('utf8')),
                  binary: () => Promise.resolve(bytes),
                }),
              );
            });
          },
        );
        req.on('error', reject);
        req.end(body);
      }),
    );
  }
}
