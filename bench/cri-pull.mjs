#!/usr/bin/env node
/**
 * Pull time of one image from the test registry through probelet's CRI runtime
 * (`CriRuntime.pullImage`: CRI PullImage, which containerd fetches and unpacks, then an
 * ImageStatus) against `ctr images pull` of the same image on the same containerd, in the same
 * run, as a ratio — the baseline measured here, never remembered:
 *
 *   npm run cri:up; eval "$(npm run -s registry:env)"
 *   npm run bench -- --scenario cri-pull [--rounds 3] [--mb 16]
 *
 * The containerd is cri:up's (PROBELET_CRI_ENDPOINT or CONTAINER_RUNTIME_ENDPOINT for another),
 * which trusts the registry's CA through the certs.d that registry:up writes (ctr is pointed
 * at the same one with --hosts-dir). The image is made here so that every pull downloads and
 * unpacks it whole: one layer of `--mb` MiB of random bytes, pushed with skopeo to
 * `$PROBELET_REGISTRY/cri-bench/pull` under a tag of this run. Before each pull every name of
 * the image in containerd is removed (CRI PullImage adds the repo digest and the image ID
 * beside the tag) and its content collected; the two pulls alternate which goes first.
 * Prints one JSON line (the medians, every round, the ratio probelet / ctr) and a sentence.
 * The image leaves containerd at the end (the registry's copy stays until registry:down).
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pullFlags, racePulls, reportPulls } from './lib/pull-race.mjs';

const { rounds: ROUNDS, mb: MB } = pullFlags('cri-pull', 3);
const ENDPOINT = process.env.PROBELET_CRI_ENDPOINT ?? process.env.CONTAINER_RUNTIME_ENDPOINT ?? 'unix:///tmp/probelet-cri/containerd.sock';
const REGISTRY = process.env.PROBELET_REGISTRY;
const SECRET = process.env.PROBELET_REGISTRY_SECRET;
if (!REGISTRY || !SECRET) {
  console.error('cri-pull bench: needs PROBELET_REGISTRY and PROBELET_REGISTRY_SECRET (npm run cri:up; eval "$(npm run -s registry:env)")');
  process.exit(2);
}
/** registry:up's directory: its CA for skopeo (trust/) and containerd's registry config (certs.d/). */
const REGISTRY_DIR = dirname(SECRET);
const SOCKET = ENDPOINT.replace(/^unix:\/\//, '');

const { createCriRuntime } = await import('../dist/runtime/cri/cri-runtime.js');

const ctr = (...args) => execFileSync('ctr', ['--address', SOCKET, '-n', 'k8s.io', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const image = `${REGISTRY}/cri-bench/pull:${randomBytes(4).toString('hex')}`;

/** A docker-archive of one layer of random bytes, pushed once with skopeo. */
function pushImage() {
  const work = mkdtempSync(join(tmpdir(), 'probelet-bench-cri-pull-'));
  try {
    writeFileSync(join(work, 'blob'), randomBytes(MB * 1024 * 1024));
    execFileSync('tar', ['-C', work, '-cf', join(work, 'layer.tar'), 'blob']);
    const layer = createHash('sha256').update(readFileSync(join(work, 'layer.tar'))).digest('hex');
    const config = JSON.stringify({ architecture: process.arch === 'x64' ? 'amd64' : process.arch, os: 'linux', config: {}, rootfs: { type: 'layers', diff_ids: [`sha256:${layer}`] } });
    writeFileSync(join(work, 'config.json'), config);
    writeFileSync(join(work, 'manifest.json'), JSON.stringify([{ Config: 'config.json', RepoTags: [image], Layers: ['layer.tar'] }]));
    execFileSync('tar', ['-C', work, '-cf', join(work, 'image.tar'), 'manifest.json', 'config.json', 'layer.tar']);
    execFileSync('skopeo', ['copy', '-q', '--dest-cert-dir', join(REGISTRY_DIR, 'trust'), `docker-archive:${join(work, 'image.tar')}`, `docker://${image}`], { stdio: ['ignore', 'ignore', 'inherit'] });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Every name containerd has for the image (the tag, and what CRI adds: repo digest, image ID), removed, its content collected. */
function remove() {
  const lines = ctr('images', 'ls').split('\n').slice(1).map((l) => l.split(/\s+/));
  const digest = lines.find(([ref]) => ref === image)?.[2];
  const names = digest === undefined ? [] : lines.filter((l) => l[2] === digest).map(([ref]) => ref);
  if (names.length > 0) ctr('images', 'rm', '--sync', ...names);
}

pushImage();
const runDir = mkdtempSync(join(tmpdir(), 'probelet-bench-cri-pull-run-'));
const runtime = await createCriRuntime({ endpoint: ENDPOINT, runDir, warn: () => undefined });
const pod = { metadata: { name: 'bench', namespace: 'default', uid: 'bench-cri-pull' }, spec: { containers: [] } };

const close = async () => {
  await runtime.close();
  rmSync(runDir, { recursive: true, force: true });
};
const pulls = {
  probelet: () => runtime.pullImage(image, pod),
  baseline: async () => void ctr('images', 'pull', '--hosts-dir', join(REGISTRY_DIR, 'certs.d'), image),
};
const timings = await racePulls(pulls, { rounds: ROUNDS, reset: remove, close });
reportPulls({ scenario: 'cri-pull', baseline: 'ctr', command: 'ctr pull', runtime: runtime.version, registry: REGISTRY, mb: MB, rounds: ROUNDS }, timings);
