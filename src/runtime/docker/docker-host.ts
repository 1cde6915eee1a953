/**
 * Where the Docker Engine API is: `--docker-host`, else `DOCKER_HOST` (as the docker CLI and
 * Podman's docker-compatible service read it), else Docker's default socket. Podman's service
 * is the same API on another socket (`unix:///run/podman/podman.sock`).
 */

/** The docker CLI's default. */
export const DEFAULT_DOCKER_HOST = 'unix:///var/run/docker.sock';

/** How dockerode reaches the daemon. */
export type DockerConnection = { socketPath: string } | { host: string; port: number; protocol: 'http' };

/**
 * `unix:///path`, `/path`, or `tcp://host:port` (plain HTTP: TLS needs DOCKER_CERT_PATH, which
 * probelet does not read) into dockerode's options; anything else throws naming `source`.
 */
export function parseDockerHost(value: string, source: string): DockerConnection {
  const v = value.trim();
  if (v.startsWith('unix://') && v.length > 'unix://'.length) return { socketPath: v.slice('unix://'.length) };
  if (v.startsWith('/')) return { socketPath: v };
  const tcp = /^tcp:\/\/([^:/]+):(\d{1,5})\/?$/.exec(v);
  if (tcp) return { host: tcp[1] ?? '', port: Number(tcp[2]), protocol: 'http' };
  throw new Error(`${source}: expected unix:///path/to/docker.sock or tcp://host:port (e.g. ${DEFAULT_DOCKER_HOST}), got ${JSON.stringify(value)}`);
}

/** The host to use and which setting named it, for messages. */
export function dockerHost(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): { value: string; source: string } {
  if (flag !== undefined) return { value: flag, source: '--docker-host' };
  const fromEnv = env.DOCKER_HOST?.trim();
  if (fromEnv) return { value: fromEnv, source: 'DOCKER_HOST' };
  return { value: DEFAULT_DOCKER_HOST, source: 'the default Docker host' };
}

/** `unix:///…` or `tcp://…` of a connection, for messages. */
export function describeConnection(c: DockerConnection): string {
  return 'socketPath' in c ? `unix://${c.socketPath}` : `tcp://${c.host}:${c.port}`;
}
