/**
 * How probes end their connections, seen from the probed application: the kubelet closes
 * with an orderly FIN (`probe.ProbeDialer()` lingers 1 s, not 0, so as not to reset), so a
 * plain Node `net` server that has no `error` handler on its sockets lives through any
 * number of probes. A reset (`probeClose: 'reset'`, the opt-in) gives that server an
 * uncaught ECONNRESET, which kills it: the control that shows these tests can fail.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { Container, Pod, Probe } from '../../src/api/types.js';
import { LocalCommandRunner } from '../../src/probe/local-runner.js';
import type { ProbeClose } from '../../src/probe/types.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import { ProbeManager } from '../../src/prober/manager.js';
import { Prober } from '../../src/prober/prober.js';
import { ResultsManager } from '../../src/prober/results.js';
import { FakeClock } from '../../src/util/clock.js';
import { runCli } from '../cli/helpers.js';
import { FakeRuntime } from '../helpers/fake-runtime.js';

/**
 * An application as many are written: no `error` listener on its sockets. It answers any
 * HTTP/1 request with 200, says nothing to anything else (a gRPC client's preface), and
 * prints a line when each connection has closed on its side.
 */
const PLAIN_SERVER = `
const net = require('node:net');
const server = net.createServer((socket) => {
  socket.on('data', (data) => {
    if (data.toString('latin1').startsWith('GET ')) socket.write('HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok');
  });
  socket.on('close', () => process.stdout.write('closed\\n'));
});
server.listen(0, '127.0.0.1', () => process.stdout.write('port ' + server.address().port + '\\n'));
`;

interface PlainServer {
  child: ChildProcessWithoutNullStreams;
  port: number;
  /** Resolves when `n` connections in all have closed on the server's side. */
  closed(n: number): Promise<void>;
  stderr(): string;
}

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  }
});

async function startPlainServer(): Promise<PlainServer> {
  const child = spawn(process.execPath, ['-e', PLAIN_SERVER]);
  children.push(child);
  let out = '';
  let err = '';
  let closedCount = 0;
  const waiters: Array<() => void> = [];
  child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    out += s;
    closedCount = (out.match(/^closed$/gm) ?? []).length;
    for (const w of waiters.splice(0)) w();
  });
  // A dead server closes nothing more: wake the waiters so the test sees why.
  child.once('exit', () => {
    for (const w of waiters.splice(0)) w();
  });
  while (!/^port \d+$/m.test(out)) {
    await new Promise<void>((resolve) => waiters.push(resolve));
    if (child.exitCode !== null) throw new Error(`server did not start: ${err}`);
  }
  const port = Number(/^port (\d+)$/m.exec(out)?.[1]);
  return {
    child,
    port,
    async closed(n) {
      while (closedCount < n && child.exitCode === null) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    stderr: () => err,
  };
}

function podProbing(port: number): { pod: Pod; container: Container; probes: Record<string, Probe> } {
  const probes: Record<string, Probe> = {
    tcp: { tcpSocket: { port }, timeoutSeconds: 1 },
    http: { httpGet: { port, path: '/healthz' }, timeoutSeconds: 1 },
    // The server never answers gRPC: the probe fails at its 1 s deadline and closes.
    grpc: { grpc: { port }, timeoutSeconds: 1 },
  };
  const container: Container = { name: 'app' };
  const pod: Pod = { metadata: { name: 'plain', namespace: 'default', uid: 'plain-uid' }, spec: { containers: [container] } };
  return { pod, container, probes };
}

async function probeEach(prober: Pick<Prober, 'probe'>, port: number, kinds: readonly string[], times: number): Promise<string[]> {
  const { pod, container, probes } = podProbing(port);
  const verdicts: string[] = [];
  for (const kind of kinds) {
    for (let i = 0; i < times; i++) {
      const probed: Container = { ...container, readinessProbe: probes[kind] };
      const { result } = await prober.probe('readiness', pod, { podIP: '127.0.0.1' }, probed, 'test://plain');
      verdicts.push(`${kind} ${result}`);
    }
  }
  return verdicts;
}

