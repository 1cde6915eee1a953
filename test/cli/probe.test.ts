/**
 * `probelet probe` with the handler given on the command line: verdicts, the kubelet's
 * event messages, JSON output and exit codes, against real local servers and processes.
 * Most cases run `main()` in-process; the last block runs the real executable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  closedPort,
  parseJson,
  runCli,
  runNode,
  startGrpcHealthServer,
  startHttpServer,
  startTcpServer,
  type TestHttpServer,
} from './helpers.js';

/** The four lines of the text output, by label. */
function textFields(stdout: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of stdout.matchAll(/^(Probe|Verdict|Event|Took): +(.*)$/gm)) fields[match[1] ?? ''] = match[2] ?? '';
  return fields;
}

let web: TestHttpServer;
let base: string;

beforeAll(async () => {
  web = await startHttpServer((req, res) => {
    if (req.url === '/healthz') {
      res.end('ok');
    } else if (req.url === '/fail') {
      res.writeHead(500).end('broken');
    } else if (req.url === '/moved') {
      // Another host: the kubelet does not follow it and warns instead.
      res.writeHead(302, { Location: 'http://other.invalid/elsewhere' }).end('see elsewhere');
    }
    // Anything else (/slow) is never answered.
  });
  base = `http://127.0.0.1:${web.port}`;
});

afterAll(async () => {
  await web.close();
});

