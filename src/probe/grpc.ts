/**
 * The kubelet's gRPC probe (`pkg/probe/grpc`): one `grpc.health.v1.Health/Check` call over a
 * fresh plaintext channel. Every problem is a probe *failure* with the kubelet's wording,
 * never an error, to mimic the grpc_health_probe tool the feature replaced.
 */
import { isIP, type Socket } from 'node:net';
import { Client, Metadata, credentials, status as GrpcStatus } from '@grpc/grpc-js';
import type { ChannelCredentials, ChannelOptions, ServiceError } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { realClock } from '../util/clock.js';
import { formatGoDuration } from '../util/duration.js';
import { PROBE_USER_AGENT } from './constants.js';
import { joinHostPort } from './net-errors.js';
import type { HandlerObservation, ProbeOutcome } from './types.js';
import { goStatusErrorText } from '../util/go-status.js';

export { goStatusErrorText };


const CHANNEL_OPTIONS: ChannelOptions = {
  'grpc.primary_user_agent': PROBE_USER_AGENT,
  // A private subchannel, so closing the channel really closes the probe's connection
  // (the shared pool would keep it alive for other channels).
  'grpc.use_local_subchannel_pool': 1,
  // The kubelet dials directly with its own dialer: no proxy from the environment.
  'grpc.enable_http_proxy': 0,
  // No DNS TXT lookups for service config: the kubelet's probe has none.
  'grpc.service_config_disable_resolution': 1,
};

type SecureConnector = ReturnType<ChannelCredentials['_createSecureConnector']>;

/** The probe's TCP sockets, and whether the probe is over (then no socket may live). */
interface SocketTracker {
  readonly sockets: Set<Socket>;
  done: boolean;
}

/**
 * Plaintext credentials that remember every TCP socket the channel opens, so the probe can
 * close them with a reset: like the kubelet's SO_LINGER dialer, no TIME_WAIT socket is left
 * on the probing side (kubernetes#89898). grpc-js offers no dialer hook; its credentials'
 * connector is the one place that sees the raw socket.
 *
 * A socket that reaches it after the probe is over is reset at once: a closed channel whose
 * server broke the connection (a non-gRPC server) still reconnects when its back-off timer
 * fires, and would otherwise talk HTTP/2 to the target once more after the probe ended.
 */
function socketTrackingInsecureCredentials(tracker: SocketTracker): ChannelCredentials {
  const base = credentials.createInsecure();
  const tracking = Object.create(base) as ChannelCredentials;
  tracking._createSecureConnector = (...args): SecureConnector => {
    const connector = base._createSecureConnector(...args);
    return {
      connect: (socket) => {
        if (tracker.done) {
          socket.resetAndDestroy();
          return Promise.reject(new Error('the probe is over'));
        }
        tracker.sockets.add(socket);
        return connector.connect(socket);
      },
      waitForReady: () => connector.waitForReady(),
      getCallCredentials: () => connector.getCallCredentials(),
      destroy: () => connector.destroy(),
    };
  };
  return tracking;
}

/**
 * The channel's target. An IP address is named with grpc-js's `ipv4:`/`ipv6:` scheme: the
 * default `dns:` resolver builds a c-ares resolver per channel even for a literal address
 * (≈ 10 % of a probe's CPU in profiles), while the IP resolver only parses it. The
 * `:authority` grpc-js sends is the same `host:port` either way.
 */
function channelTarget(host: string, port: number): string {
  const family = isIP(host);
  if (family === 4) return `ipv4:${joinHostPort(host, port)}`;
  if (family === 6) return `ipv6:${joinHostPort(host, port)}`;
  return joinHostPort(host === '' ? 'localhost' : host, port);
}

/** Go's `%q` for the plain ASCII strings printed here (addresses, enum names). */
function quote(text: string): string {
  return JSON.stringify(text);
}

