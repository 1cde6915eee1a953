/**
 * `probelet probe -f MANIFEST`: the probe comes from a Pod (or a workload's pod template),
 * ports resolve against the container, and every problem with the manifest exits 2 with a
 * message that says where. Real manifests in a temp directory, real servers on 127.0.0.1.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, parseJson, runCli, runNode, startHttpServer, type TestHttpServer } from './helpers.js';

let dir: string;
let web: TestHttpServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'probelet-cli-'));
  web = await startHttpServer((req, res) => {
    if (req.url === '/healthz') res.end('ok');
    else res.writeHead(500).end();
  });
});

afterAll(async () => {
  await web.close();
  await rm(dir, { recursive: true, force: true });
});

/** Writes a manifest into the temp directory and returns its path. */
async function manifest(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

/** A one-container Pod; `container` is YAML indented for a list item's fields. */
function podYaml(name: string, container: string): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  containers:
    - name: app
      image: example/app:1
${container}`;
}

describe('probelet probe -f with a Pod', () => {
  it('resolves a named port from the container ports and probes the pod IP', async () => {
    const path = await manifest(
      'named-port.yaml',
      podYaml(
        'web',
        `      ports:
        - name: web
          containerPort: ${web.port}
      readinessProbe:
        httpGet: { path: /healthz, port: web }
      livenessProbe:
        httpGet: { path: /broken, port: web }
`,
      ),
    );
    const before = web.requests.length;
    const ready = await runCli(['probe', '-f', path, '--container', 'app', '--type', 'readiness', '--pod-ip', '127.0.0.1']);
    expect(ready).toMatchObject({ code: 0, stderr: '' });
    expect(ready.stdout).toContain(`Probe:    readiness of web/app from ${path}\n`);
    expect(ready.stdout).toContain('Verdict:  success');
    expect(web.requests.slice(before).map((h) => h.host)).toEqual([`127.0.0.1:${web.port}`]);

    const live = await runCli(['probe', '-f', path, '--container', 'app', '--type', 'liveness', '--pod-ip', '127.0.0.1']);
    expect(live.code).toBe(1);
    expect(live.stdout).toContain('Event:    Warning Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 500');
  });

  it('aims host-less probes at --pod-ip', async () => {
    const path = await manifest(
      'tcp.yaml',
      podYaml('tcp', `      readinessProbe:\n        tcpSocket: { port: ${web.port} }\n`),
    );
    const local = await runCli(['probe', '-f', path, '--pod-ip', '127.0.0.1', '-o', 'json']);
    expect(local.code).toBe(0);
    // The server listens on 127.0.0.1 only, so another loopback address is refused.
    const elsewhere = await runCli(['probe', '-f', path, '--pod-ip', '127.0.0.2', '-o', 'json']);
    expect(elsewhere.code).toBe(1);
    expect(parseJson(elsewhere.stdout)['output']).toBe(`dial tcp 127.0.0.2:${web.port}: connect: connection refused`);
  });

  it("runs exec probes with the container's env, $(VAR) expanded", async () => {
    const script = 'process.exit(process.env.READY === "yes" && process.argv[1] === "yes" ? 0 : 1)';
    const path = await manifest(
      'exec.yaml',
      podYaml(
        'worker',
        `      env:
        - { name: READY, value: "yes" }
      startupProbe:
        timeoutSeconds: 20
        exec:
          command: [${JSON.stringify(process.execPath)}, -e, ${JSON.stringify(script)}, "$(READY)"]
`,
      ),
    );
    const run = await runCli(['probe', '-f', path, '--type', 'startup']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Verdict:  success');
  });

  it('picks the pod with --pod when the manifest holds several', async () => {
    const one = podYaml('one', `      readinessProbe:\n        httpGet: { path: /healthz, port: ${web.port} }\n`);
    const two = podYaml('two', `      readinessProbe:\n        httpGet: { path: /other, port: ${web.port} }\n`);
    const path = await manifest('two-pods.yaml', `${one}---\n${two}`);
    const ambiguous = await runCli(['probe', '-f', path, '--container', 'app']);
    expect(ambiguous.code).toBe(2);
    // Each named with the file:line of its container, so the user sees which document is which (issue 33).
    expect(ambiguous.stderr).toContain(`several containers have a readinessProbe (one/app at ${path}:7, two/app at ${path}:18); choose one with --pod and --container`);
    expect((await runCli(['probe', '-f', path, '--pod', 'one'])).code).toBe(0);
    expect((await runCli(['probe', '-f', path, '--pod', 'two'])).code).toBe(1);
  });

  it('--type: only the containers with that probe are candidates (one is the one meant; none is said)', async () => {
    const probed = podYaml('probed', `      livenessProbe:\n        httpGet: { path: /healthz, port: ${web.port} }\n`);
    const plain = podYaml('plain', '');
    const path = await manifest('one-live.yaml', `${probed}---\n${plain}`);
    const run = await runCli(['probe', '-f', path, '--type', 'liveness']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('Verdict:  success');
    const none = await runCli(['probe', '-f', path, '--type', 'startup']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`no container has a startupProbe; several match (probed/app at ${path}:7, plain/app at ${path}:18)`);
  });
});

describe('probelet probe -f with a workload', () => {
  it("probes a Deployment's pod template", async () => {
    const path = await manifest(
      'deployment.yaml',
      `apiVersion: apps/v1
kind: Deployment
metadata: { name: api, namespace: shop }
spec:
  replicas: 3
  selector: { matchLabels: { app: api } }
  template:
    metadata: { labels: { app: api } }
    spec:
      containers:
        - name: api
          image: shop/api:1.2
          ports: [{ name: http, containerPort: ${web.port} }]
          readinessProbe:
            httpGet: { path: /healthz, port: http }
`,
    );
    const run = await runCli(['probe', '-f', path, '--container', 'api', '--type', 'readiness', '--pod-ip', '127.0.0.1']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain(`Probe:    readiness of api/api from ${path}\n`);
  });
});

describe('probelet probe -f: problems exit 2 and say where', () => {
  it('a missing file', async () => {
    const path = join(dir, 'absent.yaml');
    const run = await runCli(['probe', '-f', path, '--container', 'app']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`probelet: ${path}: cannot read: no such file or directory`);
    expect(run.stdout).toBe('');
  });

  it('broken YAML, with line and column', async () => {
    const path = await manifest('broken.yaml', 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: [web\n');
    const run = await runCli(['probe', '-f', path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^probelet: ${escape(path)}:\\d+:\\d+: \\S`));
  });

  it('an unknown container', async () => {
    const path = await manifest('ok.yaml', podYaml('p', `      readinessProbe:\n        tcpSocket: { port: 1 }\n`));
    const run = await runCli(['probe', '-f', path, '--container', 'sidecar']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${path}: no container named "sidecar"`);
  });

  it('a container without that probe', async () => {
    const path = await manifest('ready-only.yaml', podYaml('p', `      readinessProbe:\n        tcpSocket: { port: 1 }\n`));
    const run = await runCli(['probe', '-f', path, '--container', 'app', '--type', 'liveness']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${path}: container "app" has no livenessProbe`);
  });

  it('handler flags next to -f', async () => {
    const path = await manifest('flags.yaml', podYaml('p', `      readinessProbe:\n        tcpSocket: { port: 1 }\n`));
    for (const [extra, named] of [
      [['--tcp', '127.0.0.1:1'], '--tcp'],
      [['--timeout', '5'], '--timeout'],
      [['--http-get', 'http://127.0.0.1:1/', '-H', 'A: b'], '--http-get, --header'],
      [['--exec', '--', 'true'], '--exec, a command'],
    ] as const) {
      const run = await runCli(['probe', '-f', path, ...extra]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`probelet: -f: the probe comes from the manifest; ${named} cannot be given with it`);
    }
  });

  it('an invalid probe, with every field error', async () => {
    const path = await manifest(
      'invalid.yaml',
      podYaml(
        'p',
        `      livenessProbe:
        successThreshold: 2
        timeoutSeconds: -1
        httpGet: { path: /, port: HTTP }
`,
      ),
    );
    const run = await runCli(['probe', '-f', path, '--type', 'liveness']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(`probelet: ${path}: invalid pod:`);
    expect(lines.slice(1).sort()).toEqual(
      [
        '  spec.containers[0].livenessProbe.httpGet.port: Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
        '  spec.containers[0].livenessProbe.httpGet.port: Invalid value: "HTTP": must contain at least one letter (a-z)',
        '  spec.containers[0].livenessProbe.timeoutSeconds: Invalid value: -1: must be greater than or equal to 0',
        '  spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1',
      ].sort(),
    );
  });

  it('a probe that errors (named port not in the container) exits 2 with the kubelet message', async () => {
    const path = await manifest('no-port.yaml', podYaml('p', `      readinessProbe:\n        httpGet: { path: /, port: metrics }\n`));
    const text = await runCli(['probe', '-f', path]);
    expect(text.code).toBe(2);
    expect(text.stdout).toContain('Verdict:  errored');
    expect(text.stdout).toContain(
      'Event:    Warning Unhealthy: Readiness probe errored and resulted in unknown state: strconv.Atoi: parsing "metrics": invalid syntax',
    );
    const json = await runCli(['probe', '-f', path, '-o', 'json']);
    expect(json.code).toBe(2);
    expect(parseJson(json.stdout)).toMatchObject({
      result: 'failure',
      outcome: 'unknown',
      output: '',
      error: 'strconv.Atoi: parsing "metrics": invalid syntax',
    });
  });

  it('the executable exits 2 too', async () => {
    const path = await manifest('no-port-bin.yaml', podYaml('p', `      readinessProbe:\n        tcpSocket: { port: metrics }\n`));
    const run = await runNode(BIN, ['probe', '-f', path]);
    expect(run.code).toBe(2);
    expect(run.stdout).toContain('Verdict:  errored');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
