/**
 * An image reference's parts as the kubelet reads them (`parsers.ParseImageName`): the
 * repository its credentials are looked up for, and the registry host that serves it.
 */

/**
 * The repository the kubelet looks credentials up for (`parsers.ParseImageName`): tag and
 * digest dropped, Docker Hub's names completed (`busybox` → `docker.io/library/busybox`).
 */
export function repositoryOf(image: string): string {
  let name = image;
  const at = name.indexOf('@');
  if (at >= 0) name = name.slice(0, at);
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  if (colon > slash) name = name.slice(0, colon);
  const first = name.split('/')[0] ?? '';
  const hasHost = name.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (hasHost) return name;
  return name.includes('/') ? `docker.io/${name}` : `docker.io/library/${name}`;
}

/** The registry host of an image: `127.0.0.1:5000/private/busybox:test` → `127.0.0.1:5000`; `docker.io` for Docker Hub's. */
export function registryOf(image: string): string {
  return repositoryOf(image).split('/')[0] ?? '';
}
