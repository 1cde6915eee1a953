import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BIN, runCli, runNode } from './helpers.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('probelet --version', () => {
  it('prints the package version and exits 0, in-process and as the built executable', async () => {
    expect(await runCli(['--version'])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    expect(await runCli(['-V'])).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
    const built = await runNode(BIN, ['--version']);
    expect(built).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });
});