describe('closing probe connections', () => {
  it('by default, a Node net server without an error handler survives every probe type (tcp, http, grpc)', async () => {
    const server = await startPlainServer();
    const verdicts = await probeEach(new Prober({ runner: new LocalCommandRunner() }), server.port, ['tcp', 'http', 'grpc'], 3);
    expect(verdicts).toEqual([
      'tcp success',
      'tcp success',
      'tcp success',
      'http success',
      'http success',
      'http success',
      'grpc failure',
      'grpc failure',
      'grpc failure',
    ]);
    await server.closed(9);
    expect(server.stderr()).toBe('');
    expect(server.child.exitCode).toBeNull();
  });

  it.each<[string, ProbeClose]>([
    ['tcp', 'reset'],
    ['http', 'reset'],
  ])("the opt-in (a %s probe, probeClose: '%s') resets: the same server dies of ECONNRESET", async (kind, probeClose) => {
    const server = await startPlainServer();
    await probeEach(new Prober({ runner: new LocalCommandRunner(), probeClose }), server.port, [kind], 1);
    if (server.child.exitCode === null) await once(server.child, 'exit');
    expect(server.child.exitCode).not.toBe(0);
    expect(server.stderr()).toContain('ECONNRESET');
  });

  it('a probeClose that is neither fin nor reset is refused at construction', () => {
    const bad = { runner: new LocalCommandRunner(), probeClose: 'rst' } as unknown as ConstructorParameters<typeof Prober>[0];
    expect(() => new Prober(bad)).toThrow("probeClose must be 'fin' or 'reset', got \"rst\"");
  });

  it("ProbeManager's probeClose reaches its prober: 'fin' by default, 'reset' when asked", async () => {
    const managerProber = (probeClose?: ProbeClose): ProbeManager =>
      new ProbeManager({
        statusProvider: { getPodStatus: () => undefined },
        livenessResults: new ResultsManager(),
        readinessResults: new ResultsManager(),
        startupResults: new ResultsManager(),
        runner: new LocalCommandRunner(),
        flightRecorder: false,
        ...(probeClose ? { probeClose } : {}),
      });
    const survivor = await startPlainServer();
    const byDefault = managerProber();
    expect(await probeEach(byDefault.context.prober, survivor.port, ['tcp'], 3)).toEqual(['tcp success', 'tcp success', 'tcp success']);
    await survivor.closed(3);
    expect(survivor.child.exitCode).toBeNull();
    await byDefault.close();

    const victim = await startPlainServer();
    const resetting = managerProber('reset');
    await probeEach(resetting.context.prober, victim.port, ['tcp'], 1);
    if (victim.child.exitCode === null) await once(victim.child, 'exit');
    expect(victim.stderr()).toContain('ECONNRESET');
    await resetting.close();
  });

  it("the Kubelet (probelet run) hands probeClose to its probe manager", async () => {
    const clock = new FakeClock();
    const kubelet = new Kubelet({ runtime: new FakeRuntime(clock), clock, probeClose: 'reset' });
    const victim = await startPlainServer();
    await probeEach(kubelet.probeManager.context.prober, victim.port, ['tcp'], 1);
    if (victim.child.exitCode === null) await once(victim.child, 'exit');
    expect(victim.stderr()).toContain('ECONNRESET');
    await kubelet.close();
  });

  it('probelet probe: the same server survives by default, and dies with --probe-close reset', async () => {
    const server = await startPlainServer();
    for (let i = 0; i < 3; i++) {
      expect(await runCli(['probe', '--tcp', `127.0.0.1:${server.port}`, '-o', 'json'])).toMatchObject({ code: 0 });
    }
    await server.closed(3);
    expect(server.child.exitCode).toBeNull();
    expect(await runCli(['probe', '--tcp', `127.0.0.1:${server.port}`, '--probe-close', 'reset'])).toMatchObject({ code: 0 });
    if (server.child.exitCode === null) await once(server.child, 'exit');
    expect(server.stderr()).toContain('ECONNRESET');
    expect(await runCli(['run', 'pod.yaml', '--probe-close', 'rst'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("option '--probe-close <how>' argument 'rst' is invalid.") as unknown,
    });
    expect(await runCli(['probe', '--tcp', '127.0.0.1:1', '--probe-close', 'rst'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("option '--probe-close <how>' argument 'rst' is invalid. Allowed choices are fin, reset.") as unknown,
    });
  });
});
