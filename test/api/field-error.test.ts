import { describe, expect, it } from 'vitest';
import {
  aggregateMessage,
  duplicate,
  FieldError,
  forbidden,
  goQuote,
  invalid,
  invalidObjectMessage,
  notFound,
  notSupported,
  required,
  tooMany,
} from '../../src/api/field-error.js';

describe('FieldError rendering (apimachinery field.Error)', () => {
  it('prints numbers plain and strings Go-quoted', () => {
    expect(String(invalid('a.b', 2, 'must be 1'))).toBe('a.b: Invalid value: 2: must be 1');
    expect(String(invalid('a.b', 'x"y', 'bad'))).toBe('a.b: Invalid value: "x\\"y": bad');
    expect(String(invalid('a.b', true, 'bad'))).toBe('a.b: Invalid value: true: bad');
    expect(String(invalid('a.b', null, 'bad'))).toBe('a.b: Invalid value: null: bad');
  });

  it('omits the value for Required and Forbidden, and an empty detail entirely', () => {
    expect(String(required('spec.containers'))).toBe('spec.containers: Required value');
    expect(String(required('metadata.name', 'name or generateName is required'))).toBe(
      'metadata.name: Required value: name or generateName is required',
    );
    expect(String(forbidden('x', 'no'))).toBe('x: Forbidden: no');
    expect(String(duplicate('x', 'c'))).toBe('x: Duplicate value: "c"');
    expect(String(notFound('x', 'c'))).toBe('x: Not found: "c"');
  });

  it('lists supported values quoted, in the order given', () => {
    expect(String(notSupported('s', 'http', ['HTTP', 'HTTPS']))).toBe(
      's: Unsupported value: "http": supported values: "HTTP", "HTTPS"',
    );
    expect(String(notSupported('s', '', []))).toBe('s: Unsupported value: ""');
  });

  it('renders Too many with the count', () => {
    expect(String(tooMany('r', 21, 20))).toBe('r: Too many: 21: must have at most 20 items');
  });

  it('keeps type, field, badValue and detail as data and works in template literals', () => {
    const err = invalid('f', 70000, 'd');
    expect(err).toBeInstanceOf(FieldError);
    expect({ type: err.type, field: err.field, badValue: err.badValue, detail: err.detail }).toEqual({
      type: 'FieldValueInvalid',
      field: 'f',
      badValue: 70000,
      detail: 'd',
    });
    expect(`${err}`).toBe('f: Invalid value: 70000: d');
    expect(err.errorBody()).toBe('Invalid value: 70000: d');
  });

  it('quotes like strconv.Quote', () => {
    expect(goQuote('a\tb\n')).toBe('"a\\tb\\n"');
    expect(goQuote('\x01')).toBe('"\\x01"');
    expect(goQuote('\u00a0')).toBe('"\\u00a0"');
    expect(goQuote('é✓')).toBe('"é✓"');
    expect(goQuote('back\\slash')).toBe('"back\\\\slash"');
  });

  it('aggregates like ErrorList.ToAggregate (dedup, brackets only for several)', () => {
    const a = required('a');
    const b = required('b');
    expect(aggregateMessage([a])).toBe('a: Required value');
    expect(aggregateMessage([a, b, required('a')])).toBe('[a: Required value, b: Required value]');
    expect(invalidObjectMessage('Pod', 'web', [a])).toBe('Pod "web" is invalid: a: Required value');
  });
});
