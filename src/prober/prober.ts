import { DEFAULT_PROBE_TIMEOUT_SECONDS } from '../api/defaults.js';
import { formatPod } from '../api/format.js';
import type { Container, HTTPGetAction, Pod, PodStatus, Probe } from '../api/types.js';
import { expandCommandOnlyStatic, probeExec } from '../probe/exec.js';
import { probeHttp, type HttpProbeOptions } from '../probe/http.js';
import { newHttpProbeRequest, type HttpProbeRequest } from '../probe/http-request.js';
import { probeGrpc } from '../probe/grpc.js';
import { resolveContainerPort } from '../probe/port.js';
import { probeTcp } from '../probe/tcp.js';
import { UNSEEN, type CommandRunner, type HandlerObservation, type ProbeClose, type ProbeOutcome } from '../probe/types.js';
import { realClock, type Clock } from '../util/clock.js';
import { probeTypeName, type EventRecorder, type ProbeType, type Result } from './types.js';

/** Attempts per probe; only an attempt that *errored* leads to another one (upstream `maxProbeRetries`). */
export const MAX_PROBE_RETRIES = 3;

/**
 * What is being probed, handed to every handler as its last argument. The real handlers
 * ignore it (the request, address or command says everything the network needs); a
 * replacement that answers for containers that do not exist — the simulator — needs to
 * know whose probe of which kind it is answering.
 */
export interface ProbeTarget {
  probeType: ProbeType;
  pod: Pod;
  container: Container;
  containerID: string;
}

/**
 * The four handlers the prober dispatches to. Replaceable as a seam: upstream's prober
 * tests swap in fake handlers the same way, and `probelet simulate` answers from a
 * behaviour script on virtual time; `probelet run` and `probe` never set them.
 */
export interface ProbeHandlers {
  exec(
    runner: CommandRunner,
    containerID: string,
    command: string[],
    timeoutMs: number,
    seen?: HandlerObservation,
    target?: ProbeTarget,
  ): Promise<ProbeOutcome>;
  http(request: HttpProbeRequest, timeoutMs: number, options?: HttpProbeOptions, seen?: HandlerObservation, target?: ProbeTarget): Promise<ProbeOutcome>;
  tcp(host: string, port: number, timeoutMs: number, seen?: HandlerObservation, target?: ProbeTarget): Promise<ProbeOutcome>;
  grpc(host: string, port: number, service: string, timeoutMs: number, seen?: HandlerObservation, target?: ProbeTarget): Promise<ProbeOutcome>;
}

export interface ProberOptions {
  runner: CommandRunner;
  recorder?: EventRecorder;
  /** Kept for the callers' convenience; the real handlers' timeouts are real-time deadlines regardless. */
  clock?: Clock;
  handlers?: Partial<ProbeHandlers>;
  /**
   * A replacement `http` handler that only reads the request (the simulator's) says so
   * here, and gets the built request reused as the real handler does (frozen, while every
   * input is unchanged) instead of a new one at every probe.
   */
  httpHandlerReadsOnly?: boolean;
  /**
   * How the real network handlers close their connections: `'fin'` (default), the kubelet's
   * orderly close; `'reset'` leaves no TIME_WAIT on the probing side but shows the probed
   * server a reset — for probing one ip:port hundreds of times a second. See ProbeClose.
   */
  probeClose?: ProbeClose;
}

export interface ProbeVerdict {
  result: Result;
  error?: Error;
}

export interface ProbeEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** A verdict with what the last handler attempt returned and the event recorded for it, if any. */
export interface ProbeDetails extends ProbeVerdict {
  outcome: ProbeOutcome;
  event?: ProbeEvent;
}

/**
 * Filled in by `probe` when the caller hands one over (the flight recorder does, with a
 * ring slot it reuses): how many handler attempts the verdict took, the last attempt's
 * outcome and what its handler saw. Nothing is allocated for it when absent.
 */
export interface ProbeNote {
  attempts: number;
  outcome: ProbeOutcome | undefined;
  readonly seen: HandlerObservation;
}

/** The real handlers, closing their connections as `close` says (they ignore the trailing target). */
function realHandlers(close: ProbeClose): ProbeHandlers {
  const net = Object.freeze({ close });
  return {
    exec: probeExec,
    http: (request, timeoutMs, options, seen) => probeHttp(request, timeoutMs, options ? { ...net, ...options } : net, seen),
    tcp: (host, port, timeoutMs, seen) => probeTcp(host, port, timeoutMs, seen, net),
    grpc: (host, port, service, timeoutMs, seen) => probeGrpc(host, port, service, timeoutMs, seen, net),
  };
}

/** One set per way of closing, shared by every prober. */
const REAL_HANDLERS: Readonly<Record<ProbeClose, ProbeHandlers>> = { fin: realHandlers('fin'), reset: realHandlers('reset') };

