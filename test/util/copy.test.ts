import { describe, expect, it } from 'vitest';
import { copyPlain } from '../../src/util/copy.js';

describe('copyPlain', () => {
  it('copies nested objects and arrays so that changing the copy leaves the original alone', () => {
    const original = { spec: { containers: [{ name: 'a', ports: [{ containerPort: 80 }] }] }, n: null, ok: true };
    const copy = copyPlain(original);
    expect(copy).toEqual(original);
    copy.spec.containers[0]!.ports[0]!.containerPort = 81;
    copy.spec.containers.push({ name: 'b', ports: [] });
    expect(original.spec.containers).toEqual([{ name: 'a', ports: [{ containerPort: 80 }] }]);
  });

  it('keeps a __proto__ key as a plain property, never as the prototype', () => {
    const decoded = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copy = copyPlain(decoded);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
  });

  it('shares what is not plain data (a Buffer from !!binary) instead of copying it', () => {
    const buffer = Buffer.from('x');
    expect(copyPlain({ b: buffer }).b).toBe(buffer);
  });
});
