import { describe, expect, it } from 'vitest';
import type { Container } from '../../src/api/types.js';
import { findPortByName, resolveContainerPort } from '../../src/probe/port.js';

const fooBar: Container = {
  name: 'c',
  ports: [
    { name: 'foo', containerPort: 8080 },
    { name: 'bar', containerPort: 9000 },
  ],
};
const barOnly: Container = { name: 'c', ports: [{ name: 'bar', containerPort: 9000 }] };
const noPorts: Container = { name: 'c' };

describe('findPortByName (T34)', () => {
  it('finds an existing name', () => {
    expect(findPortByName(fooBar, 'foo')).toBe(8080);
    expect(findPortByName(fooBar, 'bar')).toBe(9000);
  });

  it('throws for an unknown name', () => {
    expect(() => findPortByName(fooBar, 'http')).toThrow('port http not found');
    expect(() => findPortByName(noPorts, 'http')).toThrow('port http not found');
  });
});

describe('resolveContainerPort (T35)', () => {
  it('uses an int port as is', () => {
    expect(resolveContainerPort(443, noPorts)).toBe(443);
    expect(resolveContainerPort(1, noPorts)).toBe(1);
    expect(resolveContainerPort(65535, noPorts)).toBe(65535);
  });

  it('rejects ints outside 1..65535', () => {
    expect(() => resolveContainerPort(66666, noPorts)).toThrow(/^invalid port number: 66666$/);
    expect(() => resolveContainerPort(65536, noPorts)).toThrow(/^invalid port number: 65536$/);
    expect(() => resolveContainerPort(0, noPorts)).toThrow(/^invalid port number: 0$/);
    expect(() => resolveContainerPort(-1, noPorts)).toThrow(/^invalid port number: -1$/);
  });

  it('resolves a name against the container ports', () => {
    expect(resolveContainerPort('foo', fooBar)).toBe(8080);
    expect(resolveContainerPort('bar', barOnly)).toBe(9000);
  });

  it('falls back to a number written as a string', () => {
    expect(resolveContainerPort('8080', noPorts)).toBe(8080);
    expect(resolveContainerPort('+81', noPorts)).toBe(81);
  });

  it('prefers a port named like a number over the number itself', () => {
    const odd: Container = { name: 'c', ports: [{ name: '80', containerPort: 8080 }] };
    expect(resolveContainerPort('80', odd)).toBe(8080);
  });

  it('reports an unknown name with the integer-parse error', () => {
    expect(() => resolveContainerPort('foo', barOnly)).toThrow(/^strconv\.Atoi: parsing "foo": invalid syntax$/);
    expect(() => resolveContainerPort('abc', noPorts)).toThrow(/^strconv\.Atoi: parsing "abc": invalid syntax$/);
    expect(() => resolveContainerPort('', noPorts)).toThrow(/^strconv\.Atoi: parsing "": invalid syntax$/);
    expect(() => resolveContainerPort(' 80', noPorts)).toThrow(/^strconv\.Atoi: parsing " 80": invalid syntax$/);
    expect(() => resolveContainerPort('99999999999999999999', noPorts)).toThrow(
      /^strconv\.Atoi: parsing "99999999999999999999": value out of range$/,
    );
  });

  it('range-checks numbers written as strings and named ports', () => {
    expect(() => resolveContainerPort('66666', noPorts)).toThrow(/^invalid port number: 66666$/);
    expect(() => resolveContainerPort('-5', noPorts)).toThrow(/^invalid port number: -5$/);
    expect(() => resolveContainerPort('9007199254740993', noPorts)).toThrow(/^invalid port number: 9007199254740993$/);
    const zero: Container = { name: 'c', ports: [{ name: 'zero', containerPort: 0 }] };
    expect(() => resolveContainerPort('zero', zero)).toThrow(/^invalid port number: 0$/);
  });

  it('rejects a value that is neither int nor string', () => {
    expect(() => resolveContainerPort(undefined as unknown as number, fooBar)).toThrow(/^intOrString had no kind: /);
    expect(() => resolveContainerPort({ foo: 1 } as unknown as number, fooBar)).toThrow(
      'intOrString had no kind: {"foo":1}',
    );
  });
});