function failure(output: string): ProbeOutcome {
  return { result: 'failure', output };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isServiceError(err: unknown): err is ServiceError {
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === 'number';
}

function waitForReady(client: Client, deadline: number): Promise<Error | undefined> {
  return new Promise((resolve) => client.waitForReady(deadline, (err) => resolve(err ?? undefined)));
}

function check(client: Client, service: string, deadline: number): Promise<{ response?: object; err?: unknown }> {
  const method = healthService['Check'];
  if (!method) return Promise.resolve({ err: new Error('grpc-health-check has no Check method') });
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      { service },
      new Metadata(),
      { deadline },
      (err, response) => resolve(err ? { err } : { response: response ?? {} }),
    );
  });
}

/**
 * grpc-js's wording of the errors its own client raises, in grpc-go's (what the kubelet
 * prints); details that came from the server pass unchanged.
 */
function goDetails(details: string): string {
  const tooLarge = /^Received message larger than max \((\d+) vs (\d+)\)$/.exec(details);
  if (tooLarge) return `grpc: received message larger than max (${tooLarge[1]} vs. ${tooLarge[2]})`;
  return details;
}

/** Maps the Check call's result to the kubelet's outcome and wording. */
function evaluate(
  result: { response?: object; err?: unknown },
  timeoutText: string,
  seen: HandlerObservation | undefined,
): ProbeOutcome {
  const { err } = result;
  if (err !== undefined) {
    if (!isServiceError(err)) return failure(`error: health rpc probe failed: ${errorMessage(err)}`);
    if (seen) seen.grpcCode = err.code;
    if (err.code === GrpcStatus.UNIMPLEMENTED) {
      return failure(
        `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${err.details}`,
      );
    }
    if (err.code === GrpcStatus.DEADLINE_EXCEEDED) {
      return failure(`timeout: health rpc did not complete within ${timeoutText}`);
    }
    return failure(`error: health rpc probe failed: ${goStatusErrorText(err.code, goDetails(err.details))}`);
  }
  // proto-loader decodes enums as their names, and a missing field as UNKNOWN (defaults: true).
  const servingStatus = String((result.response as { status?: unknown } | undefined)?.status ?? 'UNKNOWN');
  if (seen) seen.servingStatus = servingStatus;
  if (servingStatus !== 'SERVING') {
    return failure(`service unhealthy (responded with ${quote(servingStatus)})`);
  }
  return { result: 'success', output: 'service healthy' };
}

/**
 * Asks `host:port` for the health of `service` ('' = the whole server) over plaintext gRPC.
 *
 * One deadline of `timeoutMs` covers connecting and the call, as the kubelet's blocking dial
 * does: a refused connection is retried until the deadline, so nothing listening fails only
 * after the full timeout. `host` '' dials the local host but prints as `":port"`, like Go.
 * Never rejects; the channel and its sockets are gone when the promise settles.
 */
export async function probeGrpc(
  host: string,
  port: number,
  service: string,
  timeoutMs: number,
  seen?: HandlerObservation,
): Promise<ProbeOutcome> {
  const addr = joinHostPort(host, port);
  const timeoutText = formatGoDuration(timeoutMs);
  const deadline = realClock.now() + timeoutMs;
  const tracker: SocketTracker = { sockets: new Set<Socket>(), done: false };

  let client: Client;
  try {
    client = new Client(
      channelTarget(host, port),
      socketTrackingInsecureCredentials(tracker),
      CHANNEL_OPTIONS,
    );
  } catch (err) {
    return failure(`error: failed to connect service at ${quote(addr)}: ${errorMessage(err)}`);
  }

  try {
    const connectErr = await waitForReady(client, deadline);
    if (connectErr) {
      if (realClock.now() >= deadline || /deadline/i.test(connectErr.message)) {
        return failure(
          `timeout: failed to connect service ${quote(addr)} within ${timeoutText}: context deadline exceeded`,
        );
      }
      return failure(`error: failed to connect service at ${quote(addr)}: ${connectErr.message}`);
    }
    return evaluate(await check(client, service, deadline), timeoutText, seen);
  } finally {
    tracker.done = true;
    for (const socket of tracker.sockets) socket.resetAndDestroy();
    client.close();
  }
}
