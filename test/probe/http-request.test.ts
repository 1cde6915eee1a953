import { describe, expect, it } from 'vitest';
import type { Container, HTTPGetAction } from '../../src/api/types.js';
import { PROBE_USER_AGENT } from '../../src/probe/constants.js';
import {
  canonicalHeaderKey,
  formatURL,
  httpHeadersFromV1,
  newHttpProbeRequest,
  newHttpProbeRequestForURL,
} from '../../src/probe/http-request.js';

const container: Container = { name: 'c', ports: [{ name: 'http', containerPort: 8080 }] };

describe('formatURL (T36)', () => {
  it.each([
    ['http', 'localhost', 93, '', 'http://localhost:93'],
    ['https', 'localhost', 93, '/path', 'https://localhost:93/path'],
    ['http', 'localhost', 93, '?foo', 'http://localhost:93?foo'],
    ['https', 'localhost', 93, '/path?bar', 'https://localhost:93/path?bar'],
  ])('%s %s %i %j', (scheme, host, port, path, want) => {
    expect(formatURL(scheme, host, port, path)).toBe(want);
  });

  it('brackets IPv6 hosts', () => {
    expect(formatURL('http', '::1', 80, '/healthz')).toBe('http://[::1]:80/healthz');
    expect(formatURL('http', 'fd00::5', 8080, '')).toBe('http://[fd00::5]:8080');
  });

  it('keeps query and escapes, adds a leading slash, re-escapes what must be', () => {
    expect(formatURL('http', '10.0.0.1', 80, '/redirect?loc=%2Fhealthz')).toBe('http://10.0.0.1:80/redirect?loc=%2Fhealthz');
    expect(formatURL('http', '10.0.0.1', 80, 'healthz')).toBe('http://10.0.0.1:80/healthz');
    expect(formatURL('http', '10.0.0.1', 80, '/a%2Fb')).toBe('http://10.0.0.1:80/a%2Fb');
    expect(formatURL('http', '10.0.0.1', 80, '/a b')).toBe('http://10.0.0.1:80/a%20b');
    expect(formatURL('http', '10.0.0.1', 80, '/é')).toBe('http://10.0.0.1:80/%C3%A9');
    expect(formatURL('http', '10.0.0.1', 80, '/x#frag')).toBe('http://10.0.0.1:80/x#frag');
  });

  it('uses an unparsable path as a plain path', () => {
    expect(formatURL('http', '10.0.0.1', 80, '/%zz')).toBe('http://10.0.0.1:80/%25zz');
    expect(formatURL('http', '10.0.0.1', 80, '/a\nb')).toBe('http://10.0.0.1:80/a%0Ab');
  });

  it('an empty host gives a bare port authority', () => {
    expect(formatURL('http', '', 8080, '/healthz')).toBe('http://:8080/healthz');
  });
});

describe('header conversion (T37, T38)', () => {
  it('keeps canonical names and values', () => {
    expect(
      httpHeadersFromV1([
        { name: 'Connection', value: 'Keep-Alive' },
        { name: 'Content-Type', value: 'text/html' },
        { name: 'Accept-Ranges', value: 'bytes' },
      ]),
    ).toEqual([
      ['Connection', 'Keep-Alive'],
      ['Content-Type', 'text/html'],
      ['Accept-Ranges', 'bytes'],
    ]);
  });

  it('canonicalises names case-insensitively', () => {
    expect(
      httpHeadersFromV1([
        { name: 'HOST', value: 'example.com' },
        { name: 'FOO-bAR', value: 'value' },
      ]),
    ).toEqual([
      ['Host', 'example.com'],
      ['Foo-Bar', 'value'],
    ]);
    expect(httpHeadersFromV1([])).toEqual([]);
  });

  it('accumulates repeated names in order', () => {
    const headers = httpHeadersFromV1([
      { name: 'accept', value: 'application/json' },
      { name: 'Accept', value: '*/*' },
      { name: 'pragma', value: 'no-cache' },
      { name: 'X-forwarded-for', value: 'username' },
    ]);
    expect(headers).toEqual([
      ['Accept', 'application/json'],
      ['Accept', '*/*'],
      ['Pragma', 'no-cache'],
      ['X-Forwarded-For', 'username'],
    ]);
  });

  it('canonicalHeaderKey follows Go', () => {
    expect(canonicalHeaderKey('accept')).toBe('Accept');
    expect(canonicalHeaderKey('x-forwarded-FOR')).toBe('X-Forwarded-For');
    expect(canonicalHeaderKey('user-agent')).toBe('User-Agent');
    expect(canonicalHeaderKey('-foo-')).toBe('-Foo-');
    expect(canonicalHeaderKey('bad name')).toBe('bad name');
    expect(canonicalHeaderKey('ünicode')).toBe('ünicode');
  });
});

