#!/usr/bin/env node
/**
 * Pull time of one image from the test registry through probelet's Docker runtime
 * (`DockerRuntime.pullImage`: the Engine's pull API, its progress stream followed to the end,
 * then an image inspect) against `docker pull` of the same image on the same daemon, in the
 * same run, as a ratio — the baseline measured here, never remembered:
 *
 *   eval "$(npm run -s docker:up)"; eval "$(npm run -s registry:env)"
 *   npm run bench -- --scenario docker-pull [--rounds 5] [--mb 16]
 *
 * The image is made here so that every pull downloads and extracts it whole: one layer of
 * `--mb` MiB of random bytes (`docker import`), pushed to `$PROBELET_REGISTRY/docker-bench/pull`
 * under a tag of this run. (The registry's `probelet/busybox:test` shares its layers with the
 * daemon's `probelet.local/busybox:test`, which the tests need: a pull of it would download
 * nothing.) Before each pull the image is removed from the daemon; the two pulls alternate
 * which goes first. Prints one JSON line (the medians, every round, the ratio probelet /
 * docker) and a sentence. The tag is removed from the daemon at the end (the registry's copy
 * stays until registry:down).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pullFlags, racePulls, reportPulls } from './lib/pull-race.mjs';

const { rounds: ROUNDS, mb: MB } = pullFlags('docker-pull', 5);
const HOST = process.env.DOCKER_HOST;
const REGISTRY = process.env.PROBELET_REGISTRY;
if (!HOST || !REGISTRY) {
  console.error('docker-pull bench: needs DOCKER_HOST and PROBELET_REGISTRY (eval "$(npm run -s docker:up)"; eval "$(npm run -s registry:env)")');
  process.exit(2);
}

const { createDockerRuntime } = await import('../dist/runtime/docker/docker-runtime.js');
const { parseDockerHost } = await import('../dist/runtime/docker/docker-host.js');

const docker = (...args) => execFileSync('docker', ['-H', HOST, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const image = `${REGISTRY}/docker-bench/pull:${randomBytes(4).toString('hex')}`;

// The image: one layer of random bytes, pushed once.
const work = mkdtempSync(join(tmpdir(), 'probelet-bench-pull-'));
try {
  writeFileSync(join(work, 'blob'), randomBytes(MB * 1024 * 1024));
  execFileSync('tar', ['-C', work, '-cf', join(work, 'layer.tar'), 'blob']);
  docker('import', join(work, 'layer.tar'), image);
  docker('push', '-q', image);
} finally {
  rmSync(work, { recursive: true, force: true });
}

const runDir = mkdtempSync(join(tmpdir(), 'probelet-bench-pull-run-'));
const runtime = await createDockerRuntime({ connection: parseDockerHost(HOST, 'DOCKER_HOST'), runDir, warn: () => undefined });
const pod = { metadata: { name: 'bench', namespace: 'default', uid: 'bench' }, spec: { containers: [] } };
const remove = () => docker('rmi', '-f', image);

const close = async () => {
  await runtime.close();
  rmSync(runDir, { recursive: true, force: true });
};
const pulls = { probelet: () => runtime.pullImage(image, pod), baseline: async () => void docker('pull', '-q', image) };
const timings = await racePulls(pulls, { rounds: ROUNDS, reset: remove, close });
reportPulls({ scenario: 'docker-pull', baseline: 'docker', command: 'docker pull', runtime: runtime.version, registry: REGISTRY, mb: MB, rounds: ROUNDS }, timings);
