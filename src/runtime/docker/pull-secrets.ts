/**
 * Registry credentials of a pod, as the kubelet finds them: its `imagePullSecrets`, each a
 * `kubernetes.io/dockerconfigjson` Secret (`.dockerconfigjson`: `{"auths": {"<registry>":
 * {"username", "password", "auth"}}}`) or a legacy `kubernetes.io/dockercfg` one (`.dockercfg`:
 * the `auths` map alone), the first whose registry matches the image's host. There is no API
 * server here: the Secrets are the manifests' own documents (volumes.ts ConfigObjects).
 */
import type { Pod } from '../../api/types.js';
import type { ConfigObjects } from './volumes.js';

export interface RegistryAuth {
  username: string;
  password: string;
  serveraddress: string;
}

/** `127.0.0.1:5000/private/busybox:test` → `127.0.0.1:5000`; Docker Hub for a name without a registry. */
export function registryOf(image: string): string {
  const first = image.split('/')[0] ?? '';
  const isHost = image.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  return isHost ? first : 'docker.io';
}

/** `https://index.docker.io/v1/` and `docker.io` name the same registry; a key may carry a scheme and path. */
function hostOfKey(key: string): string {
  const host = key.replace(/^https?:\/\//, '').split('/')[0] ?? '';
  return host === 'index.docker.io' || host === 'registry-1.docker.io' ? 'docker.io' : host;
}

function decodeAuth(entry: Record<string, unknown>): { username: string; password: string } | undefined {
  if (typeof entry['username'] === 'string' && typeof entry['password'] === 'string') return { username: entry['username'], password: entry['password'] };
  if (typeof entry['auth'] === 'string') {
    const text = Buffer.from(entry['auth'], 'base64').toString('utf8');
    const colon = text.indexOf(':');
    if (colon > 0) return { username: text.slice(0, colon), password: text.slice(colon + 1) };
  }
  return undefined;
}

/** The credentials the pod's pull secrets hold for the image's registry, if any. */
export function pullAuthFor(pod: Pod, image: string, objects: ConfigObjects | undefined): RegistryAuth | undefined {
  const registry = registryOf(image);
  const namespace = pod.metadata?.namespace || 'default';
  for (const ref of pod.spec?.imagePullSecrets ?? []) {
    const files = objects?.secrets.get(`${namespace}/${ref.name ?? ''}`);
    const raw = files?.get('.dockerconfigjson') ?? files?.get('.dockercfg');
    if (!raw) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      continue;
    }
    const record = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
    const auths = files?.has('.dockerconfigjson') ? record['auths'] : record;
    if (!auths || typeof auths !== 'object') continue;
    for (const [key, entry] of Object.entries(auths as Record<string, unknown>)) {
      if (hostOfKey(key) !== registry || !entry || typeof entry !== 'object') continue;
      const auth = decodeAuth(entry as Record<string, unknown>);
      if (auth) return { ...auth, serveraddress: key };
    }
  }
  return undefined;
}
