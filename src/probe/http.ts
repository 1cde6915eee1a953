/**
 * The HTTP probe handler (kubelet `pkg/probe/http`): Go's `http.Client` policy —
 * one deadline for the whole chain, redirects, header copying — and the kubelet's
 * verdict on the final response. The wire exchange itself is in `http-transport.ts`.
 */
import type { IncomingMessage } from 'node:http';
import { afterPendingIO, realClock } from '../util/clock.js';
import { MAX_HTTP_REDIRECTS } from './constants.js';
import type { HttpProbeRequest } from './http-request.js';
import { prepareHop, readBody, send, type Connection, type Deadline, type Hop, type PreparedHop } from './http-transport.js';
import {
  fromByteString,
  goURLHostname,
  goURLString,
  isAbsoluteReference,
  parseGoURL,
  resolveGoURL,
  type GoURL,
} from './http-url.js';
import { goQuote } from './net-errors.js';
import type { HandlerObservation, NetProbeOptions, ProbeClose, ProbeOutcome } from './types.js';

export interface HttpProbeOptions extends NetProbeOptions {
  /**
   * Also follow redirects to other hostnames (Go's default client). The kubelet never
   * does: a redirect off the probed host ends the chain with a warning.
   */
  followNonLocalRedirects?: boolean;
  /** Ends the request as its deadline would (a lifecycle hook whose pod is being deleted). */
  signal?: AbortSignal;
}

const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);

/** Headers Go drops when a redirect leaves the domain (Go's `shouldCopyHeaderOnRedirect`). */
const SENSITIVE_HEADERS = new Set([
  'Authorization',
  'Www-Authenticate',
  'Cookie',
  'Cookie2',
  'Proxy-Authorization',
  'Proxy-Authenticate',
]);

/**
 * Runs one HTTP probe. `timeoutMs` covers connect, TLS, every redirect, the headers and
 * the body (0 or less: no deadline, like Go's zero `Client.Timeout`).
 *
 * - 2xx → success, output = body (first 10 KiB)
 * - 3xx that is not followed → warning, `Probe terminated redirects, Response body: <body>`
 * - any other status → failure, `HTTP probe failed with statuscode: <code>`
 * - transport error → failure, output = Go's client error (`Get "<url>": dial tcp …`)
 * - body unreadable → failure with `error` set (an *errored* probe, retried by the prober)
 * - URL unparsable → unknown with `error` set
 */
export async function probeHttp(
  request: HttpProbeRequest,
  timeoutMs: number,
  options: HttpProbeOptions = {},
  seen?: HandlerObservation,
): Promise<ProbeOutcome> {
  let parsed: ParsedRequest;
  try {
    parsed = parsedRequest(request);
  } catch (err) {
    return { result: 'unknown', output: '', error: err instanceof Error ? err : new Error(String(err)) };
  }
  const deadline = startDeadline(timeoutMs, options.signal);
  try {
    return await follow(parsed, deadline, options.followNonLocalRedirects === true, options.close ?? 'fin', seen);
  } finally {
    deadline.stop();
  }
}

/**
 * What a request turns into before anything is sent: its URL parsed the Go way, the
 * first hop, that hop as it goes out (basic auth from the URL applied) and everything
 * `send` derives from it before dialling.
 */
interface ParsedRequest {
  /** The request's `url` and a copy of its `headers`, to tell whether it still reads the same. */
  readonly url: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly first: Hop;
  readonly firstSent: Hop;
  readonly prepared: PreparedHop;
}

/**
 * Parsed requests by request object. A worker's prober hands the same request object to
 * every probe it runs, and parsing, escaping and validating the same URL and headers at
 * every period is most of this handler's own cost; the result depends on the request's
 * `url` and `headers` only. Weak: a request nobody holds any more takes its entry along.
 */
const parsedRequests = new WeakMap<HttpProbeRequest, ParsedRequest>();

/**
 * The parsed form of `request`, from the cache when the request still has the url and
 * headers it was parsed with (a caller may change a request between probes: then it is
 * parsed again, exactly as the first time). Throws Go's parse error for a bad URL
 * (not cached: errors are rare and cheap to reproduce).
 */
