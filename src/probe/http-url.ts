/**
 * URLs the way Go's `net/url` handles them. The kubelet builds probe URLs and
 * follows redirects with `net/url`, and its rules leak into what users see: a query
 * written into `httpGet.path` survives, an odd path is re-escaped, a `Location` is
 * resolved RFC 3986 style without WHATWG normalisation, and error texts quote the
 * raw input (`Get "/loop": stopped after 10 redirects`). WHATWG `URL` differs in all
 * of these, so the relevant part of `net/url` is reproduced here.
 *
 * Fields hold *byte strings* (one char per byte, like a Go string) so that percent
 * decoding of arbitrary bytes round-trips; `goURLString` turns the result back into
 * ordinary text.
 */
import { goQuote } from './net-errors.js';

export interface GoUserinfo {
  username: string;
  password: string | undefined;
}

/** Go's `url.URL` (byte strings). */
export interface GoURL {
  scheme: string;
  opaque: string;
  user: GoUserinfo | undefined;
  host: string;
  path: string;
  rawPath: string;
  forceQuery: boolean;
  rawQuery: string;
  fragment: string;
  rawFragment: string;
}

/** Text → byte string (UTF-8), the representation every `GoURL` field uses. */
export function toByteString(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/** Byte string → text (UTF-8). */
export function fromByteString(bytes: string): string {
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

export function emptyGoURL(): GoURL {
  return {
    scheme: '',
    opaque: '',
    user: undefined,
    host: '',
    path: '',
    rawPath: '',
    forceQuery: false,
    rawQuery: '',
    fragment: '',
    rawFragment: '',
  };
}

type Mode = 'path' | 'pathSegment' | 'host' | 'zone' | 'userPassword' | 'queryComponent' | 'fragment';

class URLSyntaxError extends Error {}

/** Go's `url.Parse`; throws an Error worded like Go's (`parse "…": invalid URL escape "%zz"`). */
export function parseGoURL(text: string): GoURL {
  const raw = toByteString(text);
  const hash = raw.indexOf('#');
  const main = hash < 0 ? raw : raw.slice(0, hash);
  let url: GoURL;
  try {
    url = parseMain(main);
  } catch (err) {
    throw new Error(`parse ${goQuote(fromByteString(main))}: ${(err as Error).message}`);
  }
  if (hash < 0) return url;
  try {
    setFragment(url, raw.slice(hash + 1));
  } catch (err) {
    throw new Error(`parse ${goQuote(text)}: ${(err as Error).message}`);
  }
  return url;
}

function parseMain(raw: string): GoURL {
  if (hasControlByte(raw)) throw new URLSyntaxError('net/url: invalid control character in URL');
  const url = emptyGoURL();
  if (raw === '*') {
    url.path = '*';
    return url;
  }
  let rest: string;
  [url.scheme, rest] = splitScheme(raw);
  url.scheme = url.scheme.toLowerCase();
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) {
    url.forceQuery = true;
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) {
      url.rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  if (!rest.startsWith('/')) {
    if (url.scheme !== '') {
      url.opaque = rest;
      return url;
    }
    const firstSegment = rest.split('/', 1)[0] ?? '';
    if (firstSegment.includes(':')) throw new URLSyntaxError('first path segment in URL cannot contain colon');
  }
  if ((url.scheme !== '' || !rest.startsWith('///')) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) {
      rest = authority.slice(slash);
      authority = authority.slice(0, slash);
    }
    [url.user, url.host] = parseAuthority(authority);
  }
  setPath(url, rest);
  return url;
}

/** Go's `isCTL` test over a string; `allowTab` for header values, where HTAB is legal. */
export function hasControlByte(s: string, allowTab = false): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 && !(allowTab && c === 0x09)) || c === 0x7f) return true;
  }
  return false;
}

/** An RFC 9110 token: what a header field name may be made of. */
export const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function splitScheme(raw: string): [string, string] {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] ?? '';
    if (/[a-zA-Z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return ['', raw];
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new URLSyntaxError('missing protocol scheme');
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ['', raw];
  }
  return ['', raw];
}

function parseAuthority(authority: string): [GoUserinfo | undefined, string] {
  const at = authority.lastIndexOf('@');
  const host = parseHost(at < 0 ? authority : authority.slice(at + 1));
  if (at < 0) return [undefined, host];
  const userinfo = authority.slice(0, at);
  if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) throw new URLSyntaxError('net/url: invalid userinfo');
  const colon = userinfo.indexOf(':');
  if (colon < 0) return [{ username: unescape(userinfo, 'userPassword'), password: undefined }, host];
  return [
    {
      username: unescape(userinfo.slice(0, colon), 'userPassword'),
      password: unescape(userinfo.slice(colon + 1), 'userPassword'),
    },
    host,
  ];
}

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']');
    if (close < 0) throw new URLSyntaxError("missing ']' in host");
    const colonPort = host.slice(close + 1);
    if (!validOptionalPort(colonPort)) throw new URLSyntaxError(`invalid port ${goQuote(colonPort)} after host`);
    const zone = host.slice(0, close).indexOf('%25');
    if (zone >= 0) {
      return (
        unescape(host.slice(0, zone), 'host') +
        unescape(host.slice(zone, close), 'zone') +
        unescape(host.slice(close), 'host')
      );
    }
  } else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0) {
      const colonPort = host.slice(colon);
      if (!validOptionalPort(colonPort)) throw new URLSyntaxError(`invalid port ${goQuote(colonPort)} after host`);
    }
  }
  return unescape(host, 'host');
}

