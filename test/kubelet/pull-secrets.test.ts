/**
 * The kubelet's keyring over pull Secrets (pkg/credentialprovider keyring.go): which entries of
 * `kubernetes.io/dockerconfigjson` and `kubernetes.io/dockercfg` Secrets match an image's
 * repository (host and port exact or globbed per label, the key's path a prefix), in which
 * order, the `auth` field decoded, and Secrets of another type ignored.
 */
import { describe, expect, it } from 'vitest';
import { repositoryOf } from '../../src/api/image-reference.js';
import { lookupPullCredentials, pullSecretsForPod, type PullSecret } from '../../src/kubelet/pull-secrets.js';

const b64 = (text: string): string => Buffer.from(text).toString('base64');

function configJson(auths: Record<string, Record<string, string>>): PullSecret {
  return { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) } };
}

describe('pull secrets: the keyring', () => {
  it('repositoryOf: tag and digest dropped, Docker Hub names completed', () => {
    expect(repositoryOf('127.0.0.1:5001/private/busybox:test')).toBe('127.0.0.1:5001/private/busybox');
    expect(repositoryOf('busybox')).toBe('docker.io/library/busybox');
    expect(repositoryOf('me/app:1@sha256:abc')).toBe('docker.io/me/app');
    expect(repositoryOf('localhost/app')).toBe('localhost/app');
  });

  it('matches host and port exactly, a key path as a prefix, and host labels by glob', () => {
    const secret = configJson({
      '127.0.0.1:5001': { username: 'a', password: '1' },
      'https://127.0.0.1:5001/v2/private': { username: 'b', password: '2' },
      '127.0.0.1:5000': { username: 'c', password: '3' },
      '*.example.com': { username: 'd', password: '4' },
    });
    expect(lookupPullCredentials([secret], '127.0.0.1:5001/private/busybox:test')).toEqual([
      { username: 'b', password: '2' },
      { username: 'a', password: '1' },
    ]);
    expect(lookupPullCredentials([secret], '127.0.0.1:5001/public/x')).toEqual([{ username: 'a', password: '1' }]);
    expect(lookupPullCredentials([secret], 'reg.example.com/x:1')).toEqual([{ username: 'd', password: '4' }]);
    expect(lookupPullCredentials([secret], 'a.reg.example.com/x:1')).toEqual([]);
    expect(lookupPullCredentials([secret], '127.0.0.1/x')).toEqual([]);
  });

  it('`auth` (base64 user:password) is decoded; the legacy dockercfg works; other types give nothing; a config that does not decode throws Go\'s error', () => {
    const withAuth = configJson({ 'reg.io': { auth: b64('u:p:q') } });
    expect(lookupPullCredentials([withAuth], 'reg.io/x')).toEqual([{ username: 'u', password: 'p:q' }]);
    const legacy: PullSecret = { type: 'kubernetes.io/dockercfg', data: { '.dockercfg': b64(JSON.stringify({ 'reg.io': { username: 'l', password: 'm' } })) } };
    expect(lookupPullCredentials([legacy], 'reg.io/x')).toEqual([{ username: 'l', password: 'm' }]);
    const opaque: PullSecret = { type: 'Opaque', data: withAuth.data ?? {} };
    expect(lookupPullCredentials([opaque], 'reg.io/x')).toEqual([]);
    const broken: PullSecret = { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{not json') } };
    // MakeDockerKeyring fails for any image, not only the registry the bad Secret was for.
    expect(() => lookupPullCredentials([withAuth, broken], 'reg.io/x')).toThrow("invalid character 'n' looking for beginning of object key string");
    const noColon = configJson({ 'reg.io': { auth: b64('user') } });
    expect(() => lookupPullCredentials([noColon], 'other.io/x')).toThrow('unable to parse auth field, must be formatted as base64(username:password)');
    // An empty config is no config (upstream skips it), and a Secret of the type without its key too.
    expect(lookupPullCredentials([{ type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': '' } }, { type: 'kubernetes.io/dockercfg', data: {} }], 'reg.io/x')).toEqual([]);
  });

  it('Docker Hub: index.docker.io/v1/ serves images without a registry host', () => {
    const hub = configJson({ 'https://index.docker.io/v1/': { username: 'h', password: 'k' } });
    expect(lookupPullCredentials([hub], 'busybox:1.36')).toEqual([{ username: 'h', password: 'k' }]);
    expect(lookupPullCredentials([hub], 'quay.io/x')).toEqual([]);
  });

  it('pullSecretsForPod: fetched in the pod namespace, failures named, empty names skipped', async () => {
    const pod = { metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [], imagePullSecrets: [{ name: 'ok' }, { name: '' }, { name: 'gone' }, { name: 'broken' }] } };
    const got = await pullSecretsForPod(pod, (ns, name) => {
      if (name === 'broken') return Promise.reject(new Error('forbidden'));
      return Promise.resolve(name === 'ok' && ns === 'ns' ? configJson({}) : undefined);
    });
    expect(got.secrets).toHaveLength(1);
    expect(got.failed).toEqual(['gone', 'broken']);
  });
});