describe('probelet probe --http-get', () => {
  it('succeeds on 200 with no event, exit 0', async () => {
    const run = await runCli(['probe', '--http-get', `${base}/healthz`]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const fields = textFields(run.stdout);
    expect(fields).toMatchObject({
      Probe: `readiness httpGet ${base}/healthz`,
      Verdict: 'success',
      Event: '(none: probe succeeded)',
    });
    expect(fields['Took']).toMatch(/^\d+(\.\d+)?ms$/);
  });

  it('fails on 500 with the kubelet message, exit 1', async () => {
    const run = await runCli(['probe', '--http-get', `${base}/fail`]);
    expect(run.code).toBe(1);
    expect(textFields(run.stdout)).toMatchObject({
      Verdict: 'failure',
      Event: 'Warning Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 500',
    });
  });

  it('warns on a redirect to another host, exit 0', async () => {
    const run = await runCli(['probe', '--http-get', `${base}/moved`]);
    expect(run.code).toBe(0);
    expect(textFields(run.stdout)).toMatchObject({
      Verdict: 'warning',
      Event: 'Warning ProbeWarning: Readiness probe warning: Probe terminated redirects, Response body: see elsewhere',
    });
  });

  it('times out after --timeout seconds when the server never answers, exit 1', async () => {
    const run = await runCli(['probe', '--http-get', `${base}/slow`, '--timeout', '1', '-o', 'json']);
    expect(run.code).toBe(1);
    const json = parseJson(run.stdout);
    expect(json).toMatchObject({ result: 'failure', outcome: 'failure', error: null });
    expect(json['output']).toBe(`Get "${base}/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`);
    expect(json['durationMs']).toBeGreaterThanOrEqual(950);
    expect(json['durationMs']).toBeLessThan(5000);
  });

  it('defaults to a 1 s timeout and honours a longer one', async () => {
    const byDefault = parseJson((await runCli(['probe', '--http-get', `${base}/slow`, '-o', 'json'])).stdout);
    expect(byDefault['durationMs']).toBeGreaterThanOrEqual(950);
    expect(byDefault['durationMs']).toBeLessThan(2500);
    const longer = parseJson((await runCli(['probe', '--http-get', `${base}/slow`, '--timeout', '3s', '-o', 'json'])).stdout);
    expect(longer['durationMs']).toBeGreaterThanOrEqual(2950);
  });

  it('sends every -H header, Host included, next to the kubelet defaults', async () => {
    const before = web.requests.length;
    const run = await runCli([
      'probe',
      '--http-get',
      `${base}/healthz`,
      '-H',
      'X-Probe-Token: s3cret: with colon',
      '--header',
      'Host: app.example.test',
    ]);
    expect(run.code).toBe(0);
    expect(web.requests.slice(before)).toHaveLength(1);
    const headers = web.requests[before];
    expect(headers).toMatchObject({ 'x-probe-token': 's3cret: with colon', host: 'app.example.test' });
    expect(headers?.['user-agent']).toMatch(/^kube-probe\//);
  });

  it('words messages after --type', async () => {
    const liveness = await runCli(['probe', '--http-get', `${base}/fail`, '--type', 'liveness']);
    expect(liveness.code).toBe(1);
    expect(textFields(liveness.stdout)).toMatchObject({
      Probe: `liveness httpGet ${base}/fail`,
      Event: 'Warning Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 500',
    });
    const startup = await runCli(['probe', '--http-get', `${base}/moved`, '--type', 'startup']);
    expect(textFields(startup.stdout)['Event']).toMatch(/^Warning ProbeWarning: Startup probe warning: /);
  });

  it('prints exactly {result, outcome, output, error, durationMs} with -o json', async () => {
    const failed = await runCli(['probe', '--http-get', `${base}/fail`, '--output', 'json']);
    expect(failed.code).toBe(1);
    const json = parseJson(failed.stdout);
    expect(Object.keys(json)).toEqual(['result', 'outcome', 'output', 'error', 'durationMs']);
    expect(json).toMatchObject({
      result: 'failure',
      outcome: 'failure',
      output: 'HTTP probe failed with statuscode: 500',
      error: null,
    });
    expect(typeof json['durationMs']).toBe('number');
    expect(json['durationMs']).toBeGreaterThanOrEqual(0);

    const warned = parseJson((await runCli(['probe', '--http-get', `${base}/moved`, '-o', 'json'])).stdout);
    expect(warned).toMatchObject({ result: 'success', outcome: 'warning', error: null });
    const ok = parseJson((await runCli(['probe', '--http-get', `${base}/healthz`, '-o', 'json'])).stdout);
    expect(ok).toMatchObject({ result: 'success', outcome: 'success', error: null });
  });
});

describe('probelet probe --tcp', () => {
  it('succeeds when something listens, exit 0', async () => {
    const server = await startTcpServer();
    try {
      const run = await runCli(['probe', '--tcp', `127.0.0.1:${server.port}`]);
      expect(run.code).toBe(0);
      expect(textFields(run.stdout)).toMatchObject({ Probe: `readiness tcpSocket 127.0.0.1:${server.port}`, Verdict: 'success' });
    } finally {
      await server.close();
    }
  });

  it('fails on a refused connection, exit 1', async () => {
    const port = await closedPort();
    const run = await runCli(['probe', '--tcp', `127.0.0.1:${port}`, '-o', 'json']);
    expect(run.code).toBe(1);
    expect(parseJson(run.stdout)).toMatchObject({
      result: 'failure',
      outcome: 'failure',
      output: `dial tcp 127.0.0.1:${port}: connect: connection refused`,
      error: null,
    });
  });
});

describe('probelet probe --grpc', () => {
  it('succeeds on SERVING and fails on NOT_SERVING, per --service', async () => {
    const server = await startGrpcHealthServer({ '': 'SERVING', db: 'NOT_SERVING' });
    try {
      const whole = await runCli(['probe', '--grpc', `127.0.0.1:${server.port}`, '--timeout', '5']);
      expect(whole.code).toBe(0);
      expect(textFields(whole.stdout)).toMatchObject({ Probe: `readiness grpc 127.0.0.1:${server.port}`, Verdict: 'success' });

      const db = await runCli(['probe', '--grpc', `127.0.0.1:${server.port}`, '--service', 'db', '--timeout', '5']);
      expect(db.code).toBe(1);
      expect(textFields(db.stdout)).toMatchObject({
        Probe: `readiness grpc 127.0.0.1:${server.port} service "db"`,
        Verdict: 'failure',
        Event: 'Warning Unhealthy: Readiness probe failed: service unhealthy (responded with "NOT_SERVING")',
      });
    } finally {
      server.close();
    }
  });
});

describe('probelet probe --exec', () => {
  // Generous timeouts where the command should finish: node start-up is slow on a busy machine.
  it('succeeds on exit 0 and reports the output', async () => {
    const run = await runCli(['probe', '--exec', '--timeout', '20', '-o', 'json', '--', process.execPath, '-e', 'console.log("ready")']);
    expect(run.code).toBe(0);
    expect(parseJson(run.stdout)).toMatchObject({ result: 'success', outcome: 'success', output: 'ready\n', error: null });
  });

  it('fails on a non-zero exit, with its output as the message', async () => {
    const script = 'console.log("not yet"); process.exit(3)';
    const run = await runCli(['probe', '--exec', '--timeout', '20', '--', process.execPath, '-e', script]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('Verdict:  failure');
    expect(run.stdout).toContain('Event:    Warning Unhealthy: Readiness probe failed: not yet\n');
  });

  it('fails after --timeout when the command hangs', async () => {
    const script = 'setTimeout(() => {}, 60000)';
    const run = await runCli(['probe', '--exec', '--timeout', '1', '-o', 'json', '--', process.execPath, '-e', script]);
    expect(run.code).toBe(1);
    const json = parseJson(run.stdout);
    expect(json).toMatchObject({ result: 'failure', outcome: 'failure', error: null });
    expect(json['output']).toMatch(/^command timed out: .* timed out after 1s$/);
    expect(json['durationMs']).toBeGreaterThanOrEqual(950);
    expect(json['durationMs']).toBeLessThan(10_000);
  });

  it('passes options after -- to the command, not to probelet', async () => {
    const script = 'process.exit(process.argv.slice(1).join(" ") === "x -o json" ? 0 : 1)';
    const run = await runCli(['probe', '--exec', '--timeout', '20', '--', process.execPath, '-e', script, 'x', '-o', 'json']);
    expect(run.code).toBe(0);
    // Text, not JSON: `-o json` went to the command.
    expect(textFields(run.stdout)).toMatchObject({ Probe: expect.stringContaining('"x","-o","json"]'), Verdict: 'success' });
  });
});

describe('probelet probe: bad flags exit 2 and name the problem', () => {
  const cases: [string, string[], RegExp][] = [
    ['no handler', [], /exactly one of --http-get URL, --tcp HOST:PORT/],
    ['two handlers', ['--http-get', 'http://127.0.0.1:1/', '--tcp', '127.0.0.1:1'], /exactly one of --http-get/],
    ['--exec and --grpc', ['--grpc', '127.0.0.1:1', '--exec', '--', 'true'], /exactly one of/],
    ['--timeout 0', ['--tcp', '127.0.0.1:1', '--timeout', '0'], /--timeout: the duration must be positive, got "0"/],
    ['--timeout 1.5', ['--tcp', '127.0.0.1:1', '--timeout', '1.5'], /--timeout 1\.5: timeoutSeconds is a whole number of seconds in the Kubernetes API/],
    ['--timeout 2500ms', ['--tcp', '127.0.0.1:1', '--timeout', '2500ms'], /--timeout 2500ms: timeoutSeconds is a whole number of seconds .*give e\.g\. 3s/],
    ['--timeout abc', ['--tcp', '127.0.0.1:1', '--timeout', 'abc'], /--timeout: invalid duration "abc"/],
    ['--tcp without port', ['--tcp', '127.0.0.1'], /--tcp: invalid value "127.0.0.1": expected HOST:PORT/],
    ['--tcp port 70000', ['--tcp', 'localhost:70000'], /--tcp: invalid value "localhost:70000"/],
    ['--grpc port 0', ['--grpc', '127.0.0.1:0'], /--grpc: invalid value "127.0.0.1:0"/],
    ['--type', ['--tcp', '127.0.0.1:1', '--type', 'sideways'], /'--type <type>' argument 'sideways' is invalid/],
    ['--output', ['--tcp', '127.0.0.1:1', '-o', 'yaml'], /'-o, --output <format>' argument 'yaml' is invalid/],
    ['--http-get not a URL', ['--http-get', 'not a url'], /--http-get: invalid URL "not a url"/],
    ['--http-get ftp', ['--http-get', 'ftp://127.0.0.1/'], /--http-get: unsupported scheme "ftp"/],
    ['-H without colon', ['--http-get', 'http://127.0.0.1:1/', '-H', 'NoColon'], /--header: invalid value "NoColon"/],
    ['--exec without command', ['--exec'], /--exec: give the command after --/],
    ['unknown flag', ['--tcp', '127.0.0.1:1', '--retries', '3'], /unknown option '--retries'/],
    ['--container without -f', ['--tcp', '127.0.0.1:1', '--container', 'app'], /--container: only with -f MANIFEST/],
    ['--pod-ip without -f', ['--tcp', '127.0.0.1:1', '--pod-ip', '127.0.0.1'], /--pod-ip: only with -f MANIFEST/],
    ['--service without --grpc', ['--tcp', '127.0.0.1:1', '--service', 'db'], /--service: only with --grpc/],
    ['-H without --http-get', ['--tcp', '127.0.0.1:1', '-H', 'A: b'], /--header: only with --http-get/],
    ['a command without --exec', ['--tcp', '127.0.0.1:1', '--', 'true'], /unexpected arguments \["true"\]/],
  ];
  it.each(cases)('%s', async (_name, args, message) => {
    const run = await runCli(['probe', ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).not.toMatch(/Verdict|"result"/);
  });
});

describe('the probelet executable', () => {
  // bin/probelet.js runs dist/: `npm test` (and the check script) build first.
  it('exits 0 on success', async () => {
    const run = await runNode(BIN, ['probe', '--http-get', `${base}/healthz`]);
    expect(run).toMatchObject({ code: 0, signal: null, stderr: '' });
    expect(run.stdout).toContain('Verdict:  success');
  });

  it('exits 1 on failure', async () => {
    const run = await runNode(BIN, ['probe', '--http-get', `${base}/fail`, '--type', 'liveness']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('Liveness probe failed: HTTP probe failed with statuscode: 500');
  });

  it('exits 2 on bad input, saying why on stderr', async () => {
    const run = await runNode(BIN, ['probe', '--tcp', '127.0.0.1:1', '--timeout', 'soon']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('probelet: --timeout: invalid duration "soon"');
    expect(run.stdout).toBe('');
  });
});
