/**
 * The reader holds what the apiserver holds (issue 33): an object etcd would not store (over
 * 1.5 MiB, a List item or aliases expanded included), annotations over 256 KiB in all,
 * aliases, merge keys and complex keys that expand past the request limit, and invalid UTF-8
 * are each refused in the apiserver's or kubectl's words, before anything is expanded, and the
 * valid document beside each is still processed (exit 2, input problems). Keys named like
 * Object.prototype's members never crash a command nor reach Object.prototype; a Pod without
 * `containers` is refused by `run`, not crashed on.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runCli, runNode } from '../cli/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'probelet-reader-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const GOOD = 'apiVersion: v1\nkind: Pod\nmetadata: {name: good}\nspec: {containers: [{name: app, image: x, command: [sleep, "1"]}]}\n';

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** `simulate` of the file: the problem it reports and that the good pod was still simulated. */
async function simulate(path: string): Promise<{ code: number; stderr: string; simulatedGood: boolean }> {
  const run = await runCli(['simulate', path, '--for', '2s', '-o', 'json']);
  return { code: run.code, stderr: run.stderr, simulatedGood: run.stdout.includes('"good"') };
}

describe('the reader refuses what the apiserver refuses, and reads the rest', () => {
  it('a List item over 1.5 MiB: etcd words, with its item; the item beside it is read', async () => {
    const big = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'big' }, spec: { containers: [{ name: 'app', image: 'x', args: Array.from({ length: 100 }, () => 'y'.repeat(20_000)) }] } });
    const path = file('list.yaml', `apiVersion: v1\nkind: List\nitems:\n- ${big}\n- ${JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'good' }, spec: { containers: [{ name: 'app', image: 'x', command: ['sleep', '1'] }] } })}\n`);
    const got = await simulate(path);
    expect(got.stderr).toContain(`${path}:4:3: document 1, items[0]: etcdserver: request is too large`);
    expect(got.simulatedGood).toBe(true);
    expect(got.code).toBe(2);
  });

  it('annotations over 256 KiB in all: the apiserver field error', async () => {
    const annotations = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`a${i}`, 'x'.repeat(100 * 1024)]));
    const path = file('annotations.yaml', `${JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'noisy', annotations }, spec: { containers: [{ name: 'app', image: 'x' }] } })}\n---\n${GOOD}`);
    const got = await simulate(path);
    expect(got.stderr).toContain('document 1: metadata.annotations: Too long: may not be more than 262144 bytes');
    expect(got.simulatedGood).toBe(true);
    expect(got.code).toBe(2);
  });

  it('a small document whose aliases expand past 1.5 MiB: refused as an object etcd would not store', async () => {
    const repeats = Array.from({ length: 9 }, (_, i) => `  - {name: c${i}, image: x, args: *a}\n`).join('');
    const path = file('aliases.yaml', `apiVersion: v1\nkind: Pod\nmetadata: {name: wide}\nspec:\n  containers:\n  - {name: app, image: x, args: &a ["${'z'.repeat(200_000)}"]}\n${repeats}---\n${GOOD}`);
    const got = await simulate(path);
    expect(got.stderr).toMatch(/aliases\.yaml:1:1: document 1: etcdserver: request is too large/);
    expect(got.simulatedGood).toBe(true);
  });

  for (const [name, text] of [
    // `<<:` copies keys: each level twice the last, 2^30 keys at the end.
    [
      'merge keys',
      `a0: &a0 {${Array.from({ length: 50 }, (_, i) => `k${i}: "${'v'.repeat(100)}"`).join(', ')}}\n${Array.from({ length: 30 }, (_, i) => `a${i + 1}: &a${i + 1} {<<: [*a${i}], x${i}: [*a${i}, *a${i}]}`).join('\n')}\n`,
    ],
    // A complex key made of aliases is joined into one string of 300 MB.
    ['complex keys', `s: &s "${'x'.repeat(100_000)}"\n? [${Array.from({ length: 3000 }, () => '*s').join(', ')}]\n: v\n`],
  ] as const) {
    it(`${name} that expand past the request limit: refused while read (memory stays low), the good document read`, async () => {
      const path = file(`${name.replace(' ', '-')}.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n${text.trimEnd().replace(/^/gm, '  ')}\n---\n${GOOD}`);
      const before = process.memoryUsage().rss;
      const got = await simulate(path);
      expect(process.memoryUsage().rss - before).toBeLessThan(200 * 2 ** 20);
      expect(got.stderr).toMatch(/:\d+:\d+: document 1: the document expands to more than \d+ bytes through aliases \(an alias bomb, merge keys or complex keys included\); kubectl refuses it as excessive aliasing/);
      expect(got.simulatedGood).toBe(true);
      expect(got.code).toBe(2);
    });
  }

  it('invalid UTF-8 (an overlong encoding): go-yaml words with the line, exit 2, the other document read', async () => {
    const path = file('utf8.yaml', Buffer.concat([Buffer.from('apiVersion: v1\nkind: Pod\nmetadata: {name: "u'), Buffer.from([0xc0, 0xaf]), Buffer.from(`"}\nspec: {containers: [{name: app, image: x}]}\n---\n${GOOD}`)]));
    const got = await simulate(path);
    expect(got.stderr).toContain(`${path}:3: document 1: yaml: invalid length of a UTF-8 sequence`);
    expect(got.simulatedGood).toBe(true);
    expect(got.code).toBe(2);
    const check = await runCli(['check', path]);
    expect(check.code).toBe(2);
  });
});

