/**
 * The front door of the read-only API: what is refused before any route sees a request.
 * Only GET and HEAD exist (405 with `Allow` on every path, so no method's handling depends
 * on which paths exist), and a path with dot segments or percent-encoded separators
 * (`/../`, `%2e%2e`, `%2f`, `%5c`, `%00`) is a 400 — the routes match exact paths, but
 * whatever serves files under this server later must never see such a path.
 */
import { ALLOWED_METHODS, type Reply } from './routes.js';
import { badRequestStatus, methodNotAllowedStatus } from './status.js';

/** Percent-encoded `.`, `/`, `\` and NUL: a path that needs them is not one of ours. */
const ENCODED_SEPARATOR = /%(2e|2f|5c|00)/i;

/**
 * The reply that refuses this request, or undefined when it may go on to the routes.
 * `rawHeaders` as Node gives them (name, value, name, value…): a request with two `Host`
 * headers is refused (RFC 9112 §3.2: a 400), since Node keeps only the first one and whatever
 * read the second (a proxy in front) would disagree on where the request was going.
 */
export function guardRequest(method: string, rawUrl: string, rawHeaders: readonly string[] = []): Reply | undefined {
  let hosts = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === 'host') hosts++;
  if (hosts > 1) return statusReply(badRequestStatus(`the request has ${hosts} Host headers; send exactly one`));
  if (method !== 'GET' && method !== 'HEAD') {
    const reply = statusReply(methodNotAllowedStatus());
    reply.headers['Allow'] = ALLOWED_METHODS;
    return reply;
  }
  const queryAt = rawUrl.indexOf('?');
  const path = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt);
  if (ENCODED_SEPARATOR.test(path) || path.includes('\\') || path.split('/').some((s) => s === '.' || s === '..')) {
    return statusReply(badRequestStatus('invalid request path: dot segments and encoded separators are not allowed'));
  }
  return undefined;
}

function statusReply(status: ReturnType<typeof badRequestStatus>): Reply {
  return { status: status.code ?? 400, headers: { 'Content-Type': 'application/json' }, body: `${JSON.stringify(status)}\n` };
}
