import { DEFAULT_PROBE_TIMEOUT_SECONDS } from '../api/defaults.js';
import { formatPod } from '../api/format.js';
import type { Container, Pod, PodStatus, Probe } from '../api/types.js';
import { expandCommandOnlyStatic, probeExec } from '../probe/exec.js';
import { probeHttp } from '../probe/http.js';
import { newHttpProbeRequest } from '../probe/http-request.js';
import { probeGrpc } from '../probe/grpc.js';
import { resolveContainerPort } from '../probe/port.js';
import { probeTcp } from '../probe/tcp.js';
import type { CommandRunner, ProbeOutcome } from '../probe/types.js';
import { realClock, type Clock } from '../util/clock.js';
import { probeTypeName, type EventRecorder, type ProbeType, type Result } from './types.js';

/** Attempts per probe; only an attempt that *errored* leads to another one (upstream `maxProbeRetries`). */
export const MAX_PROBE_RETRIES = 3;

/**
 * The four handlers the prober dispatches to. Replaceable as a unit-test seam (upstream's
 * prober tests swap in fake handlers the same way); production code never sets them.
 */
export interface ProbeHandlers {
  exec: typeof probeExec;
  http: typeof probeHttp;
  tcp: typeof probeTcp;
  grpc: typeof probeGrpc;
}

export interface ProberOptions {
  runner: CommandRunner;
  recorder?: EventRecorder;
  /** Kept for the callers' convenience; handler timeouts are real-time deadlines regardless. */
  clock?: Clock;
  handlers?: Partial<ProbeHandlers>;
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

const defaultHandlers: ProbeHandlers = { exec: probeExec, http: probeHttp, tcp: probeTcp, grpc: probeGrpc };

/**
 * Runs one probe for a worker: picks the handler, retries errored attempts, maps the
 * handler's outcome to a cached result and records the kubelet's events, word for word.
 */
export class Prober {
  readonly runner: CommandRunner;
  readonly recorder: EventRecorder | undefined;
  readonly clock: Clock;
  private readonly handlers: ProbeHandlers;

  constructor(options: ProberOptions) {
    this.runner = options.runner;
    this.recorder = options.recorder;
    this.clock = options.clock ?? realClock;
    this.handlers = { ...defaultHandlers, ...options.handlers };
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
  ): Promise<ProbeVerdict> {
    const { result, error } = await this.probeWithDetails(probeType, pod, status, container, containerID);
    return error ? { result, error } : { result };
  }

  /** `probe`, also telling what the last attempt returned and which event was recorded (for `probelet probe`). */
  async probeWithDetails(
    probeType: ProbeType,
    pod: Pod,
    status: PodStatus,
    container: Container,
    containerID: string,
  ): Promise<ProbeDetails> {
    const kind = probeTypeName(probeType);
    const spec = probeSpecOf(probeType, container);
    if (spec === null) {
      const error = new Error(`unknown probe type: "${kind}"`);
      return { result: 'failure', error, outcome: { result: 'unknown', output: '', error } };
    }
    if (spec === undefined) return { result: 'success', outcome: { result: 'success', output: '' } };

    let outcome: ProbeOutcome = { result: 'unknown', output: '' };
    for (let attempt = 0; attempt < MAX_PROBE_RETRIES; attempt++) {
      outcome = await this.runProbe(probeType, spec, pod, status, container, containerID);
      if (!outcome.error) break;
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
    _probeType: ProbeType,
    probeSpec: Probe,
    pod: Pod,
    status: PodStatus,
    container: Container,
    containerID: string,
  ): Promise<ProbeOutcome> {
    // Defaulting normally happened in the apiserver; a library caller may have skipped it.
    const timeoutMs = (probeSpec.timeoutSeconds || DEFAULT_PROBE_TIMEOUT_SECONDS) * 1000;
    const podIP = status.podIP ?? '';
    try {
      if (probeSpec.exec) {
        const command = expandCommandOnlyStatic(probeSpec.exec.command ?? [], container.env);
        return await this.handlers.exec(this.runner, containerID, command, timeoutMs);
      }
      if (probeSpec.httpGet) {
        const request = newHttpProbeRequest(probeSpec.httpGet, container, podIP);
        return await this.handlers.http(request, timeoutMs);
      }
      if (probeSpec.tcpSocket) {
        const port = resolveContainerPort(probeSpec.tcpSocket.port, container);
        return await this.handlers.tcp(probeSpec.tcpSocket.host || podIP, port, timeoutMs);
      }
      if (probeSpec.grpc) {
        return await this.handlers.grpc(podIP, probeSpec.grpc.port, probeSpec.grpc.service ?? '', timeoutMs);
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
