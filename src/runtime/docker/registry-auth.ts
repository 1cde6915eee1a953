/**
 * The Engine's `X-Registry-Auth` for a pull: the credentials the kubelet's keyring found for the
 * image in the pod's pull Secrets (kubelet/pull-secrets.ts, the same for every runtime; CRI's
 * `AuthConfig`), with the registry they are for, as dockershim passed them on.
 */
import { registryOf } from '../../api/image-reference.js';
import type { RegistryAuth } from '../types.js';

/** The Engine's AuthConfig (`serveraddress`: the registry host). */
export interface DockerAuthConfig {
  username: string;
  password: string;
  serveraddress: string;
}

/** The pull's auth config; undefined (an anonymous pull) without credentials. */
export function dockerAuthConfig(image: string, auth: RegistryAuth | undefined): DockerAuthConfig | undefined {
  return auth ? { username: auth.username, password: auth.password, serveraddress: registryOf(image) } : undefined;
}
