/**
 * The values of `probelet run`'s flags that need parsing: durations the way kubectl and
 * the kubelet write them, and the listen address. Bad values are usage errors (exit 2).
 */
import { parseDurationMs } from '../../util/duration.js';
import { isLoopbackHost, nonLoopbackMessage } from '../../server/loopback.js';
import { CliUsageError } from '../io.js';

/**
 * `30s`, `2m`, `1m30s`, `1.5h`, `500ms` (Go's `time.ParseDuration` units) or plain seconds
 * (`45`), in milliseconds. Must be positive: a zero timeout would stop the run before it starts.
 */
export function parseDuration(text: string, flag: string): number {
  const ms = parseDurationMs(text);
  if (ms === undefined) {
    throw new CliUsageError(`${flag}: invalid duration ${JSON.stringify(text)} (examples: 30s, 2m, 1m30s, or plain seconds)`);
  }
  if (!(ms > 0)) throw new CliUsageError(`${flag}: the duration must be positive, got ${JSON.stringify(text)}`);
  return ms;
}

export interface ListenAddress {
  host: string;
  port: number;
}

/**
 * `HOST:PORT`, `[IPv6]:PORT` or `:PORT` (host 127.0.0.1) for `flag`. Port 0 picks a free port.
 * A host that is not loopback is refused here, before anything runs (the server refuses it too).
 */
export function parseListen(text: string, flag = '--listen'): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[3]);
  if (!match || port > 65535) {
    throw new CliUsageError(`${flag}: expected HOST:PORT (e.g. 127.0.0.1:10255, or port 0 for any free port), got ${JSON.stringify(text)}`);
  }
  const host = match[1] ?? (match[2] || '127.0.0.1');
  if (!isLoopbackHost(host)) {
    throw new CliUsageError(`${flag} ${host}:${port}: ${nonLoopbackMessage(host)}`);
  }
  return { host, port };
}