function parsedRequest(request: HttpProbeRequest): ParsedRequest {
  const cached = parsedRequests.get(request);
  if (cached !== undefined && cached.url === request.url && cached.first.keepAlive === (request.keepAlive === true) && sameHeaders(cached.headers, request.headers)) {
    return cached;
  }
  // Frozen: the same objects serve every later probe of this request, so nothing may change them.
  const url = Object.freeze(parseGoURL(request.url));
  const headers = request.headers.map(([name, value]): [string, string] => [name, value]);
  const first: Hop = { url, headers, host: firstValue(headers, 'Host') ?? '', keepAlive: request.keepAlive === true };
  const firstSent = withBasicAuth(first);
  const parsed: ParsedRequest = Object.freeze({
    url: request.url,
    headers: Object.freeze(headers.map(([name, value]) => Object.freeze([name, value] as const))),
    first,
    firstSent,
    prepared: prepareHop(firstSent),
  });
  parsedRequests.set(request, parsed);
  return parsed;
}

function sameHeaders(
  a: ReadonlyArray<readonly [string, string]>,
  b: ReadonlyArray<readonly [string, string]>,
): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined || x[0] !== y[0] || x[1] !== y[1]) return false;
  }
  return true;
}

/** Go's `Client.do`: send, and keep following redirects while policy allows. */
async function follow(
  parsed: ParsedRequest,
  deadline: Deadline,
  followNonLocal: boolean,
  close: ProbeClose,
  seen: HandlerObservation | undefined,
): Promise<ProbeOutcome> {
  const { first } = parsed;
  const chain: Hop[] = [];
  let hop = first;
  for (;;) {
    chain.push(hop);
    // The first hop goes out as prepared once for this request; redirects are new each time.
    const sent =
      hop === first
        ? await send(parsed.firstSent, deadline, parsed.prepared, close)
        : await send(withBasicAuth(hop), deadline, undefined, close);
    if (!sent.ok) {
      if (sent.errored) return { result: 'unknown', output: '', error: sent.errored };
      return failure(`Get ${goQuote(goURLString(hop.url, true))}: ${sent.message}`);
    }
    const { response, connection } = sent;
    const location = REDIRECT_STATUS.has(response.statusCode ?? 0) ? locationOf(response) : '';
    if (location === '') return judge(response, connection, deadline, seen);

    let target: GoURL;
    try {
      target = resolveGoURL(hop.url, location);
    } catch (err) {
      connection.close();
      const cause = (err as Error).message;
      return failure(
        `Get ${goQuote(goURLString(hop.url, true))}: failed to parse Location header ${goQuote(location)}: ${cause}`,
      );
    }
    const next = nextHop(hop, first, target, location);
    if (!followNonLocal && goURLHostname(target) !== goURLHostname(first.url)) {
      if (seen) seen.redirect = location;
      return judge(response, connection, deadline, seen);
    }
    connection.close();
    if (chain.length >= MAX_HTTP_REDIRECTS) {
      return failure(`Get ${goQuote(location)}: stopped after ${MAX_HTTP_REDIRECTS} redirects`);
    }
    hop = next;
  }
}

/**
 * The request for a redirect: the original headers (sensitive ones only within the
 * domain), a Referer, and the custom Host only when `Location` was relative.
 */
function nextHop(previous: Hop, first: Hop, target: GoURL, location: string): Hop {
  const keepHost = previous.host !== '' && previous.host !== previous.url.host && !isAbsoluteReference(location);
  const sameDomain = isDomainOrSubdomain(
    fromByteString(goURLHostname(target)).toLowerCase(),
    fromByteString(goURLHostname(previous.url)).toLowerCase(),
  );
  const headers = first.headers.filter(([name]) => sameDomain || !SENSITIVE_HEADERS.has(name));
  const referer = refererFor(previous.url, target, firstValue(headers, 'Referer') ?? '');
  const withReferer: Array<[string, string]> =
    referer === '' ? headers : [...headers.filter(([name]) => name !== 'Referer'), ['Referer', referer]];
  return { url: target, host: keepHost ? previous.host : '', headers: withReferer, keepAlive: previous.keepAlive };
}

function isDomainOrSubdomain(sub: string, parent: string): boolean {
  return sub === parent || sub.endsWith(`.${parent}`);
}

