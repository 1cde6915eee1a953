import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * The API has no authentication (like the kubelet's read-only port), so it must never be
 * reachable from another machine: only loopback addresses may be listened on.
 */
const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6'); // BlockList also matches IPv4-mapped ::ffff:127.x.y.z against the ipv4 rule

export function isLoopbackHost(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  if (isIPv4(host)) return loopback.check(host, 'ipv4');
  if (isIPv6(host)) return loopback.check(host, 'ipv6');
  return false;
}

/** Why a host is refused, in the words users see from `startServer` and `--listen`. */
export function nonLoopbackMessage(host: string): string {
  return `refusing to serve the read-only API on ${JSON.stringify(host)}: it has no authentication, so only loopback addresses (127.0.0.1, ::1, localhost) are allowed`;
}
