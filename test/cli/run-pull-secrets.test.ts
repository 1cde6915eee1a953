/**
 * `probelet run`'s pull Secrets read again from the files when they change: a Secret edited into
 * one the API server would refuse is no Secret any more (the pull goes on without it, as for a
 * Secret that cannot be had) and its problem is printed once, with the file and line, as the
 * kubelet logs why it could not get a Secret; fixed, it is used again.
 */
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { loadManifests } from '../../src/api/documents.js';
import { manifestSecretGetter } from '../../src/cli/run/pull-secrets.js';

const dir = mkdtempSync(join(tmpdir(), 'probelet-run-pull-secrets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = join(dir, 'secret.yaml');
let version = 0;
function write(config: string): void {
  writeFileSync(file, `apiVersion: v1\nkind: Secret\nmetadata: { name: regcred }\ntype: kubernetes.io/dockerconfigjson\nstringData:\n  .dockerconfigjson: '${config}'\n`);
  // A new modification time each write, so the getter sees the change even within one clock tick.
  version++;
  utimesSync(file, version, version);
}

it('an edit that breaks the Secret: undefined and its problem printed once; fixed, the Secret again', async () => {
  write('{"auths":{}}');
  const warned: string[] = [];
  const get = manifestSecretGetter([file], await loadManifests([file]), (line) => warned.push(line));
  expect((await get('default', 'regcred'))?.type).toBe('kubernetes.io/dockerconfigjson');
  expect(warned).toEqual([]);

  write('{"auths":');
  expect(await get('default', 'regcred')).toBeUndefined();
  expect(await get('default', 'regcred')).toBeUndefined();
  expect(warned).toHaveLength(1);
  expect(warned[0]).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:6:3: document 1: Secret "regcred" is invalid: data\\[\\.dockerconfigjson\\]: Invalid value: "<secret contents redacted>": unexpected end of JSON input; `));

  write('{"auths":{"r":{"username":"u","password":"p"}}}');
  const fixed = await get('default', 'regcred');
  expect(Buffer.from(fixed?.data?.['.dockerconfigjson'] ?? '', 'base64').toString()).toBe('{"auths":{"r":{"username":"u","password":"p"}}}');
  expect(warned).toHaveLength(1);
});

it('a Secret broken after the start but before the first pull: its problem is printed at that pull', async () => {
  write('{"auths":{}}');
  const warned: string[] = [];
  const get = manifestSecretGetter([file], await loadManifests([file]), (line) => warned.push(line));
  write('{"auths":');
  expect(await get('default', 'regcred')).toBeUndefined();
  expect(warned).toHaveLength(1);
  expect(warned[0]).toContain('Secret "regcred" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": unexpected end of JSON input');
});
