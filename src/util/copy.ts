import { isDeepStrictEqual } from 'node:util';

/**
 * A deep copy of decoded YAML/JSON (plain objects, arrays, scalars), several times faster
 * than `structuredClone`, which `check` would otherwise spend most of its time in (two
 * copies per object, 50,000 objects). Anything else (a Buffer from `!!binary`) is shared,
 * not copied. `__proto__` keys stay plain own properties, as the decoder made them.
 */
export function copyPlain<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copyPlain) as T;
  if (value === null || typeof value !== 'object') return value;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  return copyKeys(value, copyPlain) as T;
}

/**
 * `structuredClone(value)` for API data (plain objects, arrays, scalars), without its
 * serializer: the kubelet's status manager copies every status it stores, and
 * `structuredClone` was most of that. Plain objects and arrays are copied here, keys in
 * their order (`undefined` values kept, as `structuredClone` keeps them); anything else —
 * a `Date` some code puts in a time field, a class instance — is handed to
 * `structuredClone` itself, so the result is the same.
 */
export function cloneData<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return structuredClone(value);
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) if (i in value) out[i] = cloneData(value[i] as unknown);
    return out as T;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return structuredClone(value);
  return copyKeys(value, cloneData) as T;
}

/**
 * `isDeepStrictEqual(a, b)` for API data: plain objects (same own keys, any order) and
 * dense arrays compared here, scalars with
 * `Object.is` as `isDeepStrictEqual` does; any other object pair goes to
 * `isDeepStrictEqual` itself. API data has no symbol keys, which this does not look at.
 */
export function equalData(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const protoA: unknown = Object.getPrototypeOf(a);
  const protoB: unknown = Object.getPrototypeOf(b);
  if (protoA !== protoB) return false;
  if (protoA === Array.prototype) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    // Holes or keys besides the indices: isDeepStrictEqual's rules for them.
    if (Object.keys(x).length !== x.length || Object.keys(y).length !== y.length) return isDeepStrictEqual(a, b);
    for (let i = 0; i < x.length; i++) if (!equalData(x[i], y[i])) return false;
    return true;
  }
  if (protoA !== Object.prototype) return isDeepStrictEqual(a, b);
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(y, key) || !equalData(x[key], y[key])) return false;
  }
  return true;
}

/**
 * A plain object's own enumerable keys, in order, each value copied by `copy`; a
 * `__proto__` key stays a plain own property (an assignment would set the prototype).
 */
function copyKeys(value: object, copy: (item: unknown) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = copy((value as Record<string, unknown>)[key]);
    if (key === '__proto__') Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}
