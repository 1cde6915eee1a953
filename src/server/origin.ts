import type { IncomingMessage } from 'node:http';
import { isLoopbackHost } from './loopback.js';

/**
 * Whether a request was addressed to this server by a loopback name and came from no
 * other site. Listening on 127.0.0.1 keeps other machines out, but not other web pages in
 * the user's browser: a page elsewhere can point its own host name at 127.0.0.1 (DNS
 * rebinding) or open an EventSource to us. So the dashboard, its stream and `/probes`
 * (which carry probe bodies) answer only requests whose `Host` is a loopback name with our
 * port, and whose `Origin`, when the browser sends one, is this very server.
 */
export function isOwnOrigin(req: IncomingMessage, port: number): boolean {
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
