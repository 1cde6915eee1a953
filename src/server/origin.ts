import type { IncomingMessage } from 'node:http';
import { isLoopbackHost } from './loopback.js';

/**
 * Whether a request was addressed to this server by a loopback name and came from no
 * other site. Listening on 127.0.0.1 keeps other machines out, but not other web pages in
 * the user's browser: a page elsewhere can point its own host name at 127.0.0.1 (DNS
 * rebinding) or open an EventSource to us. So the dashboard, its stream and `/probes`
 * (which carry probe bodies) answer only requests whose `Host` is a loopback name with our
 * port, and whose `Origin`, when the browser sends one, is this very server.
 *
 * Nor does the Host check keep out a tag on another page: `<img src="http://127.0.0.1:10255/stream">`
 * carries our own Host and no Origin, yet held `/stream` places and read `/pods` from any site
 * the user visited (issue 33). Browsers say where a request comes from (Fetch Metadata,
 * `Sec-Fetch-Site`), so the resource isolation policy applies: a cross-site request, and a
 * same-site one that is no-cors (a tag, not our own `fetch`), is refused. A top-level
 * navigation to the dashboard (a link the user follows) stays allowed, and clients that send
 * no `Sec-Fetch-*` headers (curl, kubectl, scripts, old browsers) are not affected.
 */
export function isOwnOrigin(req: IncomingMessage, port: number): boolean {
  if (!isFetchAllowed(req)) return false;
  const host = req.headers.host;
  if (host === undefined) return false;
  const parsed = splitHostPort(host);
  if (parsed === undefined || parsed.port !== port || !isLoopbackHost(parsed.hostname)) return false;
  const origin = req.headers.origin;
  return origin === undefined || origin === `http://${host}`;
}

function splitHostPort(host: string): { hostname: string; port: number } | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(host);
  if (!match?.[1] || !match[2]) return undefined;
  const hostname = match[1].startsWith('[') ? match[1].slice(1, -1) : match[1];
  return { hostname, port: Number(match[2]) };
}

/** Fetch Metadata resource isolation: whether a browser says this request may come from where it comes from. */
function isFetchAllowed(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site === undefined || site === 'same-origin' || site === 'none') return true;
  const mode = req.headers['sec-fetch-mode'];
  const dest = req.headers['sec-fetch-dest'];
  // The user following a link to the dashboard: a navigation, not a page reading ours.
  if (mode === 'navigate' && req.method === 'GET' && dest !== 'object' && dest !== 'embed' && (req.url ?? '/').split('?')[0] === '/') return true;
  if (site === 'same-site') return mode !== 'no-cors';
  return false;
}