describe('keys named like Object.prototype members', () => {
  const KEYS = ['__proto__', 'hasOwnProperty', 'toString', 'constructor', 'valueOf', 'isPrototypeOf'];
  const docs = KEYS.flatMap((key, i) =>
    ['metadata', 'spec', 'container', 'probe', 'top'].map((where) => {
      const container: Record<string, unknown> = { name: 'app', image: 'x', command: ['sleep', '1'], livenessProbe: { exec: { command: ['true'] } } };
      const spec: Record<string, unknown> = { containers: [container] };
      const metadata: Record<string, unknown> = { name: `p${i}-${where}`, labels: { [key]: 'x' } };
      const pod: Record<string, unknown> = { apiVersion: 'v1', kind: 'Pod', metadata, spec };
      const target = { metadata, spec, container, probe: container['livenessProbe'], top: pod }[where] as Record<string, unknown>;
      // As YAML text: an object literal with `__proto__` would set the prototype instead.
      return JSON.stringify(pod).replace(JSON.stringify(target).slice(0, -1), `${JSON.stringify(target).slice(0, -1)},"${key}":{"polluted":"yes"}`);
    }),
  );
  const kindDoc = 'apiVersion: v1\nkind: toString\nmetadata: {name: k}\n';

  it('crash no command, reach no prototype, and every other document is processed', async () => {
    const path = file('proto.yaml', `${[...docs, kindDoc].join('\n---\n')}\n---\n${GOOD}`);
    const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
    for (const args of [['check', path], ['simulate', path, '--for', '2s', '-o', 'json']]) {
      const run = await runCli(args);
      expect(run.stderr, args[0]).not.toMatch(/Cannot read|TypeError|could not check/);
      expect(run.stdout, args[0]).toContain('good');
    }
    // Strict decoding refuses the unknown field (exit 2, named), as the API server does; the
    // label key alone is no field, so that pod is probed.
    const probe = await runCli(['probe', '-f', path, '--pod', 'p2-container', '--type', 'liveness']);
    expect(probe.stderr).not.toMatch(/Cannot read|TypeError/);
    expect(probe.stderr).toMatch(/unknown field "toString"/);
    expect(probe.code).toBe(2);
    const labelOnly = file('label.yaml', `apiVersion: v1\nkind: Pod\nmetadata: {name: l, labels: {toString: v1, __proto__: v2}}\nspec:\n  containers:\n  - {name: app, image: x, command: [sleep, '1'], livenessProbe: {exec: {command: ['true']}}}\n`);
    const labelled = await runCli(['probe', '-f', labelOnly, '--type', 'liveness']);
    expect(labelled.stderr).not.toMatch(/Cannot read|TypeError/);
    expect(labelled.code).toBe(0);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
    // `kind: toString` is a kind without a pod template, passed over like a ConfigMap.
    expect((await runCli(['check', file('kind.yaml', `${kindDoc}---\n${GOOD}`)])).stderr).not.toContain('no matches for kind');
  });

  it('a Pod without `containers` (a `container:` typo) is refused by run, which runs the good pod beside it', async () => {
    const path = file('typo.yaml', `apiVersion: v1\nkind: Pod\nmetadata: {name: typo}\nspec: {container: [{name: app, image: x}]}\n---\n${GOOD}`);
    const run = await runNode(BIN, ['run', path, '--listen', '127.0.0.1:0', '--timeout', '2s', '-o', 'json'], { killAfterMs: 20_000 });
    expect(run.stderr).not.toContain('is not iterable');
    // Strict decoding names the typo first (the API server refuses an unknown field before validating).
    expect(run.stderr).toMatch(/unknown field "container".*did you mean "containers"/);
    expect(run.stdout).toContain('"good"');
    expect(run.code).toBe(2);
  }, 30_000);
});
