/**
 * What Go's `encoding/json` says about a document, word for word: the API server refuses a
 * `kubernetes.io/dockerconfigjson` Secret with `json.Unmarshal`'s error in its message, and the
 * kubelet fails a pull with it when a pull Secret's config does not decode. Users paste those
 * words into a search engine, so they are Go's, not `JSON.parse`'s.
 *
 * The syntax check follows the states of Go's scanner (scanner.go) byte by byte, including its
 * quirk at the end of input (a value cut short inside a literal or a number is reported as an
 * invalid ' ' there, not as the end). Linear in the input; the nesting stack stops at Go's
 * depth limit.
 */
import { goQuote } from './go-quote.js';

/** Go's `maxNestingDepth`: deeper input is a syntax error, not a stack overflow. */
const MAX_NESTING_DEPTH = 10000;

type State = (c: number) => State;

/** What the scanner is inside of (scanner.go's parse states). */
const Parse = { ObjectKey: 0, ObjectValue: 1, ArrayValue: 2 } as const;
type Parse = (typeof Parse)[keyof typeof Parse];

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** scanner.go's `quoteChar`: a byte as Go quotes it in a SyntaxError (`'h'`, `'\n'`, `'\''`). */
function quoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  // A byte is the rune of the same number (Latin-1), as Go's string(byte) makes it.
  const quoted = goQuote(String.fromCharCode(c));
  return `'${quoted.slice(1, -1)}'`;
}

/** A JSON value's kind as Go names it in `cannot unmarshal KIND into …`. */
export type GoJsonKind = 'object' | 'array' | 'string' | 'number' | 'bool' | 'null';

export interface GoJsonCheck {
  /** Go's SyntaxError text (`invalid character 'h' looking for beginning of value`, `unexpected end of JSON input`). */
  syntaxError?: string;
  /** The top-level value's kind (when the syntax is valid). */
  kind?: GoJsonKind;
  /** The first number literal a float64 cannot hold (`1e400`), in document order. */
  overflowingNumber?: string;
}

/** `json.Unmarshal`'s `checkValid` over `bytes`, and what decoding needs to know of the value. */
export function checkGoJson(bytes: Uint8Array): GoJsonCheck {
  const stack: Parse[] = [];
  let endTop = false;
  let error: string | undefined;
  let numberStart = -1;
  let overflowingNumber: string | undefined;
  let at = 0;

  const fail = (c: number, context: string): State => {
    error = `invalid character ${quoteChar(c)} ${context}`;
    return failed;
  };
  const failed: State = () => failed;
  const push = (c: number, parse: Parse, next: State): State => {
    stack.push(parse);
    return stack.length <= MAX_NESTING_DEPTH ? next : fail(c, 'exceeded max depth');
  };
  const endNumber = (): void => {
    if (overflowingNumber !== undefined || numberStart < 0) return;
    const text = Buffer.from(bytes.subarray(numberStart, at)).toString('latin1');
    if (!Number.isFinite(Number(text))) overflowingNumber = text;
    numberStart = -1;
  };
  const endTopState: State = (c) => (isSpace(c) ? endTopState : fail(c, 'after top-level value'));
  const pop = (): State => {
    stack.pop();
    if (stack.length > 0) return endValue;
    endTop = true;
    return endTopState;
  };
  const endValue: State = (c) => {
    const n = stack.length;
    if (n === 0) {
      endTop = true;
      return endTopState(c);
    }
    if (isSpace(c)) return endValue;
    const top = stack[n - 1];
    if (top === Parse.ObjectKey) {
      if (c !== 0x3a) return fail(c, 'after object key');
      stack[n - 1] = Parse.ObjectValue;
      return beginValue;
    }
    if (top === Parse.ObjectValue) {
      if (c === 0x2c) {
        stack[n - 1] = Parse.ObjectKey;
        return beginString;
      }
      return c === 0x7d ? pop() : fail(c, 'after object key:value pair');
    }
    if (c === 0x2c) return beginValue;
    return c === 0x5d ? pop() : fail(c, 'after array element');
  };
  const literal = (word: string, i: number): State => {
    const expected = word.charCodeAt(i);
    return (c) => {
      if (c !== expected) return fail(c, `in literal ${word} (expecting ${quoteChar(expected)})`);
      return i + 1 === word.length ? endValue : literal(word, i + 1);
    };
  };
  const inString: State = (c) => {
    if (c === 0x22) return endValue;
    if (c === 0x5c) return inStringEsc;
    return c < 0x20 ? fail(c, 'in string literal') : inString;
  };
  const inStringEsc: State = (c) => {
    if (c === 0x75) return escU(0);
    return 'bfnrt\\/"'.includes(String.fromCharCode(c)) ? inString : fail(c, 'in string escape code');
  };
  const escU =
    (k: number): State =>
    (c) => {
      if (!isHex(c)) return fail(c, 'in \\u hexadecimal character escape');
      return k === 3 ? inString : escU(k + 1);
    };
  const numberEnd = (c: number): State => {
    endNumber();
    return endValue(c);
  };
  const neg: State = (c) => (c === 0x30 ? zero : c >= 0x31 && c <= 0x39 ? one : fail(c, 'in numeric literal'));
  const one: State = (c) => (isDigit(c) ? one : zero(c));
  const zero: State = (c) => (c === 0x2e ? dot : c === 0x65 || c === 0x45 ? exponent : numberEnd(c));
  const dot: State = (c) => (isDigit(c) ? dot0 : fail(c, 'after decimal point in numeric literal'));
  const dot0: State = (c) => (isDigit(c) ? dot0 : c === 0x65 || c === 0x45 ? exponent : numberEnd(c));
  const exponent: State = (c) => (c === 0x2b || c === 0x2d ? exponentSign : exponentSign(c));
  const exponentSign: State = (c) => (isDigit(c) ? exponent0 : fail(c, 'in exponent of numeric literal'));
  const exponent0: State = (c) => (isDigit(c) ? exponent0 : numberEnd(c));
  const beginValue: State = (c) => {
    if (isSpace(c)) return beginValue;
    if (c === 0x7b) return push(c, Parse.ObjectKey, beginStringOrEmpty);
    if (c === 0x5b) return push(c, Parse.ArrayValue, beginValueOrEmpty);
    if (c === 0x22) return inString;
    if (c === 0x2d || isDigit(c)) numberStart = at;
    if (c === 0x2d) return neg;
    if (c === 0x30) return zero;
    if (isDigit(c)) return one;
    if (c === 0x74) return literal('true', 1);
    if (c === 0x66) return literal('false', 1);
    if (c === 0x6e) return literal('null', 1);
    return fail(c, 'looking for beginning of value');
  };
  const beginValueOrEmpty: State = (c) => (isSpace(c) ? beginValueOrEmpty : c === 0x5d ? endValue(c) : beginValue(c));
  const beginString: State = (c) => (isSpace(c) ? beginString : c === 0x22 ? inString : fail(c, 'looking for beginning of object key string'));
  const beginStringOrEmpty: State = (c) => {
    if (isSpace(c)) return beginStringOrEmpty;
    if (c !== 0x7d) return beginString(c);
    stack[stack.length - 1] = Parse.ObjectValue;
    return endValue(c);
  };

  let step: State = beginValue;
  for (; at < bytes.length && error === undefined; at++) step = step(bytes[at] ?? 0);
  // Go's `eof`: one more space, which ends a number or a literal cut short — or fails it.
  if (error === undefined && !endTop) step(0x20);
  if (error === undefined && !endTop) error = 'unexpected end of JSON input';
  if (error !== undefined) return { syntaxError: error };
  return { kind: kindOf(bytes), ...(overflowingNumber !== undefined ? { overflowingNumber } : {}) };
}

function kindOf(bytes: Uint8Array): GoJsonKind {
  let i = 0;
  while (i < bytes.length && isSpace(bytes[i] ?? 0)) i++;
  const c = bytes[i];
  if (c === 0x7b) return 'object';
  if (c === 0x5b) return 'array';
  if (c === 0x22) return 'string';
  if (c === 0x74 || c === 0x66) return 'bool';
  if (c === 0x6e) return 'null';
  return 'number';
}

/** The JSON kind of a decoded value, in the words of Go's `UnmarshalTypeError`. */
export function goJsonKind(value: unknown): GoJsonKind {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'bool';
  return 'object';
}

/** `UnmarshalTypeError.Error()` at the top level: `json: cannot unmarshal array into Go value of type T`. */
export function cannotUnmarshal(kind: GoJsonKind | string, goType: string, field?: { struct: string; path: string }): string {
  if (field) return `json: cannot unmarshal ${kind} into Go struct field ${field.struct}.${field.path} of type ${goType}`;
  return `json: cannot unmarshal ${kind} into Go value of type ${goType}`;
}

/**
 * `json.Unmarshal(bytes, &map[string]interface{}{})`'s error, or undefined: what the API
 * server runs on a docker config Secret's content.
 */
export function unmarshalIntoMapError(bytes: Uint8Array): string | undefined {
  const check = checkGoJson(bytes);
  if (check.syntaxError !== undefined) return check.syntaxError;
  if (check.kind !== 'object' && check.kind !== 'null') return cannotUnmarshal(check.kind ?? 'number', 'map[string]interface {}');
  if (check.overflowingNumber !== undefined) return cannotUnmarshal(`number ${check.overflowingNumber}`, 'float64');
  return undefined;
}