/**
 * Runs one probe for a worker: picks the handler, retries errored attempts, maps the
 * handler's outcome to a cached result and records the kubelet's events, word for word.
 */
export class Prober {
  readonly runner: CommandRunner;
  readonly recorder: EventRecorder | undefined;
  readonly clock: Clock;
  private readonly handlers: ProbeHandlers;
  /** Built HTTP requests by `httpGet` object; see {@link Prober.httpRequestFor}. */
  private readonly httpRequests = new WeakMap<HTTPGetAction, BuiltHttpRequest>();
  /** Whether the http handler may get a reused request (the real one, or a replacement that says it only reads). */
  private readonly reuseHttpRequests: boolean;

  constructor(options: ProberOptions) {
    this.runner = options.runner;
    this.recorder = options.recorder;
    this.clock = options.clock ?? realClock;
    const real = Object.hasOwn(REAL_HANDLERS, options.probeClose ?? 'fin') ? REAL_HANDLERS[options.probeClose ?? 'fin'] : undefined;
    // A library caller in plain JavaScript can pass anything: say so now, not at every probe.
    if (real === undefined) throw new TypeError(`probeClose must be 'fin' or 'reset', got ${JSON.stringify(options.probeClose)}`);
    this.handlers = { ...real, ...options.handlers };
    this.reuseHttpRequests = this.handlers.http === real.http || options.httpHandlerReadsOnly === true;
  }

  /**
   * Probes `container` with its probe of kind `probeType`. `error` is set when the probe
   * errored on every attempt: the worker then discards the verdict (it never counts).
   */
  async probe(
    probeType: ProbeType,
    pod: Pod,
    status: PodStatus,
    container: Container,
    containerID: string,
    note?: ProbeNote,
  ): Promise<ProbeVerdict> {
    const { result, error } = await this.probeWithDetails(probeType, pod, status, container, containerID, note);
    return error ? { result, error } : { result };
  }

  /** `probe`, also telling what the last attempt returned and which event was recorded (for `probelet probe`). */
  async probeWithDetails(
    probeType: ProbeType,
    pod: Pod,
    status: PodStatus,
    container: Container,
    containerID: string,
    note?: ProbeNote,
  ): Promise<ProbeDetails> {
    const kind = probeTypeName(probeType);
    const spec = probeSpecOf(probeType, container);
    if (spec === null) {
      const error = new Error(`unknown probe type: "${kind}"`);
      return { result: 'failure', error, outcome: { result: 'unknown', output: '', error } };
    }
    if (spec === undefined) return { result: 'success', outcome: { result: 'success', output: '' } };

    let outcome: ProbeOutcome = { result: 'unknown', output: '' };
    let attempt = 0;
    while (attempt < MAX_PROBE_RETRIES) {
      attempt++;
      // What an errored try saw is not what the next one sees: the record is of the try that counted.
      if (attempt > 1 && note) Object.assign(note.seen, UNSEEN);
      outcome = await this.runProbe(probeType, spec, pod, status, container, containerID, note?.seen);
      if (!outcome.error) break;
    }
    if (note) {
      note.attempts = attempt;
      note.outcome = outcome;
    }

    const ref = { pod, containerName: container.name };
    const record = (type: 'Normal' | 'Warning', reason: string, message: string): ProbeEvent => {
      this.recorder?.event(ref, type, reason, message);
      return { type, reason, message };
    };
    if (outcome.error) {
      const message = `${kind} probe errored and resulted in ${outcome.result} state: ${outcome.error.message}`;
      return { result: 'failure', error: outcome.error, outcome, event: record('Warning', 'Unhealthy', message) };
    }
    switch (outcome.result) {
      case 'success':
        return { result: 'success', outcome };
      case 'warning':
        return {
          result: 'success',
          outcome,
          event: record('Warning', 'ProbeWarning', `${kind} probe warning: ${outcome.output}`),
        };
      case 'failure':
        return { result: 'failure', outcome, event: record('Warning', 'Unhealthy', `${kind} probe failed: ${outcome.output}`) };
      default:
        // "unknown without error" (and anything unsupported) counts as a failure, silently.
        return { result: 'failure', outcome };
    }
  }

