/**
 * Building the request of an HTTP probe (kubelet `pkg/probe/http/request.go`): the URL
 * from scheme/host/port/path, the headers from `httpHeaders`, and the kubelet's
 * defaults (`User-Agent: kube-probe/<major>.<minor>`, `Accept: *\/*`).
 */
import type { Container, HTTPGetAction, HTTPHeader } from '../api/types.js';
import { PROBE_USER_AGENT } from './constants.js';
import { emptyGoURL, goURLString, HTTP_TOKEN, parseGoURL, toByteString, type GoURL } from './http-url.js';
import { joinHostPort } from './net-errors.js';
import { resolveContainerPort } from './port.js';

/**
 * One probe request. `headers` holds canonical names in the order given, one entry per
 * value (a repeated name accumulates values, like Go's `http.Header.Add`), defaults
 * applied. A `Host` entry sets the request's Host; an empty `User-Agent` means none.
 */
export interface HttpProbeRequest {
  url: string;
  headers: Array<[string, string]>;
  /**
   * Sent as Go's default transport sends it — the lifecycle hooks' client, which keeps
   * connections alive and asks for gzip: no `Connection: close`, `Accept-Encoding: gzip`
   * after the other headers. (probelet still closes the connection after the answer.)
   * Probes never set it: their transport disables both.
   */
  keepAlive?: boolean;
}

/**
 * The request the kubelet sends for `httpGet`: scheme lower-cased (default `http`),
 * host defaulting to the pod IP, named ports resolved against `container`. Throws on
 * port errors and on a URL Go would refuse (e.g. a host with a space in it).
 */
export function newHttpProbeRequest(action: HTTPGetAction, container: Container, podIP: string, userAgent: string = PROBE_USER_AGENT): HttpProbeRequest {
  const scheme = (action.scheme ?? '').toLowerCase() || 'http';
  const host = action.host || podIP;
  const port = resolveContainerPort(action.port, container);
  const url = formatURL(scheme, host, port, action.path ?? '');
  return newHttpProbeRequestForURL(url, httpHeadersFromV1(action.httpHeaders ?? []), userAgent);
}

/**
 * A probe request for a URL given directly (what `probelet probe --http-get` needs):
 * the URL normalised as Go's `http.NewRequest` would, header names canonicalised and
 * the kubelet's defaults applied. Throws Go's parse error for a URL it cannot parse.
 */
export function newHttpProbeRequestForURL(
  url: string,
  headers: ReadonlyArray<readonly [string, string]> = [],
  userAgent: string = PROBE_USER_AGENT,
): HttpProbeRequest {
  const normalised = goURLString(parseGoURL(url));
  const list: Array<[string, string]> = headers.map(([name, value]) => [canonicalHeaderKey(name), value]);
  if (!list.some(([name]) => name === 'User-Agent')) list.push(['User-Agent', userAgent]);
  const accept = list.find(([name]) => name === 'Accept');
  if (!accept) list.push(['Accept', '*/*']);
  else if (accept[1] === '') return { url: normalised, headers: list.filter(([name]) => name !== 'Accept') };
  return { url: normalised, headers: list };
}

/**
 * `scheme://host:port` + `path`, where `path` is read as a URL reference so a query
 * (`/healthz?verbose`) survives; a path Go cannot parse is used as a plain path.
 */
export function formatURL(scheme: string, host: string, port: number, path: string): string {
  let url: GoURL;
  try {
    url = parseGoURL(path);
  } catch {
    url = emptyGoURL();
    url.path = toByteString(path);
  }
  url.scheme = toByteString(scheme);
  url.host = toByteString(joinHostPort(host, port));
  return goURLString(url);
}

/** `httpHeaders` as canonical name/value pairs, in order, repeated names kept. */
export function httpHeadersFromV1(headers: readonly HTTPHeader[]): Array<[string, string]> {
  return headers.map((h) => [canonicalHeaderKey(h.name), h.value]);
}

/**
 * Go's `textproto.CanonicalMIMEHeaderKey`: `accept` → `Accept`, `FOO-bAR` → `Foo-Bar`.
 * A name with a character outside the HTTP token set is returned unchanged.
 */
export function canonicalHeaderKey(name: string): string {
  if (!HTTP_TOKEN.test(name)) return name;
  let upper = true;
  let out = '';
  for (const c of name) {
    out += upper ? c.toUpperCase() : c.toLowerCase();
    upper = c === '-';
  }
  return out;
}
