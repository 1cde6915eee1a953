/**
 * Probe handlers behind the Prober's handler seam that answer from the behaviour script on
 * the simulator's clock, in the real handlers' words (users grep events for them):
 *
 * | state    | HTTP                    | TCP       | gRPC                      | exec              |
 * |----------|-------------------------|-----------|---------------------------|-------------------|
 * | up       | 200                     | accepts   | SERVING                   | exit 0            |
 * | down     | connection refused      | refused   | no connection by timeout  | exit 1            |
 * | fail     | 500 (`fail(N)`: N)      | accepts   | NOT_SERVING               | exit 1            |
 * | hang     | timeout                 | accepts   | timeout                   | timeout           |
 * | slow(D)  | 200 after D (timeout if D ≥ timeoutSeconds), TCP accepts at once             |
 * | redirect(URL) | 302 to another host: a warning (ProbeWarning event), counted a success; TCP, gRPC, exec as `up` |
 *
 * TCP succeeds for a hung process because the kernel completes the handshake, as on a node.
 * Exec goes through the real `probeExec` (its mapping of exit codes and timeouts), with a
 * runner that asks the simulated runtime.
 */
import { probeExec } from '../probe/exec.js';
import { joinHostPort } from '../probe/net-errors.js';
import type { ProbeOutcome } from '../probe/types.js';
import type { ProbeHandlers, ProbeTarget } from '../prober/prober.js';
import type { Clock } from '../util/clock.js';
import { formatGoDuration } from '../util/duration.js';
import { goQuote } from '../util/go-quote.js';
import type { SimRuntime } from './runtime.js';
import type { PhaseState } from './script.js';

/** Counts what the handlers were asked (the bench reports it). */
export interface ProbeCounter {
  probes: number;
}

/** Go's `htmlEscape` of net/http (the characters it replaces in a redirect's body). */
function htmlEscape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' })[c] ?? c);
}

export function simulatedHandlers(runtime: SimRuntime, clock: Clock, counter: ProbeCounter = { probes: 0 }): ProbeHandlers {
  /** Resolves `outcome` after `ms` on the clock (at once when 0). */
  const later = (ms: number, outcome: ProbeOutcome): Promise<ProbeOutcome> =>
    ms <= 0 ? Promise.resolve(outcome) : new Promise((resolve) => clock.setTimeout(() => resolve(outcome), ms));
  const stateOf = (target: ProbeTarget | undefined): PhaseState | undefined => {
    counter.probes++;
    return target === undefined ? undefined : runtime.stateOf(target.containerID, target.probeType);
  };
  /** A healthy answer after the state's delay, or the timeout's outcome when it comes too late. */
  const answer = (state: PhaseState, timeoutMs: number, ok: ProbeOutcome, timedOut: ProbeOutcome): Promise<ProbeOutcome> => {
    const delay = state.kind === 'slow' ? state.delayMs : state.kind === 'hang' ? Infinity : 0;
    return delay < timeoutMs ? later(delay, ok) : later(timeoutMs, timedOut);
  };
  /** `Get "URL"`, as Go's client words a failed request. */
  const getOf = (url: string): string => `Get ${goQuote(url)}`;
  /**
   * The refused connection's message for a URL, kept per URL: every probe of a down
   * container asks for it, and the URLs are few (one per probe spec and pod address).
   */
  const refused = new Map<string, string>();
  const refusedOf = (url: string): string => {
    let text = refused.get(url);
    if (text === undefined) {
      const parsed = new URL(url);
      const port = parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
      text = `${getOf(url)}: dial tcp ${joinHostPort(parsed.hostname, port)}: connect: connection refused`;
      if (refused.size >= 1024) refused.clear();
      refused.set(url, text);
    }
    return text;
  };
  return {
    exec: (_runner, containerID, command, timeoutMs, _seen, target) => {
      counter.probes++;
      return probeExec(
        { runInContainer: (id, cmd, ms) => runtime.execAs(id, cmd, ms, target?.probeType) },
        containerID,
        command,
        timeoutMs,
      );
    },
    http: (request, timeoutMs, _options, _seen, target) => {
      const state = stateOf(target);
      if (state === undefined || state.kind === 'down' || state.kind === 'exit') {
        return Promise.resolve({ result: 'failure', output: refusedOf(request.url) });
      }
      if (state.kind === 'fail') return Promise.resolve({ result: 'failure', output: `HTTP probe failed with statuscode: ${state.code ?? 500}` });
      // A 302 to another host, not followed: a warning that counts as success, with the body
      // Go's http.Redirect writes (what agnhost's /redirect answers in the node e2e E13).
      if (state.kind === 'redirect') {
        return Promise.resolve({ result: 'warning', output: `Probe terminated redirects, Response body: <a href="${htmlEscape(state.location)}">Found</a>.\n\n` });
      }
      return answer(state, timeoutMs, { result: 'success', output: 'ok' }, {
        result: 'failure',
        output: `${getOf(request.url)}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
      });
    },
    tcp: (host, port, _timeoutMs, _seen, target) => {
      const state = stateOf(target);
      if (state === undefined || state.kind === 'down' || state.kind === 'exit') {
        return Promise.resolve({ result: 'failure', output: `dial tcp ${joinHostPort(host, port)}: connect: connection refused` });
      }
      return Promise.resolve({ result: 'success', output: '' });
    },
    grpc: (host, port, _service, timeoutMs, _seen, target) => {
      const state = stateOf(target);
      const addr = JSON.stringify(joinHostPort(host, port));
      const timeoutText = formatGoDuration(timeoutMs);
      if (state === undefined || state.kind === 'down' || state.kind === 'exit') {
        // The kubelet's blocking dial retries a refused connection until its deadline.
        return later(timeoutMs, { result: 'failure', output: `timeout: failed to connect service ${addr} within ${timeoutText}: context deadline exceeded` });
      }
      if (state.kind === 'fail') return Promise.resolve({ result: 'failure', output: 'service unhealthy (responded with "NOT_SERVING")' });
      return answer(state, timeoutMs, { result: 'success', output: 'service healthy' }, {
        result: 'failure',
        output: `timeout: health rpc did not complete within ${timeoutText}`,
      });
    },
  };
}
