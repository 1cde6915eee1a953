/**
 * Smoke test of `npm run bench -- --scenario cri-pull` on the built dist/, CI-sized (one round,
 * a 1 MiB layer): one complete JSON line with both pulls timed and their ratio, and nothing
 * of the image left in containerd. The figures depend on the machine and are not checked.
 * Needs cri:up's containerd and registry:up's registries (skipped with the reason without).
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CRI_ENDPOINT, criUnavailable } from '../cri/helpers.js';

const RUN = fileURLToPath(new URL('../../bench/run.mjs', import.meta.url));
const REGISTRY = process.env.PROBELET_REGISTRY ?? '127.0.0.1:5000';
const SECRET = process.env.PROBELET_REGISTRY_SECRET ?? '/tmp/probelet-registry/pull-secret.yaml';

function unavailable(): string | undefined {
  if (!existsSync(fileURLToPath(new URL('../../dist/index.js', import.meta.url)))) return 'dist/ is not built (npm run build)';
  return criUnavailable() ?? (existsSync(SECRET) ? undefined : `no test registry (${SECRET} missing: run \`npm run registry:up\`)`);
}

const reason = unavailable();
const suite = reason === undefined ? describe : describe.skip;

suite(`npm run bench -- --scenario cri-pull${reason === undefined ? '' : ` — skipped: ${reason}`}`, () => {
  it('pulls through the CRI runtime and with ctr from the same containerd, prints one JSON line with the ratio, leaves no image', async () => {
    const env = { ...process.env, PROBELET_REGISTRY: REGISTRY, PROBELET_REGISTRY_SECRET: SECRET, PROBELET_CRI_ENDPOINT: CRI_ENDPOINT };
    const { stdout } = await promisify(execFile)(process.execPath, [RUN, '--scenario', 'cri-pull', '--rounds', '1', '--mb', '1'], { timeout: 120_000, env });
    const line = JSON.parse(stdout.split('\n')[0] ?? '') as Record<string, unknown>;
    expect(Object.keys(line)).toEqual(['scenario', 'runtime', 'registry', 'mb', 'rounds', 'probeletMs', 'ctrMs', 'probeletMedianMs', 'ctrMedianMs', 'ratio']);
    expect(line).toMatchObject({ scenario: 'cri-pull', registry: REGISTRY, mb: 1, rounds: 1 });
    expect(line['runtime']).toMatch(/^containerd /);
    expect(line['probeletMedianMs']).toBeGreaterThan(0);
    expect(line['ctrMedianMs']).toBeGreaterThan(0);
    expect(line['ratio']).toBeGreaterThan(0);
    expect(stdout).toMatch(/median of 1: probelet \d+ ms, ctr pull \d+ ms, ratio \d+\.\d\d\n/);
    const images = execFileSync('ctr', ['--address', CRI_ENDPOINT.replace(/^unix:\/\//, ''), '-n', 'k8s.io', 'images', 'ls', '-q'], { encoding: 'utf8' });
    expect(images).not.toContain('cri-bench/pull');
  }, 150_000);

  it('refuses to run without the registry, exit 2', async () => {
    const env = { ...process.env, PROBELET_REGISTRY: '' };
    const err = await promisify(execFile)(process.execPath, [RUN, '--scenario', 'cri-pull'], { timeout: 30_000, env }).catch((e: { code: number; stderr: string }) => e);
    expect(err).toMatchObject({ code: 2 });
    expect((err as { stderr: string }).stderr).toContain('cri-pull bench: needs PROBELET_REGISTRY and PROBELET_REGISTRY_SECRET');
  });

  it('refuses rounds that are not a whole number, naming the flag, exit 2', async () => {
    const err = await promisify(execFile)(process.execPath, [RUN, '--scenario', 'cri-pull', '--rounds', '2.5'], { timeout: 30_000 }).catch((e: { code: number; stderr: string }) => e);
    expect(err).toMatchObject({ code: 2 });
    expect((err as { stderr: string }).stderr).toContain('cri-pull bench: --rounds "2.5": give a whole number, 1 or more');
  });
});
