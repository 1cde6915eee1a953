/**
 * Name resolution for network probes, without libuv's thread pool. Node's default
 * (`dns.lookup`) runs `getaddrinfo` on that pool's four threads: a few probes of a name the
 * DNS server never answers held all four, and every other probe's lookup — `localhost` of a
 * healthy pod — and every file operation waited behind them until its probe timed out: the
 * healthy pod was killed (issue 33). The kubelet's Go resolver has no such shared limit.
 *
 * So, in the order Go's resolver uses on Linux (nsswitch's default `hosts: files dns`):
 * `/etc/hosts` first (read synchronously, re-read when it changed, at most every 5 s like
 * Go's cache), then DNS through c-ares (`dns.Resolver`, which honours resolv.conf's
 * servers, search list and ndots, and waits on sockets, not threads). A and AAAA are asked
 * together, as Go does. The probe's own deadline cancels a lookup still running
 * ({@link ProbeLookup.cancel}), so the resolution counts inside the probe's timeout.
 */
import dns from 'node:dns';
import { readFileSync, statSync } from 'node:fs';
import net, { type LookupFunction } from 'node:net';
import { realClock } from '../util/clock.js';

/** Go re-reads /etc/hosts when it changed, checking at most this often (`cacheMaxAge`). */
const HOSTS_CHECK_MS = 5000;
export const HOSTS_PATH = '/etc/hosts';

interface HostsCache {
  checkedAt: number;
  mtimeMs: number;
  byName: Map<string, string[]>;
}

let hosts: HostsCache | undefined;

/** Lower-cased name (no trailing dot) → addresses, in file order. */
function parseHosts(text: string): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const rawLine of text.split('\n')) {
    const hash = rawLine.indexOf('#');
    const fields = (hash < 0 ? rawLine : rawLine.slice(0, hash)).split(/[ \t]+/).filter((f) => f !== '');
    const address = fields[0];
    if (address === undefined || fields.length < 2 || net.isIP(address.split('%')[0] ?? '') === 0) continue;
    for (const name of fields.slice(1)) {
      const key = name.toLowerCase().replace(/\.$/, '');
      const list = byName.get(key) ?? [];
      if (!list.includes(address)) list.push(address);
      byName.set(key, list);
    }
  }
  return byName;
}

/** The addresses /etc/hosts gives `name`, or undefined when it has none (or cannot be read). */
export function hostsLookup(name: string, now = realClock.now()): string[] | undefined {
  if (hosts === undefined || now - hosts.checkedAt >= HOSTS_CHECK_MS) {
    try {
      const mtimeMs = statSync(HOSTS_PATH).mtimeMs;
      if (hosts === undefined || hosts.mtimeMs !== mtimeMs) hosts = { checkedAt: now, mtimeMs, byName: parseHosts(readFileSync(HOSTS_PATH, 'latin1')) };
      else hosts.checkedAt = now;
    } catch {
      hosts = { checkedAt: now, mtimeMs: -1, byName: new Map() };
    }
  }
  return hosts.byName.get(name.toLowerCase().replace(/\.$/, ''));
}

/** A lookup for one probe's connection, and how to stop it when the probe's deadline passes. */
export interface ProbeLookup {
  lookup: LookupFunction;
  /** Cancels the DNS queries still running (their callback gets `ECANCELLED`); idempotent. */
  cancel(): void;
}

/** Error codes of c-ares that mean the name has no address: Go's "no such host". */
const NO_SUCH_HOST: ReadonlySet<string> = new Set([dns.NOTFOUND, dns.NODATA, dns.NONAME, dns.BADNAME]);

/**
 * The resolution error as node:net reports a lookup's: `ENOTFOUND` for a name without
 * addresses (Go: `lookup NAME: no such host`), `ETIMEOUT` when no server answered (Go:
 * `i/o timeout`), anything else a server failure (Go: `server misbehaving`).
 */
function lookupError(name: string, err: NodeJS.ErrnoException | undefined): NodeJS.ErrnoException {
  const code = err?.code === undefined ? dns.NOTFOUND : NO_SUCH_HOST.has(err.code) ? 'ENOTFOUND' : err.code === dns.TIMEOUT ? 'ETIMEOUT' : 'ESERVFAIL';
  return Object.assign(new Error(`lookup ${name}: ${code}`), { code, hostname: name });
}

export function probeLookup(): ProbeLookup {
  let resolver: dns.Resolver | undefined;
  let cancelled = false;
  const lookup = ((hostname: string, options: dns.LookupOptions, done: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void): void => {
    // Always later, as dns.lookup calls back: node:net's caller attaches its `lookup` listener after connect().
    const callback: typeof done = (...args) => process.nextTick(() => done(...args));
    const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
    const answer = (addresses: string[]): void => {
      const found = addresses.map((address) => ({ address, family: net.isIP(address) })).filter((a) => family === 0 || a.family === family);
      const first = found[0];
      if (first === undefined) callback(lookupError(hostname, undefined), options.all ? [] : '');
      else if (options.all) callback(null, found);
      else callback(null, first.address, first.family);
    };
    if (net.isIP(hostname) !== 0) return answer([hostname]);
    const fromHosts = hostsLookup(hostname);
    if (fromHosts !== undefined) return answer(fromHosts);
    if (cancelled) return callback(Object.assign(new Error(`lookup ${hostname}: cancelled`), { code: dns.CANCELLED }), options.all ? [] : '');
    resolver ??= new dns.Resolver();
    const ask = (rrtype: 4 | 6): Promise<{ addresses: string[]; err?: NodeJS.ErrnoException }> =>
      new Promise((resolve) => {
        if (family !== 0 && family !== rrtype) return resolve({ addresses: [] });
        const done = (err: NodeJS.ErrnoException | null, addresses: string[]): void => resolve(err ? { addresses: [], err } : { addresses });
        if (rrtype === 4) resolver?.resolve4(hostname, done);
        else resolver?.resolve6(hostname, done);
      });
    void Promise.all([ask(4), ask(6)]).then(([a, aaaa]) => {
      const addresses = [...a.addresses, ...aaaa.addresses];
      if (addresses.length > 0) return answer(addresses);
      // Prefer the error that says most: a timeout or failure over "no such host" of one family.
      const errs = [a.err, aaaa.err].filter((e): e is NodeJS.ErrnoException => e !== undefined);
      const telling = errs.find((e) => e.code !== undefined && !NO_SUCH_HOST.has(e.code)) ?? errs[0];
      callback(lookupError(hostname, telling), options.all ? [] : '');
    });
  }) as LookupFunction;
  return {
    lookup,
    cancel: () => {
      cancelled = true;
      resolver?.cancel();
    },
  };
}
