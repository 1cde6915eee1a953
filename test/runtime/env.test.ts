import { homedir } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/api/types.js';
import {
  KUBELET_DEFAULT_PATH,
  baseEnvironment,
  expandCommandLine,
  podHostname,
  resolveContainerEnv,
} from '../../src/runtime/env.js';
import { containerFieldPath } from '../../src/runtime/input-error.js';

function podWith(container: Container, extra: Partial<Pod['spec']> = {}): Pod {
  return {
    metadata: { name: 'web-0', namespace: 'shop', uid: 'uid-123' },
    spec: { containers: [{ name: 'first', command: ['true'] }, container], ...extra },
  };
}

const CONTEXT = { podIP: '127.0.0.1' };

function resolve(container: Container): Map<string, string> {
  return resolveContainerEnv(podWith(container), container, CONTEXT, 'spec.containers[1]');
}

describe('baseEnvironment', () => {
  it('keeps the host PATH in order and appends the missing kubelet default directories', () => {
    const env = baseEnvironment('web-0', '/opt/node/bin:/usr/bin:/home/me/bin');
    expect(env.PATH).toBe(
      '/opt/node/bin:/usr/bin:/home/me/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/sbin:/bin',
    );
    expect(env.HOME).toBe(homedir());
    expect(env.HOSTNAME).toBe('web-0');
    expect(Object.keys(env)).toEqual(['PATH', 'HOME', 'HOSTNAME']);
  });

  it('falls back to the kubelet default PATH when the host PATH is empty', () => {
    expect(baseEnvironment('x', '').PATH).toBe(KUBELET_DEFAULT_PATH);
  });
});

describe('podHostname', () => {
  it('is the pod name, spec.hostname when set, the node name for hostNetwork pods', () => {
    const container: Container = { name: 'c' };
    expect(podHostname(podWith(container), 'node-a')).toBe('web-0');
    expect(podHostname(podWith(container, { hostname: 'custom' }), 'node-a')).toBe('custom');
    expect(podHostname(podWith(container, { hostNetwork: true }), 'node-a')).toBe('node-a');
  });

  it('is cut to 63 characters like the kubelet does', () => {
    const pod: Pod = { metadata: { name: 'p'.repeat(80) }, spec: { containers: [] } };
    expect(podHostname(pod, 'node')).toBe('p'.repeat(63));
  });
});

describe('resolveContainerEnv', () => {
  it('keeps declaration order and expands against earlier entries only', () => {
    const vars = resolve({
      name: 'c',
      env: [
        { name: 'A', value: 'a' },
        { name: 'B', value: '$(A)-$(C)-$(PATH)-$(HOSTNAME)' },
        { name: 'C', value: 'c' },
        { name: 'D', value: '$$(A) $(A' },
      ],
    });
    expect([...vars]).toEqual([
      ['A', 'a'],
      // C is declared later and PATH/HOSTNAME are runtime variables: all stay verbatim.
      ['B', 'a-$(C)-$(PATH)-$(HOSTNAME)'],
      ['C', 'c'],
      ['D', '$(A) $(A'],
    ]);
  });

  it('lets a later duplicate replace the value seen by entries after it', () => {
    const vars = resolve({
      name: 'c',
      env: [
        { name: 'X', value: 'one' },
        { name: 'Y', value: '$(X)' },
        { name: 'X', value: 'two-$(X)' },
        { name: 'Z', value: '$(X)' },
      ],
    });
    expect(Object.fromEntries(vars)).toEqual({ X: 'two-one', Y: 'one', Z: 'two-one' });
  });

  it('does not expand a substituted value again, and an empty entry is the empty string', () => {
    const vars = resolve({
      name: 'c',
      env: [
        { name: 'A', value: '$(B)' },
        { name: 'B', value: 'x$(A)' },
        { name: 'E' },
      ],
    });
    expect(Object.fromEntries(vars)).toEqual({ A: '$(B)', B: 'x$(B)', E: '' });
  });

  it('resolves the supported fieldRefs from the pod and the sandbox IP', () => {
    const vars = resolve({
      name: 'c',
      env: [
        { name: 'NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace', apiVersion: 'v1' } } },
        { name: 'UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
        { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        { name: 'URL', value: 'http://$(IP)/$(NS)/$(NAME)' },
      ],
    });
    expect(Object.fromEntries(vars)).toEqual({
      NAME: 'web-0',
      NS: 'shop',
      UID: 'uid-123',
      IP: '127.0.0.1',
      URL: 'http://127.0.0.1/shop/web-0',
    });
  });

  it('rejects every other source with the path of the offending field', () => {
    const cases: [Container['env'], string][] = [
      [[{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }], 'valueFrom.fieldRef.fieldPath'],
      [[{ name: 'R', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } }], 'valueFrom.resourceFieldRef'],
      [[{ name: 'C', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } }], 'valueFrom.configMapKeyRef'],
      [[{ name: 'S', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }], 'valueFrom.secretKeyRef'],
    ];
    for (const [env, field] of cases) {
      const container: Container = { name: 'c', env: [{ name: 'OK', value: '1' }, { name: 'OK2' }, ...(env ?? [])] };
      expect(() => resolve(container)).toThrow(
        expect.objectContaining({
          field: `spec.containers[1].env[2].${field}`,
          message: expect.stringMatching(
            new RegExp(`^spec\\.containers\\[1\\]\\.env\\[2\\]\\.${field.replace(/\./g, '\\.')}: not supported by the local runtime: .+`),
          ) as unknown,
        }),
      );
    }
  });

  it('names the unsupported fieldRef path and the supported ones', () => {
    const container: Container = { name: 'c', env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }] };
    expect(() => resolve(container)).toThrow(
      'spec.containers[1].env[0].valueFrom.fieldRef.fieldPath: not supported by the local runtime: "spec.nodeName" ' +
        '(supported: metadata.name, metadata.namespace, metadata.uid, status.podIP)',
    );
  });
});

describe('expandCommandLine', () => {
  it('expands command then args against the resolved env; unknown, runtime and escaped references stay', () => {
    const container: Container = {
      name: 'c',
      command: ['$(BIN)', '--flag=$(A)'],
      args: ['$(A)$(A)', '$(NOPE)', '$$(A)', '$(HOSTNAME)', '$(PATH)', '$(A'],
    };
    const vars = new Map([
      ['BIN', '/bin/echo'],
      ['A', 'x'],
    ]);
    expect(expandCommandLine(container, vars)).toEqual([
      '/bin/echo',
      '--flag=x',
      'xx',
      '$(NOPE)',
      '$(A)',
      '$(HOSTNAME)',
      '$(PATH)',
      '$(A',
    ]);
  });
});

describe('containerFieldPath', () => {
  it('finds regular, init and ephemeral containers by identity, then by name', () => {
    const init: Container = { name: 'init' };
    const app: Container = { name: 'app' };
    const pod: Pod = {
      spec: {
        initContainers: [{ name: 'other' }, init],
        containers: [{ name: 'side' }, app],
        ephemeralContainers: [{ name: 'debug' }],
      },
    };
    expect(containerFieldPath(pod, init)).toBe('spec.initContainers[1]');
    expect(containerFieldPath(pod, app)).toBe('spec.containers[1]');
    expect(containerFieldPath(pod, { name: 'app' })).toBe('spec.containers[1]');
    expect(containerFieldPath(pod, { name: 'debug' })).toBe('spec.ephemeralContainers[0]');
    expect(containerFieldPath(pod, { name: 'ghost' })).toBe('spec.containers{ghost}');
  });
});