  /** One attempt, no retries and no events: builds the request and calls the handler. */
  async runProbe(
    probeType: ProbeType,
    probeSpec: Probe,
    pod: Pod,
    status: PodStatus,
    container: Container,
    containerID: string,
    seen?: HandlerObservation,
  ): Promise<ProbeOutcome> {
    // Defaulting normally happened in the apiserver; a library caller may have skipped it.
    const timeoutMs = (probeSpec.timeoutSeconds || DEFAULT_PROBE_TIMEOUT_SECONDS) * 1000;
    const podIP = status.podIP ?? '';
    const target: ProbeTarget = { probeType, pod, container, containerID };
    try {
      if (probeSpec.exec) {
        const command = expandCommandOnlyStatic(probeSpec.exec.command ?? [], container.env);
        return await this.handlers.exec(this.runner, containerID, command, timeoutMs, seen, target);
      }
      if (probeSpec.httpGet) {
        return await this.handlers.http(this.httpRequestFor(probeSpec.httpGet, container, podIP), timeoutMs, undefined, seen, target);
      }
      if (probeSpec.tcpSocket) {
        const port = resolveContainerPort(probeSpec.tcpSocket.port, container);
        return await this.handlers.tcp(probeSpec.tcpSocket.host || podIP, port, timeoutMs, seen, target);
      }
      if (probeSpec.grpc) {
        return await this.handlers.grpc(podIP, probeSpec.grpc.port, probeSpec.grpc.service ?? '', timeoutMs, seen, target);
      }
    } catch (err) {
      // Request building (e.g. an unresolvable named port) or a handler bug: the probe
      // could not be attempted, which is "errored", never "failed".
      return { result: 'unknown', output: '', error: err instanceof Error ? err : new Error(String(err)) };
    }
    return {
      result: 'unknown',
      output: '',
      error: new Error(`missing probe handler for ${formatPod(pod)}:${container.name}`),
    };
  }

  /**
   * `newHttpProbeRequest(action, container, podIP)`, built once per `httpGet` object and
   * reused while its inputs are unchanged. A worker probes the same spec at the same pod
   * IP every period, and building the request (URL formatting, Go-style parsing and
   * escaping, header canonicalisation) — and then parsing it again in the handler, which
   * keeps its parsed form per request object — was most of the prober's own cost per
   * HTTP probe. Every input is compared at each probe (cheap: a few strings), so a spec
   * changed in place or a new pod IP builds a new request exactly as before; the port is
   * resolved every time (named ports follow `container.ports`, and errors are thrown as
   * before). Only with the default handler or one that says it only reads
   * (`httpHandlerReadsOnly`): any other replacement gets a new request at every probe, as
   * it always did, since it might keep or change it.
   */
  private httpRequestFor(action: HTTPGetAction, container: Container, podIP: string): HttpProbeRequest {
    if (!this.reuseHttpRequests) return newHttpProbeRequest(action, container, podIP);
    // The same steps, in the same order, as newHttpProbeRequest (so the same errors).
    const scheme = (action.scheme ?? '').toLowerCase() || 'http';
    const host = action.host || podIP;
    const port = resolveContainerPort(action.port, container);
    const cached = this.httpRequests.get(action);
    if (
      cached !== undefined &&
      cached.scheme === scheme &&
      cached.host === host &&
      cached.port === port &&
      cached.path === action.path &&
      sameFlatHeaders(cached.headers, action)
    ) {
      return cached.request;
    }
    const built = newHttpProbeRequest(action, container, podIP);
    // Frozen: the same object serves every later probe, so nothing may change it.
    for (const header of built.headers) Object.freeze(header);
    const request = Object.freeze({ url: built.url, headers: Object.freeze(built.headers) }) as HttpProbeRequest;
    this.httpRequests.set(action, {
      scheme,
      host,
      port,
      path: action.path,
      headers: flatHeaders(action),
      request,
    });
    return request;
  }
}

/** An HTTP request and every input it was built from (see {@link Prober.httpRequestFor}). */
interface BuiltHttpRequest {
  /** Lower-cased, `http` by default. */
  readonly scheme: string;
  /** `httpGet.host`, or the pod IP when that is empty. */
  readonly host: string;
  /** The resolved port. */
  readonly port: number;
  readonly path: string | undefined;
  /** `httpGet.httpHeaders` as name, value, name, value… */
  readonly headers: readonly string[];
  readonly request: HttpProbeRequest;
}

function flatHeaders(action: HTTPGetAction): string[] {
  const flat: string[] = [];
  for (const h of action.httpHeaders ?? []) flat.push(h.name, h.value);
  return flat;
}

function sameFlatHeaders(cached: readonly string[], action: HTTPGetAction): boolean {
  const headers = action.httpHeaders ?? [];
  if (cached.length !== 2 * headers.length) return false;
  for (let i = 0; i < headers.length; i++) {
    const h = headers[i];
    if (h === undefined || cached[2 * i] !== h.name || cached[2 * i + 1] !== h.value) return false;
  }
  return true;
}

/** The container's probe of that kind; `null` for a kind that does not exist. */
function probeSpecOf(probeType: ProbeType, container: Container): Probe | undefined | null {
  switch (probeType) {
    case 'liveness':
      return container.livenessProbe;
    case 'readiness':
      return container.readinessProbe;
    case 'startup':
      return container.startupProbe;
    default:
      return null;
  }
}