function validOptionalPort(port: string): boolean {
  return port === '' || /^:[0-9]*$/.test(port);
}

function setPath(url: GoURL, escaped: string): void {
  url.path = unescape(escaped, 'path');
  url.rawPath = escape(url.path, 'path') === escaped ? '' : escaped;
}

function setFragment(url: GoURL, escaped: string): void {
  url.fragment = unescape(escaped, 'fragment');
  url.rawFragment = escape(url.fragment, 'fragment') === escaped ? '' : escaped;
}

function isHexDigit(c: string | undefined): boolean {
  return c !== undefined && /^[0-9a-fA-F]$/.test(c);
}

function unescape(s: string, mode: Mode): string {
  let out = '';
  for (let i = 0; i < s.length; ) {
    const c = s[i] ?? '';
    if (c === '%') {
      if (!isHexDigit(s[i + 1]) || !isHexDigit(s[i + 2])) {
        throw new URLSyntaxError(`invalid URL escape ${goQuote(s.slice(i, i + 3))}`);
      }
      const triplet = s.slice(i, i + 3);
      const byte = parseInt(s.slice(i + 1, i + 3), 16);
      if (mode === 'host' && byte < 0x80 && triplet !== '%25') {
        throw new URLSyntaxError(`invalid URL escape ${goQuote(triplet)}`);
      }
      if (mode === 'zone' && triplet !== '%25' && byte !== 0x20 && shouldEscape(byte, 'host')) {
        throw new URLSyntaxError(`invalid URL escape ${goQuote(triplet)}`);
      }
      out += String.fromCharCode(byte);
      i += 3;
      continue;
    }
    const code = c.charCodeAt(0);
    if ((mode === 'host' || mode === 'zone') && code < 0x80 && shouldEscape(code, mode)) {
      throw new URLSyntaxError(`invalid character ${goQuote(c)} in host name`);
    }
    out += c === '+' && mode === 'queryComponent' ? ' ' : c;
    i++;
  }
  return out;
}

function shouldEscape(c: number, mode: Mode): boolean {
  const ch = String.fromCharCode(c);
  if (/[a-zA-Z0-9]/.test(ch)) return false;
  if ((mode === 'host' || mode === 'zone') && `!$&'()*+,;=:[]<>"`.includes(ch)) return false;
  if ('-_.~'.includes(ch)) return false;
  if ('$&+,/:;=?@'.includes(ch)) {
    switch (mode) {
      case 'path':
        return ch === '?';
      case 'pathSegment':
        return ch === '/' || ch === ';' || ch === ',' || ch === '?';
      case 'userPassword':
        return ch === '@' || ch === '/' || ch === '?' || ch === ':';
      case 'queryComponent':
        return true;
      case 'fragment':
        return false;
      default:
        break;
    }
  }
  if (mode === 'fragment' && '!()*'.includes(ch)) return false;
  return true;
}

function escape(s: string, mode: Mode): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    if (code === 0x20 && mode === 'queryComponent') out += '+';
    else if (shouldEscape(code, mode)) out += `%${code.toString(16).toUpperCase().padStart(2, '0')}`;
    else out += s[i];
  }
  return out;
}

function validEncoded(s: string, mode: Mode): boolean {
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] ?? '';
    if (`!$&'()*+,;=:@[]%`.includes(ch)) continue;
    if (shouldEscape(s.charCodeAt(i), mode)) return false;
  }
  return true;
}

function escapedPath(url: GoURL): string {
  if (url.rawPath !== '' && validEncoded(url.rawPath, 'path')) {
    try {
      if (unescape(url.rawPath, 'path') === url.path) return url.rawPath;
    } catch {
      // fall through to the default encoding
    }
  }
  if (url.path === '*') return '*';
  return escape(url.path, 'path');
}

function escapedFragment(url: GoURL): string {
  if (url.rawFragment !== '' && validEncoded(url.rawFragment, 'fragment')) {
    try {
      if (unescape(url.rawFragment, 'fragment') === url.fragment) return url.rawFragment;
    } catch {
      // fall through to the default encoding
    }
  }
  return escape(url.fragment, 'fragment');
}

