import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BIN, runCli, runNode } from './helpers.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('probelet --version', () => {
  it('prints the package version and exits 0, in-process and as the built executable', async () => {
    expect(await runCli(['--version'])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    expect(await runCli(['-V'])).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
    expect(await runCli(['-v'])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    expect(await runCli(['version'])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    const built = await runNode(BIN, ['--version']);
    expect(built).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });
});

describe('a usage error', () => {
  it('is the error and one line on where help is, not the whole help', async () => {
    expect(await runCli(['run', '-o', 'yaml', 'pod.yaml'])).toEqual({
      code: 2,
      stdout: '',
      stderr: "error: option '-o, --output <format>' argument 'yaml' is invalid. expected one of text, json, table.\n(`probelet run --help` lists its options)\n",
    });
    expect(await runCli(['check', '--nope'])).toMatchObject({ code: 2, stderr: "error: unknown option '--nope'\n(`probelet check --help` lists its options)\n" });
    expect(await runCli(['nope'])).toMatchObject({ code: 2, stderr: expect.stringContaining('(`probelet --help` lists the commands)') as unknown });
  });

  it('--http suggests --http-get (the option it begins), not --help', async () => {
    expect(await runCli(['probe', '--http', 'http://127.0.0.1:1/'])).toMatchObject({
      code: 2,
      stderr: "error: unknown option '--http'\n(Did you mean --http-get?)\n(`probelet probe --help` lists its options)\n",
    });
  });
});
