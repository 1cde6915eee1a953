/** Where the Docker runtime finds the daemon: --docker-host, else DOCKER_HOST, else Docker's socket; what it accepts; image names and pull credentials. */
import { describe, expect, it } from 'vitest';
import { dockerHost, parseDockerHost } from '../../src/runtime/docker/docker-host.js';
import { withDefaultTag } from '../../src/runtime/docker/docker-runtime.js';
import { registryOf } from '../../src/api/image-reference.js';
import { dockerAuthConfig } from '../../src/runtime/docker/registry-auth.js';

describe('docker host and images', () => {
  it('--docker-host, else DOCKER_HOST, else unix:///var/run/docker.sock; unix, bare paths and tcp parse; others name the setting', () => {
    expect(dockerHost(undefined, {})).toEqual({ value: 'unix:///var/run/docker.sock', source: 'the default Docker host' });
    expect(dockerHost(undefined, { DOCKER_HOST: 'unix:///run/podman/podman.sock' }).value).toBe('unix:///run/podman/podman.sock');
    expect(dockerHost('/x.sock', { DOCKER_HOST: 'unix:///y' })).toEqual({ value: '/x.sock', source: '--docker-host' });
    expect(parseDockerHost('unix:///run/docker.sock', 'x')).toEqual({ socketPath: '/run/docker.sock' });
    expect(parseDockerHost('/run/docker.sock', 'x')).toEqual({ socketPath: '/run/docker.sock' });
    expect(parseDockerHost('tcp://127.0.0.1:2375', 'x')).toEqual({ host: '127.0.0.1', port: 2375, protocol: 'http' });
    expect(() => parseDockerHost('ssh://me@host', 'DOCKER_HOST')).toThrow('DOCKER_HOST: expected unix:///path/to/docker.sock or tcp://host:port');
  });

  it('an image without a tag pulls :latest (the Engine would pull every tag); the keyring credentials go with the registry of the image', () => {
    expect(withDefaultTag('busybox')).toBe('busybox:latest');
    expect(withDefaultTag('127.0.0.1:5000/a/b')).toBe('127.0.0.1:5000/a/b:latest');
    expect(withDefaultTag('127.0.0.1:5000/a/b:1')).toBe('127.0.0.1:5000/a/b:1');
    expect(withDefaultTag('b@sha256:00')).toBe('b@sha256:00');
    expect(registryOf('busybox')).toBe('docker.io');
    expect(registryOf('library/busybox')).toBe('docker.io');
    expect(registryOf('127.0.0.1:5001/private/busybox:test')).toBe('127.0.0.1:5001');
    // The keyring's credentials (kubelet/pull-secrets.ts) go to the Engine for the image's registry.
    expect(dockerAuthConfig('127.0.0.1:5001/private/busybox:test', { username: 'me', password: 'pw' })).toEqual({ username: 'me', password: 'pw', serveraddress: '127.0.0.1:5001' });
    expect(dockerAuthConfig('busybox', { username: 'hub', password: 'h' })).toEqual({ username: 'hub', password: 'h', serveraddress: 'docker.io' });
    expect(dockerAuthConfig('busybox', undefined)).toBeUndefined();
  });
});
