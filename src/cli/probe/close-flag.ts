/**
 * `--probe-close fin|reset`, one flag for every command that probes real sockets (`probe`,
 * `run`, and the cluster agent): how network probes (TCP, HTTP, gRPC) close their
 * connections. `fin` is the kubelet's orderly close and the default; `reset` is the opt-in
 * for probing one ip:port hundreds of times a second, where TIME_WAIT sockets on the probing
 * side could exhaust the ephemeral ports (docs/probe-close.md).
 */
import { Option } from 'commander';
import type { ProbeClose } from '../../probe/types.js';

export const PROBE_CLOSE_CHOICES: readonly ProbeClose[] = ['fin', 'reset'];

/** The option, for `.addOption(probeCloseOption())`; its value is `flags.probeClose`. */
export function probeCloseOption(): Option {
  return new Option(
    '--probe-close <how>',
    "how network probes close their connections: fin (the kubelet's orderly close) or reset (no TIME_WAIT here, " +
      'but the probed app sees ECONNRESET; for probing one address hundreds of times a second)',
  )
    .choices(PROBE_CLOSE_CHOICES)
    .default('fin');
}