function userinfoString(user: GoUserinfo, redactPassword: boolean): string {
  let s = escape(user.username, 'userPassword');
  if (user.password !== undefined) s += `:${redactPassword ? '***' : escape(user.password, 'userPassword')}`;
  return s;
}

/**
 * Go's `URL.String()`, as text. With `redactPassword` a password prints as `***`
 * (Go's `stripPassword`, used in client error messages).
 */
export function goURLString(url: GoURL, redactPassword = false): string {
  return fromByteString(goURLBytes(url, redactPassword));
}

function goURLBytes(url: GoURL, redactPassword: boolean): string {
  let buf = '';
  if (url.scheme !== '') buf += `${url.scheme}:`;
  if (url.opaque !== '') {
    buf += url.opaque;
  } else {
    if (url.scheme !== '' || url.host !== '' || url.user) {
      if (url.host !== '' || url.path !== '' || url.user) buf += '//';
      if (url.user) buf += `${userinfoString(url.user, redactPassword)}@`;
      if (url.host !== '') buf += escape(url.host, 'host');
    }
    const path = escapedPath(url);
    if (path !== '' && !path.startsWith('/') && url.host !== '') buf += '/';
    if (buf === '' && (path.split('/', 1)[0] ?? '').includes(':')) buf += './';
    buf += path;
  }
  if (url.forceQuery || url.rawQuery !== '') buf += `?${url.rawQuery}`;
  if (url.fragment !== '') buf += `#${escapedFragment(url)}`;
  return buf;
}

/** Go's `URL.RequestURI()` as a byte string: what goes on the HTTP request line. */
export function goRequestURI(url: GoURL): string {
  let result = url.opaque;
  if (result === '') {
    result = escapedPath(url) || '/';
  } else if (result.startsWith('//')) {
    result = `${url.scheme}:${result}`;
  }
  if (url.forceQuery || url.rawQuery !== '') result += `?${url.rawQuery}`;
  return result;
}

function splitHostPort(hostPort: string): [string, string] {
  let host = hostPort;
  let port = '';
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && validOptionalPort(host.slice(colon))) {
    port = host.slice(colon + 1);
    host = host.slice(0, colon);
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return [host, port];
}

/** Go's `URL.Hostname()`: the host without port and IPv6 brackets (byte string). */
export function goURLHostname(url: GoURL): string {
  return splitHostPort(url.host)[0];
}

/** Go's `URL.Port()`: the port digits, or '' when the URL names none. */
export function goURLPort(url: GoURL): string {
  return splitHostPort(url.host)[1];
}

/** Go's `URL.Parse(ref)`: `ref` resolved against `base` (RFC 3986 §5.2). Throws like `parseGoURL`. */
export function resolveGoURL(base: GoURL, ref: string): GoURL {
  return resolveReference(base, parseGoURL(ref));
}

function resolveReference(base: GoURL, ref: GoURL): GoURL {
  const url: GoURL = { ...ref };
  if (ref.scheme === '') url.scheme = base.scheme;
  if (ref.scheme !== '' || ref.host !== '' || ref.user) {
    setPath(url, resolvePath(escapedPath(ref), ''));
    return url;
  }
  if (ref.opaque !== '') {
    url.user = undefined;
    url.host = '';
    url.path = '';
    return url;
  }
  if (ref.path === '' && !ref.forceQuery && ref.rawQuery === '') {
    url.rawQuery = base.rawQuery;
    if (ref.fragment === '') {
      url.fragment = base.fragment;
      url.rawFragment = base.rawFragment;
    }
  }
  url.host = base.host;
  url.user = base.user;
  setPath(url, resolvePath(escapedPath(base), escapedPath(ref)));
  return url;
}

/** RFC 3986 dot-segment removal as Go's `resolvePath` does it. */
function resolvePath(base: string, ref: string): string {
  let full: string;
  if (ref === '') full = base;
  else if (!ref.startsWith('/')) full = base.slice(0, base.lastIndexOf('/') + 1) + ref;
  else full = ref;
  if (full === '') return '';

  const segments = full.split('/');
  let dst = '/';
  let first = true;
  let last = '';
  for (const elem of segments) {
    last = elem;
    if (elem === '.') {
      first = false;
      continue;
    }
    if (elem === '..') {
      const str = dst.slice(1);
      const index = str.lastIndexOf('/');
      dst = '/';
      if (index === -1) first = true;
      else dst += str.slice(0, index);
      continue;
    }
    if (!first) dst += '/';
    dst += elem;
    first = false;
  }
  if (last === '.' || last === '..') dst += '/';
  return dst.length > 1 && dst[1] === '/' ? dst.slice(1) : dst;
}

/** Go's `URL.IsAbs()` for a raw reference, false when it does not parse. */
export function isAbsoluteReference(ref: string): boolean {
  try {
    return parseGoURL(ref).scheme !== '';
  } catch {
    return false;
  }
}
