/**
 * The read-only API's routing, kept apart from sockets so every answer is decided in one
 * place: method and path in, status, headers and body out. HEAD is answered as GET; the
 * server drops the body. The lists (`/pods`, `/events`, `/probes`) are answered as a
 * {@link ListReply}, their items serialized one at a time as the client reads
 * (`list-answer.ts`): 40 clients each asking once for an 8 MiB `/probes` had 40 answers
 * built whole before any was measured (issue 33).
 */
import { Registry } from 'prom-client';
import type { EventList, PodList, Status } from '../api/types.js';
import { badRequestStatus, internalErrorStatus, methodNotAllowedStatus, notFoundStatus } from './status.js';
import type { KubeletView, ProbeQuery } from './view.js';

export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export const ALLOWED_METHODS = 'GET, HEAD';

/**
 * A JSON list answer, written a piece at a time: `head`, the items' JSON joined by commas,
 * `tail` — the same bytes as `JSON.stringify` of the whole list, never whole in memory.
 */
export interface ListReply {
  status: number;
  headers: Record<string, string>;
  list: { head: string; items: Iterable<unknown>; tail: string };
}

export type Answer = Reply | ListReply;

type Handler = (view: KubeletView, query: URLSearchParams) => Promise<Answer>;

const routes: ReadonlyMap<string, Handler> = new Map<string, Handler>([
  ['/healthz', async () => text(200, 'ok', 'text/plain; charset=utf-8')],
  [
    '/pods',
    async (view) => {
      const list: PodList = { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [] };
      return jsonList(list, view.listPods());
    },
  ],
  [
    '/events',
    async (view, query) => {
      const podName = query.get('pod') || undefined;
      const list: EventList = { kind: 'EventList', apiVersion: 'v1', metadata: {}, items: [] };
      return jsonList(list, view.listEvents(podName === undefined ? undefined : { podName }));
    },
  ],
  ['/metrics/probes', async (view) => text(200, await view.probeMetrics(), Registry.PROMETHEUS_CONTENT_TYPE)],
  [
    '/probes',
    async (view, query) => {
      const parsed = probeQuery(query);
      if (typeof parsed === 'string') return status(badRequestStatus(parsed));
      // One ring at a time when the view can (each copied as it is written), else its list.
      const list = { kind: 'ProbeHistoryList', items: [] };
      return jsonList(list, view.eachProbeHistory?.(parsed) ?? view.listProbes?.(parsed) ?? []);
    },
  ],
]);

const PROBE_TYPES = ['liveness', 'readiness', 'startup'] as const;

/** `/probes` filters, or the message saying which one is wrong and how to fix it. */
export function probeQuery(query: URLSearchParams): ProbeQuery | string {
  const out: ProbeQuery = {};
  const pod = query.get('pod');
  if (pod) out.pod = pod;
  const container = query.get('container');
  if (container) out.container = container;
  const type = query.get('type');
  if (type) {
    const probeType = PROBE_TYPES.find((t) => t === type);
    if (probeType === undefined) return `type: Unsupported value: ${JSON.stringify(type)}: supported values: "liveness", "readiness", "startup"`;
    out.probeType = probeType;
  }
  const limit = query.get('limit');
  if (limit) {
    if (!/^\d{1,9}$/.test(limit)) return `limit: Invalid value: ${JSON.stringify(limit)}: must be a non-negative integer`;
    out.limit = Number(limit);
  }
  return out;
}

/** Answers one request. Never rejects: a failing view becomes a 500 `Status`. */
export async function route(view: KubeletView, method: string, rawUrl: string): Promise<Answer> {
  // Split by hand rather than `new URL`, which would read `//host/path` as a host.
  const queryAt = rawUrl.indexOf('?');
  const path = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt);
  const query = new URLSearchParams(queryAt < 0 ? '' : rawUrl.slice(queryAt + 1));
  const handler = routes.get(path);
  if (!handler) return status(notFoundStatus());
  if (method !== 'GET' && method !== 'HEAD') {
    const reply = status(methodNotAllowedStatus());
    reply.headers['Allow'] = ALLOWED_METHODS;
    return reply;
  }
  try {
    return await handler(view, query);
  } catch (err) {
    return status(internalErrorStatus(err));
  }
}

function text(code: number, body: string, contentType: string): Reply {
  return { status: code, headers: { 'Content-Type': contentType, 'X-Content-Type-Options': 'nosniff' }, body };
}

/** Go's JSON encoder ends every document with a newline; so do we. */
function json(code: number, value: unknown): Reply {
  return { status: code, headers: { 'Content-Type': 'application/json' }, body: `${JSON.stringify(value)}\n` };
}

/** `envelope` (whose `items` is empty and its last key) as a {@link ListReply} of `items`. */
function jsonList(envelope: { items: readonly unknown[] }, items: Iterable<unknown>): ListReply {
  const empty = JSON.stringify(envelope);
  if (!empty.endsWith('"items":[]}')) throw new Error('a list envelope must end with its empty items');
  return { status: 200, headers: { 'Content-Type': 'application/json' }, list: { head: empty.slice(0, -2), items, tail: ']}\n' } };
}

function status(s: Status): Reply {
  return json(s.code ?? 500, s);
}
