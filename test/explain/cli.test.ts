/**
 * `probelet explain` and `check --cluster` at the command line, without a cluster: saved output
 * offline (the exit status says whether a cause was found), and every input problem exit 2
 * naming the fix — an unreadable file, a file with no Pod, a target that is no KIND/NAME, an
 * API server nobody answers at (a kubeconfig aimed at a closed port on 127.0.0.1).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'explain-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, value: unknown): string => {
  const path = join(dir, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
};

const at = (s: number): string => new Date(Date.parse('2026-11-29T00:00:00Z') + s * 1000).toISOString().replace(/\.000Z$/, 'Z');

const crashed = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'shop', uid: 'u1' },
  spec: { containers: [{ name: 'app', image: 'x' }] },
  status: {
    phase: 'Running',
    containerStatuses: [
      { name: 'app', image: 'x', imageID: '', ready: false, restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 20s restarting failed container=app pod=web_shop(u1)' } }, lastState: { terminated: { exitCode: 3, reason: 'Error', startedAt: at(20), finishedAt: at(22) } } },
    ],
  },
};
const healthy = { ...crashed, status: { phase: 'Running', containerStatuses: [{ name: 'app', image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: at(0) } } }] } };
const events = { apiVersion: 'v1', kind: 'EventList', items: [{ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1' }, involvedObject: { kind: 'Pod', name: 'web', namespace: 'shop', uid: 'u1', fieldPath: 'spec.containers{app}' }, reason: 'Started', message: 'Container started', type: 'Normal', count: 3, firstTimestamp: at(0), lastTimestamp: at(20) }] };

describe('explain -f (saved output)', () => {
  it('a crash: exit 1, the cause and the exit code in text and JSON', async () => {
    const pod = write('crashed.json', crashed);
    const ev = write('events.json', events);
    const text = await runCli(['explain', '-f', pod, '--events', ev]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('container app: app-crash');
    expect(text.stdout).toContain('exited by itself with code 3');
    const json = await runCli(['explain', '-f', pod, '--events', ev, '-o', 'json']);
    const report = JSON.parse(json.stdout) as { pods: { diagnoses: { cause: string; numbers: Record<string, number> }[]; observedAt: string }[] };
    expect(report.pods[0]?.diagnoses[0]).toMatchObject({ cause: 'app-crash', numbers: { exitCode: 3, restarts: 2, ranSeconds: 2 } });
    // Saved output: "now" is the latest time in it.
    expect(report.pods[0]?.observedAt).toBe(at(22));
  });

  it('a healthy pod: exit 0; kubectl get pod,events in one file works too', async () => {
    const both = write('both.json', { apiVersion: 'v1', kind: 'List', items: [healthy, ...events.items] });
    const run = await runCli(['explain', '-f', both]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('container app: nothing wrong');
  });

  it('bad input exits 2 naming the fix', async () => {
    const missing = await runCli(['explain', '-f', join(dir, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope.json: cannot read: no such file or directory');
    const noPod = await runCli(['explain', '-f', write('svc.json', { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } })]);
    expect(noPod.code).toBe(2);
    expect(noPod.stderr).toContain('no Pod in it (save one with kubectl get pod NAME -o json > pod.json)');
    const garbage = await runCli(['explain', '-f', write('garbage.json', '{"kind": "Pod"')]);
    expect(garbage.code).toBe(2);
    expect(garbage.stderr).toContain('not JSON or YAML');
    const wrongPod = await runCli(['explain', 'pod/api', '-f', write('crashed2.json', crashed)]);
    expect(wrongPod.code).toBe(2);
    expect(wrongPod.stderr).toContain('no pod api in');
    const badTarget = await runCli(['explain', 'svc/web', '--kubeconfig', join(dir, 'nope')]);
    expect(badTarget.code).toBe(2);
    expect(badTarget.stderr).toContain('is not KIND/NAME with KIND one of pod, deploy, sts, ds, rs, job');
    const badNow = await runCli(['explain', '-f', write('crashed3.json', crashed), '--now', 'yesterday']);
    expect(badNow.code).toBe(2);
    expect(badNow.stderr).toContain('expected an RFC 3339 time');
  });
});

describe('explain and check --cluster without an API server', () => {
  let kubeconfig = '';
  let port = 0;
  beforeAll(async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    port = (s.address() as AddressInfo).port;
    await new Promise<void>((r) => s.close(() => r()));
    kubeconfig = write(
      'kubeconfig',
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: shop}}]
current-context: x
`,
    );
  });

  it('explain pod/NAME: exit 2, the server named and what to check', async () => {
    const run = await runCli(['explain', 'pod/web', '--kubeconfig', kubeconfig]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`cannot reach the API server at https://127.0.0.1:${port}`);
    expect(run.stderr).toContain('is the cluster up? check --kubeconfig or KUBECONFIG');
  });

  it('check --cluster: exit 2 the same way; its flags only with --cluster, no PATH with it', async () => {
    const run = await runCli(['check', '--cluster', '-A', '--kubeconfig', kubeconfig]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('cannot reach the API server');
    const flags = await runCli(['check', 'x.yaml', '-A']);
    expect(flags.code).toBe(2);
    expect(flags.stderr).toContain('-A goes with --cluster');
    const path = await runCli(['check', '--cluster', 'x.yaml']);
    expect(path.code).toBe(2);
    expect(path.stderr).toContain('give no PATH');
  });

  it('a kubeconfig that cannot be read: exit 2', async () => {
    const run = await runCli(['explain', 'pod/web', '--kubeconfig', join(dir, 'none')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('give --kubeconfig FILE or set KUBECONFIG');
  });
});
