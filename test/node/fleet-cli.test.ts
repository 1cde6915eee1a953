/**
 * `probelet node --fleet`, `--shard` and `--lean-writes`' bad input, without a cluster: exit 2, every problem
 * of the fleet file named by file:line and field, before anything starts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'probelet-fleet-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function node(args: string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const code = await main(['node', ...args], { stdout: () => undefined, stderr: (t) => void (err += t) });
  return { code, err };
}

describe('probelet node --fleet / --shard: bad input', () => {
  it('a bad fleet file: exit 2, each problem with its line, then the fix', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'apiVersion: probelet.dev/v1alpha1\nkind: Fleet\npools:\n- {name: a, count: 2}\nbehaviours:\n- match: {image: "x/*"}\n  script: down:20s\n  scrip: up\n');
    const { code, err } = await node(['--runtime', 'simulated', '--fleet', file]);
    expect(code).toBe(2);
    expect(err).toBe(
      `probelet: ${file}:8: behaviours[0].scrip: unknown key: did you mean "script"? (known: match, script, probes)\n` +
        `probelet: fix the fleet file above (docs/node.md#fleet-files)\n`,
    );
    const missing = await node(['--runtime', 'simulated', '--fleet', join(dir, 'none.yaml')]);
    expect(missing).toEqual({ code: 2, err: `probelet: ${join(dir, 'none.yaml')}: cannot read: no such file or directory\nprobelet: fix the fleet file above (docs/node.md#fleet-files)\n` });
  });

  it('--fleet without --runtime simulated or with --nodes; --shard out of range, without a fleet, or holding no node', async () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, 'apiVersion: probelet.dev/v1alpha1\nkind: Fleet\npools:\n- {name: a, count: 2}\n');
    expect(await node(['--fleet', file])).toEqual({ code: 2, err: 'probelet: --fleet needs --runtime simulated (a fleet file describes simulated nodes)\n' });
    expect(await node(['--runtime', 'simulated', '--fleet', file, '--nodes', '2'])).toEqual({
      code: 2,
      err: 'probelet: --fleet: not with --nodes or --name (the fleet file names its nodes <pool>-<i>)\n',
    });
    expect((await node(['--runtime', 'simulated', '--fleet', file, '--shard', '3/2'])).err).toBe(
      'probelet: --shard "3/2": expected I/N with 1 ≤ I ≤ N, e.g. 2/4 (the second of four processes holding one fleet)\n',
    );
    expect((await node(['--runtime', 'simulated', '--shard', '1/2'])).err).toBe('probelet: --shard needs --nodes or --fleet (one node cannot be split)\n');
    expect((await node(['--runtime', 'simulated', '--fleet', file, '--shard', '3/3'])).err).toBe(
      'probelet: --shard 3/3: the fleet has 2 node(s), so slice 3 holds none: use at most 2 slices\n',
    );
  });

  it('--lean-writes only with --runtime simulated (a real node writes what the kubelet writes)', async () => {
    expect(await node(['--lean-writes'])).toEqual({ code: 2, err: 'probelet: --lean-writes needs --runtime simulated (a real node writes what the kubelet writes)\n' });
    expect(await node(['--runtime', 'cri', '--lean-writes'])).toMatchObject({ code: 2 });
  });
});
