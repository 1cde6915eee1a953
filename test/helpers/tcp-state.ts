/**
 * Reads the kernel's TCP socket table (Linux `/proc/net/tcp` and `/proc/net/tcp6`) so tests
 * can prove that a probe leaves no TIME_WAIT socket behind on the probing side.
 */
import { readFile } from 'node:fs/promises';

/** Kernel TCP state numbers as printed in the `st` column. */
export const TCP_STATE_TIME_WAIT = '06';

export interface TcpTableEntry {
  localPort: number;
  remotePort: number;
  /** Two hex digits, e.g. `06` for TIME_WAIT, `0A` for LISTEN. */
  state: string;
}

/** `0100007F:1F90` → 8080 (the port is the hex after the colon). */
function portOf(hexAddress: string): number {
  const hexPort = hexAddress.slice(hexAddress.lastIndexOf(':') + 1);
  return Number.parseInt(hexPort, 16);
}

/** Parses the text of `/proc/net/tcp` or `/proc/net/tcp6` (header line skipped). */
export function parseTcpTable(text: string): TcpTableEntry[] {
  const entries: TcpTableEntry[] = [];
  for (const line of text.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    const [, local, remote, state] = fields;
    if (local === undefined || remote === undefined || state === undefined) continue;
    entries.push({ localPort: portOf(local), remotePort: portOf(remote), state: state.toUpperCase() });
  }
  return entries;
}

/** Every IPv4 and IPv6 TCP socket of this network namespace. */
export async function readTcpTable(): Promise<TcpTableEntry[]> {
  const tables = await Promise.all(
    ['/proc/net/tcp', '/proc/net/tcp6'].map((path) => readFile(path, 'utf8').catch(() => '')),
  );
  return tables.flatMap(parseTcpTable);
}

/**
 * TIME_WAIT sockets matching every port given (a connection is its 4-tuple: with only a
 * local port, another test's socket reusing that ephemeral port towards another peer matches).
 */
export async function timeWaitSockets(match: { localPort?: number; remotePort?: number }): Promise<TcpTableEntry[]> {
  const table = await readTcpTable();
  return table.filter(
    (e) =>
      e.state === TCP_STATE_TIME_WAIT &&
      (match.localPort === undefined || e.localPort === match.localPort) &&
      (match.remotePort === undefined || e.remotePort === match.remotePort),
  );
}
