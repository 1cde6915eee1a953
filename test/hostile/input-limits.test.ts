/**
 * Inputs that never end or cannot be used (issue 21): `/dev/zero` as a manifest is refused
 * at the documented total input limit (256 MiB, beside 3 MiB a document) with a clear
 * message instead of `Invalid string length`, and the other inputs are still read; and
 * `--log-dir` under a directory that takes no new entries (`/proc/1/nope`, where Node's
 * recursive mkdir loops forever) is refused at once, naming the flag.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_INPUT_BYTES } from '../../src/api/documents.js';
import { BIN, runCli, runNode } from '../cli/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'probelet-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const good = join(dir, 'good.yaml');
writeFileSync(good, 'apiVersion: v1\nkind: Pod\nmetadata: {name: good}\nspec: {containers: [{name: app, image: x, command: [sleep, "60"]}]}\n');

const LIMIT = /not read: more than 256 MiB of input in all, the most probelet reads at once \(3 MiB a document\): split the input over several runs/;

describe('input limits', () => {
  it('the limit is 256 MiB in all', () => {
    expect(MAX_INPUT_BYTES).toBe(256 * 2 ** 20);
  });

  it('check /dev/zero: refused at the limit, with its name; the file beside it is still checked (exit 2)', async () => {
    const run = await runCli(['check', '/dev/zero', good]);
    expect(run.stderr).toMatch(new RegExp(`/dev/zero: ${LIMIT.source}`));
    expect(run.stderr).not.toMatch(/Invalid string length|RangeError/);
    expect(run.stdout).toMatch(/Pod good/);
    expect(run.code).toBe(2);
  }, 60_000);

  it('check - with /dev/zero on stdin: refused at the limit', async () => {
    const zero = openSync('/dev/zero', 'r');
    const child = spawn(process.execPath, [BIN, 'check', '-'], { stdio: [zero, 'pipe', 'pipe'] });
    closeSync(zero);
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout?.resume();
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    clearTimeout(killer);
    expect(stderr).toMatch(new RegExp(`<stdin>: ${LIMIT.source}`));
    expect(code).toBe(2);
  }, 60_000);

  it('run --log-dir /proc/1/nope: refused at once, naming the flag (exit 2); it hung', async () => {
    const run = await runNode(BIN, ['run', good, '--log-dir', '/proc/1/nope', '--listen', '127.0.0.1:0'], { killAfterMs: 15_000 });
    expect(run.signal).toBeNull();
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^probelet: --log-dir \/proc\/1\/nope: ENOENT: no such file or directory, mkdir '\/proc\/1\/nope'/m);
  }, 30_000);
});