describe('newHttpProbeRequest', () => {
  const action = (extra: Partial<HTTPGetAction>): HTTPGetAction => ({ port: 8080, ...extra });

  it('defaults scheme, host and headers', () => {
    const req = newHttpProbeRequest(action({ path: '/healthz' }), container, '10.0.0.5');
    expect(req.url).toBe('http://10.0.0.5:8080/healthz');
    expect(req.headers).toEqual([
      ['User-Agent', PROBE_USER_AGENT],
      ['Accept', '*/*'],
    ]);
    expect(PROBE_USER_AGENT).toBe('kube-probe/1.35');
  });

  it('lower-cases the scheme, prefers httpGet.host, resolves named ports', () => {
    const req = newHttpProbeRequest(
      action({ scheme: 'HTTPS', host: 'example.com', port: 'http', path: '/x?y=1' }),
      container,
      '10.0.0.5',
    );
    expect(req.url).toBe('https://example.com:8080/x?y=1');
  });

  it('brackets an IPv6 pod IP', () => {
    expect(newHttpProbeRequest(action({ path: '/h' }), container, 'fd00::1').url).toBe('http://[fd00::1]:8080/h');
  });

  it('keeps given User-Agent/Accept, removes an empty Accept, keeps an empty User-Agent', () => {
    const given = newHttpProbeRequest(
      action({ httpHeaders: [{ name: 'user-agent', value: 'foo/1.0' }, { name: 'accept', value: 'text/html' }] }),
      container,
      '10.0.0.5',
    );
    expect(given.headers).toEqual([
      ['User-Agent', 'foo/1.0'],
      ['Accept', 'text/html'],
    ]);
    const empty = newHttpProbeRequest(
      action({ httpHeaders: [{ name: 'User-Agent', value: '' }, { name: 'Accept', value: '' }, { name: 'X-A', value: '1' }] }),
      container,
      '10.0.0.5',
    );
    expect(empty.headers).toEqual([
      ['User-Agent', ''],
      ['X-A', '1'],
    ]);
  });

  it('throws on port errors', () => {
    expect(() => newHttpProbeRequest(action({ port: 'nope' }), container, '10.0.0.5')).toThrow(
      'strconv.Atoi: parsing "nope": invalid syntax',
    );
    expect(() => newHttpProbeRequest(action({ port: 70000 }), container, '10.0.0.5')).toThrow(
      'invalid port number: 70000',
    );
  });

  it('throws like http.NewRequest for a host Go cannot parse', () => {
    expect(() => newHttpProbeRequest(action({ host: 'my host' }), container, '')).toThrow(
      'parse "http://my%20host:8080": invalid URL escape "%20"',
    );
  });

  it('newHttpProbeRequestForURL canonicalises and defaults', () => {
    const req = newHttpProbeRequestForURL('HTTP://127.0.0.1:80/x', [['x-a', '1']]);
    expect(req.url).toBe('http://127.0.0.1:80/x');
    expect(req.headers).toEqual([
      ['X-A', '1'],
      ['User-Agent', PROBE_USER_AGENT],
      ['Accept', '*/*'],
    ]);
    expect(() => newHttpProbeRequestForURL('http://h:port/')).toThrow('parse "http://h:port/": invalid port ":port" after host');
  });
});
