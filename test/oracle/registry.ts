/**
 * The test registries of `npm run registry:up` as the oracle's registry scenarios use them:
 * the images on the public and the private instance, the pull Secret registry:up wrote (with
 * its password, or another), and whether a run can use them — the Secret's file is there and
 * the cluster's kubelet runs on a containerd started with the registries' config_path (an
 * older one does not trust their CA, so both agents would not pull from the same registry).
 */
import { existsSync, readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import type { ApiObject } from './scenarios.js';

export const PUBLIC_REGISTRY = process.env.PROBELET_REGISTRY ?? '127.0.0.1:5000';
export const PRIVATE_REGISTRY = process.env.PROBELET_REGISTRY_PRIVATE ?? '127.0.0.1:5001';
export const PUBLIC_IMAGE = `${PUBLIC_REGISTRY}/probelet/busybox:test`;
export const PRIVATE_IMAGE = `${PRIVATE_REGISTRY}/private/busybox:test`;
const SECRET_FILE = process.env.PROBELET_REGISTRY_SECRET ?? '/tmp/probelet-registry/pull-secret.yaml';
/** Where registry-up.sh writes the hosts.toml containerd reads (scripts/registry-instance.sh). */
const HOSTS_DIR = `${process.env.PROBELET_REGISTRY_DIR ?? '/tmp/probelet-registry'}/certs.d`;

/**
 * registry:up's `kubernetes.io/dockerconfigjson` Secret for the private registry, named `name`
 * in `namespace`; with `password`, that password instead of the right one.
 */
export function registrySecret(name: string, namespace: string, password?: string): ApiObject {
  const doc = yaml.load(readFileSync(SECRET_FILE, 'utf8')) as { type: string; data: Record<string, string> };
  let data = doc.data;
  if (password !== undefined) {
    const config = JSON.parse(Buffer.from(data['.dockerconfigjson'] ?? '', 'base64').toString('utf8')) as { auths: Record<string, { username: string }> };
    for (const entry of Object.values(config.auths)) Object.assign(entry, { password, auth: Buffer.from(`${entry.username}:${password}`).toString('base64') });
    data = { '.dockerconfigjson': Buffer.from(JSON.stringify(config)).toString('base64') };
  }
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type: doc.type, data };
}

/** Why the registry scenarios cannot run against the kubelet on containerd `criDir`; undefined when they can. */
export function registryUnavailable(criDir: string): string | undefined {
  if (!existsSync(SECRET_FILE)) return `no test registry (${SECRET_FILE} missing: run \`npm run registry:up\`)`;
  let started = '';
  try {
    started = readFileSync(`${criDir}/config.started.toml`, 'utf8');
  } catch {
    // Started by a cri-up.sh from before the registries' config_path.
  }
  if (!started.includes(`config_path = "${HOSTS_DIR}"`)) {
    return `the cluster's kubelet runs on a containerd (${criDir}) started without the test registries' config_path: it does not trust their CA (a cluster brought up since does)`;
  }
  return undefined;
}
