/**
 * Container lifecycle hooks (`postStart`, `preStop`), run the way upstream's handler runner
 * runs them (pkg/kubelet/lifecycle/handlers.go `Run`):
 *
 * - `exec`: an `ExecSync` in the container with **no timeout** (`RunInContainer(…, 0)`); a
 *   non-zero exit is an error (the CRI client's `command '…' exited with N: …`).
 * - `httpGet`: one GET with `User-Agent: kube-lifecycle/<major>.<minor>`, to `host` or the
 *   pod's IP, no timeout and no certificate check (`insecureContainerLifecycleHTTPClient`),
 *   same-host redirects only, with Go's default transport's headers (keep-alive, gzip). An
 *   HTTPS hook answered in plain HTTP is sent again over HTTP without `Authorization`, and
 *   when that works a `LifecycleHTTPFallback` Warning goes on the pod (`runHTTPHandler`). With
 *   no `host`, the pod's IP; a pod without one fails the hook (no networking container).
 *   Only a request that gets **no response** fails: any status code, 500 included, is
 *   success — the hook runner never looks at it.
 * - `sleep`: waits `seconds` on the kubelet's clock.
 * - `tcpSocket` (kept in the API for old objects, never run): an error.
 *
 * When each hook runs and what its failure does is the kubelet's business (container-actions.ts:
 * `startContainer`'s step 4, `killContainer`'s `executePreStopHook`). Where upstream cancels a
 * hook with the pod worker's context (the pod is being deleted), `signal` ends the wait here;
 * an exec already in the container ends with the container.
 */
import { formatPod } from '../api/format.js';
import type { Container, LifecycleHandler, Pod } from '../api/types.js';
import { probeHttp } from '../probe/http.js';
import { newHttpProbeRequest, type HttpProbeRequest } from '../probe/http-request.js';
import { LIFECYCLE_USER_AGENT } from '../probe/constants.js';
import type { HandlerObservation } from '../probe/types.js';
import type { ExecResult } from '../runtime/types.js';
import type { Clock } from '../util/clock.js';
import { goQuote } from '../util/go-quote.js';

/** Whose hook runs, and where. */
export interface HookTarget {
  pod: Pod;
  container: Container;
  containerID: string;
  /** The pod's IP, for an `httpGet` hook without `host`. */
  podIP: string;
  /** Aborted when the kubelet stops waiting for the hook (the pod is being deleted, the kubelet closes). */
  signal: AbortSignal;
}

/** `undefined`: the hook succeeded; else upstream's message (logged and, for postStart, shown in the status). */
export type HookError = string | undefined;

/** Runs one hook. A seam: `probelet simulate` answers without processes or sockets. */
export interface HandlerRunner {
  run(target: HookTarget, handler: LifecycleHandler): Promise<HookError>;
}

export interface HandlerRunnerDeps {
  /** The runtime's `ExecSync`; a timeout of 0 means none. */
  execSync(containerID: string, cmd: string[], timeoutMs: number): Promise<ExecResult>;
  clock: Clock;
  /** Records an event on the pod (the HTTPS → HTTP fallback's); none by default. */
  event?(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

/** Go's `isHTTPResponseError`: what an HTTPS request to a plain HTTP server ends with. */
const HTTP_RESPONSE_TO_HTTPS = 'server gave HTTP response to HTTPS client';

/** The kubelet's handler runner over a runtime's exec, the real network and a clock. */
export function createHandlerRunner(deps: HandlerRunnerDeps): HandlerRunner {
  return {
    async run(target, handler) {
      const where = `for Container ${goQuote(target.container.name)} in Pod ${goQuote(formatPod(target.pod))}`;
      if (handler.exec) {
        const command = handler.exec.command ?? [];
        const outcome = await untilAborted(runExec(deps, target.containerID, command), target.signal);
        if (outcome === undefined) return `Exec lifecycle hook ([${command.join(' ')}]) ${where} failed - error: context canceled, message: ""`;
        if (outcome.error === undefined) return undefined;
        return `Exec lifecycle hook ([${command.join(' ')}]) ${where} failed - error: ${outcome.error}, message: ${goQuote(outcome.output)}`;
      }
      if (handler.httpGet) {
        const error = await runHttp(deps, target, handler);
        return error === undefined ? undefined : `HTTP lifecycle hook (${handler.httpGet.path ?? ''}) ${where} failed - error: ${error}`;
      }
      if (handler.sleep) {
        const seconds = handler.sleep.seconds;
        const slept = await sleep(deps.clock, seconds * 1000, target.signal);
        return slept ? undefined : `Sleep lifecycle hook (${seconds}) ${where} failed - error: container terminated before sleep hook finished`;
      }
      return `Cannot run handler: invalid handler: ${JSON.stringify(handler)}`;
    },
  };
}

/** `RunInContainer`: output is stdout then stderr; a non-zero exit is the CRI client's error. */
async function runExec(deps: HandlerRunnerDeps, containerID: string, command: string[]): Promise<{ error?: string; output: string }> {
  try {
    const res = await deps.execSync(containerID, command, 0);
    if (res.exitCode === 0) return { output: res.output };
    return { error: `command '${command.join(' ')}' exited with ${res.exitCode}: ${res.output}`, output: res.output };
  } catch (err) {
    const output = typeof (err as { output?: unknown }).output === 'string' ? (err as { output: string }).output : '';
    return { error: err instanceof Error ? err.message : String(err), output };
  }
}

/** The GET; `undefined` once any response came back, else the client's error (Go's words). */
async function runHttp(deps: HandlerRunnerDeps, target: HookTarget, handler: LifecycleHandler): Promise<string | undefined> {
  const action = handler.httpGet;
  if (!action) return undefined;
  if (!action.host && !target.podIP) return 'failed to find networking container: the pod has no IP';
  let request: HttpProbeRequest;
  try {
    request = { ...newHttpProbeRequest(action, target.container, target.podIP, LIFECYCLE_USER_AGENT), keepAlive: true };
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  const first = await getOnce(request, target.signal);
  if (first === undefined || !first.includes(HTTP_RESPONSE_TO_HTTPS) || !request.url.startsWith('https:')) return first;
  const plain: HttpProbeRequest = { ...request, url: `http:${request.url.slice('https:'.length)}`, headers: request.headers.filter(([name]) => name !== 'Authorization') };
  if ((await getOnce(plain, target.signal)) !== undefined) return first;
  deps.event?.(target.pod, 'Warning', 'LifecycleHTTPFallback', `request to HTTPS lifecycle hook ${urlHost(plain.url)} got HTTP response, retry with HTTP succeeded`);
  return undefined;
}

/** One GET: `undefined` once any response came back, else the client's error (Go's words). */
async function getOnce(request: HttpProbeRequest, signal: AbortSignal): Promise<string | undefined> {
  const seen: HandlerObservation = {};
  const outcome = await probeHttp(request, 0, { signal }, seen);
  if (seen.statusCode !== undefined) return undefined;
  if (outcome.error) return outcome.error.message;
  return outcome.output;
}

/** `URL.Host` as Go keeps it: `host:port` as written (the port is always written here). */
function urlHost(url: string): string {
  const rest = url.slice(url.indexOf('://') + 3);
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  return authority.slice(authority.lastIndexOf('@') + 1);
}

/** Resolves `true` after `ms`, or `false` as soon as `signal` aborts. */
function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      resolve(false);
    };
    const handle = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** `work`'s value, or `undefined` if `signal` aborts first (the work itself goes on). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