/** Go's `refererForURL`: the previous URL without credentials, never from https to http. */
function refererFor(last: GoURL, next: GoURL, explicit: string): string {
  if (last.scheme === 'https' && next.scheme === 'http') return '';
  if (explicit !== '') return explicit;
  return goURLString({ ...last, user: undefined });
}

/** Go's client turns URL credentials into basic auth unless Authorization is given. */
function withBasicAuth(hop: Hop): Hop {
  const user = hop.url.user;
  if (!user || firstValue(hop.headers, 'Authorization')) return hop;
  const token = Buffer.from(`${user.username}:${user.password ?? ''}`, 'latin1').toString('base64');
  return { ...hop, headers: [...hop.headers.filter(([n]) => n !== 'Authorization'), ['Authorization', `Basic ${token}`]] };
}

/** The first `Location` value as text (node:http hands header values over as latin1 bytes). */
function locationOf(response: IncomingMessage): string {
  const value = response.headers.location;
  return value ? fromByteString(value) : '';
}

/** The kubelet's verdict (`DoHTTPProbe`), after reading at most 10 KiB of the body. */
async function judge(
  response: IncomingMessage,
  connection: Connection,
  deadline: Deadline,
  seen: HandlerObservation | undefined,
): Promise<ProbeOutcome> {
  if (seen) observeResponse(response, seen);
  const body = await readBody(response, connection, deadline);
  if (!body.ok) return { result: 'failure', output: '', error: body.error };
  const status = response.statusCode ?? 0;
  const text = body.bytes.toString('utf8');
  if (seen) seen.body = text;
  if (status >= 200 && status < 300) return { result: 'success', output: text };
  if (status >= 300 && status < 400) {
    return { result: 'warning', output: `Probe terminated redirects, Response body: ${text}` };
  }
  return failure(`HTTP probe failed with statuscode: ${status}`);
}

/** Response headers worth showing beside a verdict (lower-case, as node:http keys them). */
const OBSERVED_HEADERS = ['content-type', 'content-length', 'location', 'retry-after'] as const;

function observeResponse(response: IncomingMessage, seen: HandlerObservation): void {
  seen.statusCode = response.statusCode ?? 0;
  let headers: Record<string, string> | undefined;
  for (const name of OBSERVED_HEADERS) {
    const value = response.headers[name];
    if (typeof value === 'string') (headers ??= {})[name] = fromByteString(value);
  }
  seen.headers = headers;
}

function failure(output: string): ProbeOutcome {
  return { result: 'failure', output };
}

function firstValue(headers: ReadonlyArray<readonly [string, string]>, name: string): string | undefined {
  return headers.find(([n]) => n === name)?.[1];
}

/**
 * The probe's one real-time deadline; `stop()` leaves no timer behind. A class rather than an
 * object literal with a getter, which V8 allocates in the old generation, where it kept every
 * probe's listeners (and through them the exchange) alive until a full GC (see
 * `ProbeConnection` in http-transport.ts).
 */
class ProbeDeadline implements Deadline {
  expired = false;
  private stopped = false;
  private readonly listeners = new Set<() => void>();
  private readonly handle: unknown;

  private readonly signal: AbortSignal | undefined;
  private readonly onAbort = (): void => this.expire();

  constructor(timeoutMs: number, signal?: AbortSignal) {
    // A reply already waiting when the timer fires (the loop was busy) still counts.
    this.handle = timeoutMs > 0 ? realClock.setTimeout(() => afterPendingIO(() => this.expire()), timeoutMs) : undefined;
    this.signal = signal;
    if (signal?.aborted === true) this.expired = true;
    else signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  private expire(): void {
    if (this.stopped) return;
    this.expired = true;
    for (const fn of [...this.listeners]) fn();
    this.listeners.clear();
  }

  onExpire(fn: () => void): () => void {
    if (this.expired) {
      fn();
      return () => undefined;
    }
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  stop(): void {
    this.stopped = true;
    if (this.handle !== undefined) realClock.clearTimeout(this.handle);
    this.signal?.removeEventListener('abort', this.onAbort);
    this.listeners.clear();
  }
}

function startDeadline(timeoutMs: number, signal?: AbortSignal): ProbeDeadline {
  return new ProbeDeadline(timeoutMs, signal);
}
