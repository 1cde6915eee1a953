/**
 * The one input rule of every command (docs/commands.md): a path the user typed that cannot
 * be read is exit 2 before anything starts; an invalid document inside a readable file
 * costs that document only, and the command exits 2 at the end. `run` is covered in
 * run.test.ts (it needs real containers); here `check`, `simulate` and `probe -f`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startHttpServer, type TestHttpServer } from './helpers.js';

const DEMO = 'examples/demo/pod.yaml';
const dir = mkdtempSync(join(tmpdir(), 'probelet-input-rule-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const SERVICE = 'apiVersion: v1\nkind: Service\nmetadata: { name: web }\nspec: { ports: [{ port: 80 }] }\n';
const pod = (name: string, container = 'app', probe = ''): string =>
  `apiVersion: v1\nkind: Pod\nmetadata: { name: ${name} }\nspec:\n  containers:\n    - name: ${container}\n      image: nginx\n      command: [sleep, '1']\n${probe}`;

describe('a path that cannot be read: exit 2 before anything starts', () => {
  const missing = join(dir, 'missing.yaml');
  it.each([
    ['check', ['check', DEMO, missing]],
    ['simulate', ['simulate', DEMO, missing, '--for', '10s']],
    ['probe -f', ['probe', '-f', missing, '--container', 'app']],
  ])('%s', async (_name, args) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`probelet: ${missing}: cannot read: no such file or directory\nprobelet: nothing was started (fix the path above)\n`);
    expect(run.stdout).toBe('');
  });

  it('simulate --for 5 minutes: the unit is not read as a file, and the message says how to write it', async () => {
    const run = await runCli(['simulate', DEMO, '--for', '5', 'minutes']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('probelet: "minutes" is taken for a file: a duration is one word, without a space (e.g. --for 5m, --timeout 30s)\nprobelet: nothing was started\n');
    expect(run.stdout).toBe('');
  });
});

describe('an invalid document costs itself only, and the command exits 2 at the end', () => {
  it('simulate plays the good pods and exits 2 (was 0)', async () => {
    const mixed = file('mixed.yaml', `${pod('good')}---\nkind: Pod\n---\n${pod('bad', 'app', '      readinessProbe: { exec: { command: [true] }, successThreshold: 2, livenessProbe: 1 }\n')}`);
    const run = await runCli(['simulate', mixed, '--for', '10s']);
    expect(run.stderr).toContain(`probelet: ${mixed}:`);
    expect(run.stdout).toContain('pod default/good:');
    expect(run.stderr).toMatch(/probelet: \d problems? in the input \(above\): what could be read was simulated\n$/);
    expect(run.code).toBe(2);
  });
});

describe('check: nothing to check is said plainly; folders pass over files that are no manifest', () => {
  it('a file with only a Service: "no workload was checked", exit 2', async () => {
    const service = file('service.yaml', SERVICE);
    const run = await runCli(['check', service]);
    expect(run.stderr).toContain(
      `probelet: no workload was checked: ${service} holds no Pod, workload or PodTemplate (skipped 1 object without a pod template (Service))`,
    );
    expect(run.code).toBe(2);
    // No all-clear summary over nothing checked.
    expect(run.stdout).not.toContain('0 errors');
  });

  it.each([
    ['not YAML', 'hello: [unclosed\n  foo: bar: baz\n', ':2:6: document 1: missed comma between flow collection entries'],
    ['a plain text', 'hello world\n', ':1:1: document 1: expected a Kubernetes object (a mapping with apiVersion and kind), got "hello world"'],
  ])('%s: the problem with its line, "nothing else was checked", no all-clear summary, exit 2', async (_name, text, problem) => {
    const path = file('not-a-manifest.yaml', text);
    const run = await runCli(['check', path]);
    expect(run.stderr).toContain(`${path}${problem}`);
    expect(run.stderr).toContain('probelet: 1 problem in the input (above); nothing else was checked');
    expect(run.stderr).not.toContain('everything else');
    expect(run.stdout).not.toContain('0 errors');
    expect(run.code).toBe(2);
  });

  it('a behaviour file in a folder is passed over with a note (exit 0); named on the command line it is still a problem', async () => {
    const folder = join(dir, 'k8s');
    rmSync(folder, { recursive: true, force: true });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(folder);
    writeFileSync(join(folder, 'pod.yaml'), pod('web', 'app', '      readinessProbe: { tcpSocket: { port: 80 } }\n'));
    writeFileSync(join(folder, 'behaviour.yaml'), 'app: down:30s,up\nworker:\n  readiness: down\n');
    const run = await runCli(['check', folder, '--fail-on', 'never']);
    expect(run.stderr).toBe(`probelet: skipped 1 file in the folder that holds no Kubernetes object (${join(folder, 'behaviour.yaml')})\n`);
    expect(run.code).toBe(0);

    const named = await runCli(['check', join(folder, 'behaviour.yaml'), '--fail-on', 'never']);
    expect(named.code).toBe(2);
    expect(named.stderr).toContain('apiVersion not set, kind not set');
  });

  it('the examples folder checks (its behaviour file is passed over)', async () => {
    const run = await runCli(['check', 'examples/', '--fail-on', 'never']);
    expect(run.stderr).toContain('probelet: skipped 1 file in the folder that holds no Kubernetes object (examples/simulate/demo-behaviour.yaml)');
    expect(run.code).toBe(0);
  });
});

describe('probe -f says what is wrong and what the manifest holds', () => {
  let web: TestHttpServer;
  afterAll(async () => web?.close());

  it('a Service-only file, a wrong --pod, a wrong --container', async () => {
    web = await startHttpServer((_req, res) => res.end('ok'));
    const service = file('probe-service.yaml', SERVICE);
    const onlyService = await runCli(['probe', '-f', service, '--container', 'app']);
    expect(onlyService.code).toBe(2);
    expect(onlyService.stderr).toBe(`probelet: ${service}: no Pod or workload in it (skipped 1 object without a pod template (Service)): give a manifest with a pod template\n`);

    const two = file('two.yaml', `${pod('web', 'app')}---\n${pod('db', 'postgres')}`);
    const wrongPod = await runCli(['probe', '-f', two, '--pod', 'api', '--container', 'app']);
    expect(wrongPod.code).toBe(2);
    expect(wrongPod.stderr).toBe(`probelet: ${two}: no pod named "api"; pods and containers in ${two}: web (app), db (postgres)\n`);

    const wrongContainer = await runCli(['probe', '-f', two, '--pod', 'web', '--container', 'nginx']);
    expect(wrongContainer.code).toBe(2);
    expect(wrongContainer.stderr).toBe(`probelet: ${two}: no container named "nginx" in pod web; pods and containers in ${two}: web (app), db (postgres)\n`);
  });

  it('runs the probe when another document is broken, and exits 2 at the end for it', async () => {
    const mixed = file('probe-mixed.yaml', `${pod('web', 'app', `      readinessProbe: { httpGet: { path: /, port: ${web.port} } }\n`)}---\nkind: Pod\n`);
    const run = await runCli(['probe', '-f', mixed, '--container', 'app']);
    expect(run.stdout).toContain('Verdict:  success');
    expect(run.stderr).toContain(`probelet: 1 problem in ${mixed} (above)`);
    expect(run.code).toBe(2);
  });
});

describe('a misspelled field is refused by every command that reads files, with the nearest name (strict fields)', () => {
  const typo = (): string => file('typo.yaml', pod('typo', 'app', '      livenessProbe: { exec: { command: [true] }, periodSecond: 5 }\n'));
  const said = 'spec.containers[0].livenessProbe.periodSecond: unknown field "periodSecond" in Probe: did you mean "periodSeconds"?';
  it.each([
    ['check', (path: string) => ['check', path]],
    ['simulate', (path: string) => ['simulate', path, '--for', '10s']],
    ['probe -f', (path: string) => ['probe', '-f', path, '--container', 'app']],
    ['run', (path: string) => ['run', path]],
  ])('%s: exit 2, file:line and the suggestion, the pod not used', async (_name, args) => {
    const path = typo();
    const run = await runCli(args(path));
    expect(run.stderr).toContain(`${path}:9:51: document 1: ${said}`);
    expect(run.code).toBe(2);
  });
});

describe('a pull Secret the API server refuses is an input problem of every command, with its words; the other documents go on', () => {
  const b64 = (text: string): string => Buffer.from(text).toString('base64');
  const secret = (type: string, data: string): string => `apiVersion: v1\nkind: Secret\nmetadata: { name: regcred }\ntype: ${type}\n${data}---\n`;
  const withPod = (text: string): string =>
    `${text}${pod('web', 'app', `      readinessProbe: { exec: { command: ['true'] } }\n  imagePullSecrets: [{ name: regcred }]\n`)}`;
  const fix = '; a kubernetes.io/dockerconfigjson Secret holds a Docker config JSON object under .dockerconfigjson (base64 under data, or as text under stringData)';
  const cases: [string, string, string][] = [
    [
      'not JSON',
      secret('kubernetes.io/dockerconfigjson', `data:\n  .dockerconfigjson: ${b64('hello')}\n`),
      `:6:3: document 1: Secret "regcred" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character 'h' looking for beginning of value${fix}`,
    ],
    [
      'not base64',
      secret('kubernetes.io/dockerconfigjson', `data:\n  .dockerconfigjson: '{"auths":{}}'\n`),
      ':6:3: document 1: Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0; values under data are base64',
    ],
    ['missing the key', secret('kubernetes.io/dockerconfigjson', `data:\n  config.json: ${b64('{}')}\n`), ':5:1: document 1: Secret "regcred" is invalid: data[.dockerconfigjson]: Required value; a kubernetes.io/dockerconfigjson'],
    [
      'a dockercfg that is a JSON list',
      secret('kubernetes.io/dockercfg', `stringData:\n  .dockercfg: '[1]'\n`),
      `:6:3: document 1: Secret "regcred" is invalid: data[.dockercfg]: Invalid value: "<secret contents redacted>": json: cannot unmarshal array into Go value of type map[string]interface {}; a kubernetes.io/dockercfg Secret holds`,
    ],
  ];
  const commands: [string, (path: string) => string[], string][] = [
    ['check', (path) => ['check', path, '--fail-on', 'never'], 'stdout'],
    ['simulate', (path) => ['simulate', path, '--for', '10s'], 'pod default/web:'],
    ['probe -f', (path) => ['probe', '-f', path, '--container', 'app'], 'Verdict:  success'],
    ['run', (path) => ['run', path, '--listen', '127.0.0.1:0', '--output', 'json', '--timeout', '1s'], '"web"'],
  ];
  for (const [name, text, said] of cases) {
    it.each(commands)(`${name}: %s refuses the Secret (file:line, the API server's words, the fix), uses the pod, exits 2`, async (_command, args, ran) => {
      const path = file('pull-secret.yaml', withPod(text));
      const run = await runCli(args(path));
      expect(run.stderr).toContain(`${path}${said}`);
      if (ran !== 'stdout') expect(run.stdout).toContain(ran);
      else expect(run.stdout).toContain('web');
      expect(run.code).toBe(2);
    });
  }
});
