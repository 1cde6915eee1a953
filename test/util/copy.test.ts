import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cloneData, copyPlain, equalData } from '../../src/util/copy.js';

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

describe('cloneData and equalData: structuredClone and isDeepStrictEqual for API data', () => {
  const status = {
    phase: 'Running',
    podIP: undefined,
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00.000Z' }],
    containerStatuses: [{ name: 'app', ready: true, restartCount: 2, state: { running: { startedAt: '2026-01-01T00:00:01.000Z' } }, started: true }],
  };

  it('copies what structuredClone copies, keys in order, undefined values kept, nothing shared', () => {
    const withDate = { ...status, startTime: new Date(5) };
    const copy = cloneData(withDate);
    expect(copy).toStrictEqual(structuredClone(withDate));
    expect(Object.keys(copy)).toEqual(Object.keys(withDate));
    expect('podIP' in copy).toBe(true);
    expect(copy.containerStatuses[0]?.state).not.toBe(withDate.containerStatuses[0]?.state);
    expect(copy.startTime).not.toBe(withDate.startTime);
    expect(copy.startTime.getTime()).toBe(5);
  });

  it.each([
    ['the same status copied', status, structuredClone(status)],
    ['keys in another order', { a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }],
    ['an undefined value against a missing key', { a: 1, b: undefined }, { a: 1 }],
    ['NaN against NaN', { a: Number.NaN }, { a: Number.NaN }],
    ['0 against -0', { a: 0 }, { a: -0 }],
    ['a changed nested value', status, { ...status, containerStatuses: [{ ...status.containerStatuses[0], ready: false }] }],
    ['arrays of other lengths', [1, 2], [1, 2, 3]],
    // eslint-disable-next-line no-sparse-arrays -- the hole is the point
    ['a hole against undefined', [1, , 3], [1, undefined, 3]],
    ['an array against an object', [1], { 0: 1 }],
    ['equal Dates', { t: new Date(1) }, { t: new Date(1) }],
    ['other Dates', { t: new Date(1) }, { t: new Date(2) }],
    ['null against an object', { a: null }, { a: {} }],
    ['a null-prototype object against a plain one', Object.assign(Object.create(null) as object, { a: 1 }), { a: 1 }],
  ])('%s: as isDeepStrictEqual says', (_name, a, b) => {
    expect(equalData(a, b)).toBe(isDeepStrictEqual(a, b));
    expect(equalData(b, a)).toBe(isDeepStrictEqual(b, a));
  });
});
