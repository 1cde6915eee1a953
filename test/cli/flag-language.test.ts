/**
 * One flag language across `probe`, `check`, `simulate` and `run` (docs/commands.md):
 * `-f FILE` beside positional files, `-o text` with `table` as its alias, durations with a
 * bare number as seconds, one `--behaviour`/`--behavior` flag taking a file or a script,
 * `--listen` for addresses with `--ui` a switch, and help wrapped with an example.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';

const DEMO = 'examples/demo/pod.yaml';
const DEPLOYMENT = 'examples/simulate/deployment.yaml';
const dir = mkdtempSync(join(tmpdir(), 'probelet-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('-f FILE everywhere, positional files still accepted', () => {
  it('check and simulate read -f (repeatable) as they read positional files', async () => {
    const positional = await runCli(['check', DEMO, DEPLOYMENT, '-o', 'json', '--fail-on', 'never']);
    const dashF = await runCli(['check', '-f', DEMO, '--filename', DEPLOYMENT, '-o', 'json', '--fail-on', 'never']);
    expect(dashF.code).toBe(0);
    expect(dashF.stdout).toBe(positional.stdout);

    const sim = await runCli(['simulate', '-f', DEPLOYMENT, '-b', 'api=down:40s,up', '--for', '1m', '-o', 'json']);
    const simPositional = await runCli(['simulate', DEPLOYMENT, '-b', 'api=down:40s,up', '--for', '1m', '-o', 'json']);
    expect(sim.code).toBe(0);
    expect(sim.stdout).toBe(simPositional.stdout);
  });

  it('run -f: a missing file named with -f is refused before anything starts', async () => {
    const missing = join(dir, 'nope.yaml');
    const run = await runCli(['run', '-f', missing, '--listen', '127.0.0.1:0']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`probelet: ${missing}: cannot read: no such file or directory`);
    expect(run.stdout).toBe('');
  });
});

describe('-o text is the human format everywhere; table is the same', () => {
  it('simulate and check take text and table alike', async () => {
    const args = ['simulate', DEPLOYMENT, '-b', 'api=down:40s,up', '--for', '1m'];
    const text = await runCli([...args, '-o', 'text']);
    const table = await runCli([...args, '-o', 'table']);
    const byDefault = await runCli(args);
    expect(text.code).toBe(0);
    expect(table.stdout).toBe(text.stdout);
    expect(byDefault.stdout).toBe(text.stdout);

    const check = await runCli(['check', DEPLOYMENT, '-o', 'table', '--fail-on', 'never']);
    expect(check.code).toBe(0);
    expect(check.stdout).toBe((await runCli(['check', DEPLOYMENT, '-o', 'text', '--fail-on', 'never'])).stdout);
  });

  it('probe and run accept both names (a bad format is refused naming them)', async () => {
    const probe = await runCli(['probe', '--tcp', '127.0.0.1:1', '-o', 'yaml']);
    expect(probe.code).toBe(2);
    expect(probe.stderr).toContain('expected one of text, json, table.');
    const run = await runCli(['run', DEMO, '-o', 'yaml']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('expected one of text, json, table.');
  });
});

describe('one --behaviour flag (either spelling) taking a file or a script', () => {
  const file = join(dir, 'behaviour.yaml');
  writeFileSync(file, 'api: down:40s,up\n');
  const args = ['simulate', DEPLOYMENT, '--for', '1m', '-o', 'json'];

  it('-b FILE, --behavior SCRIPT and --behaviour FILE give the same simulation', async () => {
    const script = await runCli([...args, '--behavior', 'api=down:40s,up']);
    const fromFile = await runCli([...args, '-b', file]);
    const british = await runCli([...args, '--behaviour', file]);
    expect(script.code).toBe(0);
    expect(fromFile.stdout).toBe(script.stdout);
    expect(british.stdout).toBe(script.stdout);
  });

  it('a value that is neither a file nor CONTAINER=SCRIPT says both readings', async () => {
    const run = await runCli([...args, '--behavior', join(dir, 'missing-behaviour.yaml')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`probelet: --behaviour ${join(dir, 'missing-behaviour.yaml')}: no such file, and not CONTAINER[.PROBE]=SCRIPT`);
    expect(run.stderr).not.toContain('ENOENT');
  });
});

describe('durations', () => {
  it('probe --timeout takes 2s and refuses a fraction with the reason', async () => {
    const refused = await runCli(['probe', '--tcp', '127.0.0.1:1', '--timeout', '1500ms']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--timeout 1500ms: timeoutSeconds is a whole number of seconds in the Kubernetes API');
    // 127.0.0.1:1 refuses the connection at once: the verdict, not a usage error.
    const taken = await runCli(['probe', '--tcp', '127.0.0.1:1', '--timeout', '2s', '-o', 'json']);
    expect(taken.code).toBe(1);
  });
});

describe('simulate estimates its work and refuses what would take minutes, unless --force', () => {
  it('--for 1y is refused at once with the bound and the fix', async () => {
    const started = Date.now();
    const run = await runCli(['simulate', DEMO, '--for', '8760h']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^probelet: --for 8760h: about [\d,]+ timer firings to simulate .* more than the 10,000,000 that take about a minute\. Give a shorter --for \(at most about \S+ for these pods\), or add --force to run it anyway\n$/);
    expect(run.stdout).toBe('');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('--force passes the bound (what fails next is the next check: an unknown container)', async () => {
    const run = await runCli(['simulate', DEMO, '--for', '8760h', '--force', '-b', 'nosuch=up']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('-b nosuch=up: no container "nosuch"');
    expect(run.stderr).not.toContain('timer firings');
  });

  it('a sweep counts every simulation it makes', async () => {
    const run = await runCli(['simulate', DEMO, '--for', '24h', '-b', 'app=down:30s,up', '--sweep', 'app=1s..1000s/1s']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('a shorter --for or fewer --sweep values');
  });
});

describe('help', () => {
  it.each(['probe', 'check', 'simulate', 'run', 'explain'])('%s --help fits 80 columns and ends with an example', async (command) => {
    const help = await runCli([command, '--help']);
    expect(help.code).toBe(0);
    const wide = help.stdout.split('\n').filter((l) => l.length > 80);
    expect(wide).toEqual([]);
    expect(help.stdout).toMatch(/\nExamples?:\n {2}(?:\S.*\| )?probelet /);
  });

  it('run --help says it takes workloads and standard input', async () => {
    const help = await runCli(['run', '--help']);
    expect(help.stdout).toMatch(/workloads \(Deployment/);
    expect(help.stdout).toContain('- for standard input');
  });
});
