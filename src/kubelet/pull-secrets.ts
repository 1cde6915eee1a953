/**
 * The kubelet's registry credentials for a pull (upstream `getPullSecretsForPod` in
 * kubelet_pods.go, and the keyring of pkg/credentialprovider that `EnsureImageExists` builds
 * from those Secrets): each of the pod's `imagePullSecrets` is fetched — from the API on a
 * node, from the manifests' own documents under `run` — and every
 * `kubernetes.io/dockerconfigjson` (`.dockerconfigjson`: `{"auths": {KEY: ENTRY}}`) or legacy
 * `kubernetes.io/dockercfg` (`.dockercfg`: `{KEY: ENTRY}`) entry whose key matches the image's
 * repository gives one set of credentials. The kubelet tries them in the keyring's order
 * (keys in reverse lexical order: a longer, more specific path first) until one pull works.
 */
import { DOCKER_CONFIG_JSON_TYPE, dockerConfigKey } from '../api/secret-validation.js';
import { repositoryOf } from '../api/image-reference.js';
import type { Pod } from '../api/types.js';
import type { RegistryAuth } from '../runtime/types.js';
import { decodeDockerConfig, decodeDockerConfigJson } from './docker-config.js';

/** A Secret as the keyring reads it: its type and its `data` (base64, as the API serves it). */
export interface PullSecret {
  type?: string;
  data?: Record<string, string>;
}

/**
 * Fetches a Secret of a namespace: undefined when it does not exist; rejects when it could not
 * be read. The kubelet's secret manager on a node; the manifests' Secrets under `run`.
 */
export type SecretGetter = (namespace: string, name: string) => Promise<PullSecret | undefined>;

/** The event `getPullSecretsForPod` records when a pull secret cannot be had. */
export const FAILED_TO_RETRIEVE_PULL_SECRET = 'FailedToRetrieveImagePullSecret';

/**
 * `getPullSecretsForPod`: the pod's pull Secrets that could be fetched, and the names of those
 * that could not (missing or unreadable: the kubelet goes on without them and says so in one
 * Warning event, `failedMessage`). Entries without a name are skipped, as upstream does.
 */
export async function pullSecretsForPod(pod: Pod, getSecret: SecretGetter | undefined): Promise<{ secrets: PullSecret[]; failed: string[] }> {
  const refs = (pod.spec?.imagePullSecrets ?? []).map((r) => r.name ?? '').filter((n) => n !== '');
  if (refs.length === 0) return { secrets: [], failed: [] };
  const namespace = pod.metadata?.namespace || 'default';
  const secrets: PullSecret[] = [];
  const failed: string[] = [];
  for (const name of refs) {
    const secret = getSecret ? await getSecret(namespace, name).catch(() => undefined) : undefined;
    if (secret) secrets.push(secret);
    else failed.push(name);
  }
  return { secrets, failed };
}

/** kubelet_pods.go's words for pull secrets it could not fetch. */
export function failedPullSecretsMessage(failed: readonly string[]): string {
  return `Unable to retrieve some image pull secrets (${failed.join(', ')}); attempting to pull the image may not succeed.`;
}

/** One keyring entry: the normalized key (`host[/path]`) and its credentials. */
interface KeyringEntry {
  key: string;
  auth: RegistryAuth;
}

/**
 * The credentials the Secrets hold for `image`, in the order the kubelet tries them (empty:
 * pull anonymously). Secrets of another type, or without their key, give none. A docker config
 * that does not decode throws json.Unmarshal's error, whatever image it was for: the kubelet's
 * `MakeDockerKeyring` fails and so does the container's start (never an anonymous pull).
 */
export function lookupPullCredentials(secrets: readonly PullSecret[], image: string): RegistryAuth[] {
  const entries: KeyringEntry[] = [];
  for (const secret of secrets) entries.push(...keyringEntries(secret));
  const keys = [...new Set(entries.map((e) => e.key))].sort().reverse();
  const repo = repositoryOf(image);
  const found: RegistryAuth[] = [];
  for (const key of keys) {
    if (keyMatches(key, repo)) for (const e of entries) if (e.key === key) found.push(e.auth);
  }
  if (found.length === 0 && isDefaultRegistry(repo)) {
    for (const e of entries) if (e.key === DEFAULT_REGISTRY_HOST) found.push(e.auth);
  }
  return found;
}

/** `secretsToTrackedDockerConfigs` for one Secret: only its type's key counts, and only when not empty. */
function keyringEntries(secret: PullSecret): KeyringEntry[] {
  const key = dockerConfigKey(secret.type);
  const config = key === undefined ? undefined : secret.data?.[key];
  if (!config) return [];
  // `data` as the API serves it: base64, which the API server decoded before storing.
  const bytes = Buffer.from(config, 'base64');
  if (bytes.length === 0) return [];
  const decoded = secret.type === DOCKER_CONFIG_JSON_TYPE ? decodeDockerConfigJson(bytes) : decodeDockerConfig(bytes);
  const out: KeyringEntry[] = [];
  for (const { location, auth } of decoded) {
    const key = keyOf(location);
    if (key !== undefined) out.push({ key, auth });
  }
  return out;
}

/** BasicDockerKeyring.Add's key: the location without scheme, `/v1/`/`/v2/` or a bare `/` path. */
function keyOf(location: string): string | undefined {
  const withScheme = /^https?:\/\//.test(location) ? location : `https://${location}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return undefined;
  }
  let path = decodeURIComponent(url.pathname);
  if (path.startsWith('/v2/') || path.startsWith('/v1/')) path = path.slice(3);
  return path !== '' && path !== '/' ? `${url.host}${path}` : url.host;
}

const DEFAULT_REGISTRY_HOST = 'index.docker.io';

/** `isDefaultRegistryMatch`: an image of Docker Hub, for the `index.docker.io` key. */
function isDefaultRegistry(repo: string): boolean {
  const [host = '', rest] = splitOnce(repo, '/');
  if (host === '') return false;
  if (rest === undefined) return true;
  return host === 'docker.io' || host === 'index.docker.io' || !/[.:]/.test(host);
}

/** `URLsMatchStr(key, repo)`: same port, as many host labels each matching its glob, the key's path a prefix of the repo's. */
function keyMatches(key: string, repo: string): boolean {
  const [keyHost = '', keyPath = ''] = splitOnce(key, '/');
  const [repoHost = '', repoPath = ''] = splitOnce(repo, '/');
  const [keyName, keyPort] = splitPort(keyHost);
  const [repoName, repoPort] = splitPort(repoHost);
  if (keyPort !== repoPort) return false;
  const keyLabels = keyName.split('.');
  const repoLabels = repoName.split('.');
  if (keyLabels.length !== repoLabels.length) return false;
  if (!`/${repoPath}`.startsWith(keyPath === '' ? '/' : `/${keyPath}`)) return false;
  return keyLabels.every((label, i) => globMatch(label, repoLabels[i] ?? ''));
}

function splitOnce(text: string, sep: string): [string, string | undefined] {
  const i = text.indexOf(sep);
  return i < 0 ? [text, undefined] : [text.slice(0, i), text.slice(i + 1)];
}

function splitPort(host: string): [string, string] {
  const m = /^(.*):(\d+)$/.exec(host);
  return m ? [m[1] ?? '', m[2] ?? ''] : [host, ''];
}

/**
 * `filepath.Match` on one host label (`*` any run of characters, `?` one), by the greedy
 * wildcard walk: linear in practice, never a regex built from user input.
 */
function globMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    if (p < pattern.length && (pattern[p] === '?' || pattern[p] === text[t])) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}
