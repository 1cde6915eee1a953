/**
 * Go's words, as Go says them: test/fixtures/go/encoding-errors.json holds what Go 1.26 (the
 * toolchain the cluster's Kubernetes is built with) answered for each input (base64 in the
 * file): `json.Unmarshal` into `map[string]interface{}` (the API server's ValidateSecret),
 * into the kubelet's `DockerConfigJSON` and `DockerConfig` (pkg/credentialprovider, its
 * `dockerConfigEntryWithAuth` and `auth` decoding), and `base64.StdEncoding` /
 * `RawStdEncoding.DecodeString`. Every row must come out of probelet word for word ('' for no
 * error).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeDockerConfig, decodeDockerConfigJson } from '../../src/kubelet/docker-config.js';
import { goBase64Decode } from '../../src/util/go-base64.js';
import { unmarshalIntoMapError } from '../../src/util/go-json.js';

interface Row {
  kind: 'map' | 'cfg' | 'dcfg' | 'b64' | 'raw64';
  input: string;
  error: string;
}

const rows = JSON.parse(readFileSync(new URL('../fixtures/go/encoding-errors.json', import.meta.url), 'utf8')) as Row[];

function thrown(work: () => unknown): string {
  try {
    work();
    return '';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

function probeletSays(row: Row): string {
  const bytes = Buffer.from(row.input, 'base64');
  switch (row.kind) {
    case 'map':
      return unmarshalIntoMapError(bytes) ?? '';
    case 'cfg':
      return thrown(() => decodeDockerConfigJson(bytes));
    case 'dcfg':
      return thrown(() => decodeDockerConfig(bytes));
    case 'b64':
    case 'raw64': {
      const decoded = goBase64Decode(bytes.toString('latin1'), row.kind === 'b64');
      return 'error' in decoded ? decoded.error : '';
    }
  }
}

describe("Go's encoding errors, word for word", () => {
  for (const kind of ['map', 'cfg', 'dcfg', 'b64', 'raw64'] as const) {
    it(`${kind}: every input as Go answered it`, () => {
      const mine = rows.filter((r) => r.kind === kind);
      expect(mine.length).toBeGreaterThan(4);
      const said = mine.map((r) => ({ input: Buffer.from(r.input, 'base64').toString('latin1').slice(0, 60), error: probeletSays(r) }));
      expect(said).toEqual(mine.map((r) => ({ input: Buffer.from(r.input, 'base64').toString('latin1').slice(0, 60), error: r.error })));
    });
  }

  it('base64: every input Go decoded decodes to the same bytes (Go drops \\r and \\n, as Node does)', () => {
    const decoded = rows.filter((r) => (r.kind === 'b64' || r.kind === 'raw64') && r.error === '');
    expect(decoded.length).toBeGreaterThan(4);
    for (const r of decoded) {
      const text = Buffer.from(r.input, 'base64').toString('latin1');
      expect(goBase64Decode(text, r.kind === 'b64'), JSON.stringify(text)).toEqual({ bytes: Buffer.from(text.replace(/[\r\n]/g, ''), 'base64') });
    }
  });

  it('base64: what decodes, decodes to the bytes', () => {
    expect(goBase64Decode('QUJD\nRA==')).toEqual({ bytes: Buffer.from('ABCD') });
    expect(goBase64Decode('QUJDRA', false)).toEqual({ bytes: Buffer.from('ABCD') });
    expect(goBase64Decode('')).toEqual({ bytes: Buffer.alloc(0) });
  });

  it('docker config: user and password from the fields or from `auth` (padded or not), field names in any case, a later key winning', () => {
    const config = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
    expect(decodeDockerConfigJson(config({ Auths: { a: { USERNAME: 'u', password: 'p' } }, auths: { b: { auth: 'dTpwOnE' } } }))).toEqual([
      { location: 'a', auth: { username: 'u', password: 'p' } },
      { location: 'b', auth: { username: 'u', password: 'p:q' } },
    ]);
    expect(decodeDockerConfigJson(config({ auths: { a: {} }, AUTHS: null }))).toEqual([]);
    expect(decodeDockerConfig(config({ r: null }))).toEqual([{ location: 'r', auth: { username: '', password: '' } }]);
  });
});
