/**
 * The Engine's `X-Registry-Auth` for a pull: the credentials the kubelet's keyring found for the
 * image in the pod's pull Secrets (kubelet/pull-secrets.ts, the same for every runtime; CRI's
 * `AuthConfig`), with the registry they are for, as dockershim passed them on.
 */
import type { RegistryAuth } from '../types.js';

/** The Engine's AuthConfig (`serveraddress`: the registry host). */
export interface DockerAuthConfig {
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

/** The pull's auth config; undefined (an anonymous pull) without credentials. */
export function dockerAuthConfig(image: string, auth: RegistryAuth | undefined): DockerAuthConfig | undefined {
  return auth ? { username: auth.username, password: auth.password, serveraddress: registryOf(image) } : undefined;
}
