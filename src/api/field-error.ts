/**
 * Field-level validation errors worded exactly like the apiserver's `field.Error`, so a
 * message printed by probelet can be pasted into a search engine (or compared with what
 * `kubectl apply` said) and match word for word.
 */

import { goQuote } from '../util/go-quote.js';

/** Machine-readable error types: the apiserver's `CauseType` strings (Status `details.causes[].reason`). */
export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooMany';

/** A bad value as it can come out of a parsed manifest. */
export type BadValue = string | number | boolean | null | undefined | object;

const TYPE_WORDS: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooMany: 'Too many',
};

/** Types whose message never shows the value (upstream prints only the type word for them). */
const VALUE_OMITTED: ReadonlySet<FieldErrorType> = new Set(['FieldValueRequired', 'FieldValueForbidden']);

/**
 * One validation failure. A class (rather than a plain object) so that `String(err)` and
 * template literals give the apiserver's text with no helper in between.
 */
export class FieldError {
  constructor(
    readonly type: FieldErrorType,
    /** Path of the offending field, e.g. `spec.containers[0].livenessProbe.successThreshold`. */
    readonly field: string,
    readonly badValue: BadValue,
    readonly detail: string,
  ) {}

  /** The message without the field path (`Invalid value: 2: must be 1`). */
  errorBody(): string {
    let body = TYPE_WORDS[this.type];
    if (!VALUE_OMITTED.has(this.type)) body += `: ${renderValue(this.badValue)}`;
    if (this.detail.length > 0) body += `: ${this.detail}`;
    return body;
  }

  toString(): string {
    return `${this.field}: ${this.errorBody()}`;
  }
}

/** A value is missing (empty string, empty list, unset). */
export function required(field: string, detail = ''): FieldError {
  return new FieldError('FieldValueRequired', field, '', detail);
}

/** A value is malformed or out of range. */
export function invalid(field: string, value: BadValue, detail: string): FieldError {
  return new FieldError('FieldValueInvalid', field, value, detail);
}

/** A value is not one of an enumeration; the detail lists the valid values, quoted, in the given order. */
export function notSupported(field: string, value: BadValue, validValues: readonly string[]): FieldError {
  const detail = validValues.length > 0 ? `supported values: ${validValues.map(goQuote).join(', ')}` : '';
  return new FieldError('FieldValueNotSupported', field, value, detail);
}

/** A well-formed value that is not allowed here. */
export function forbidden(field: string, detail: string): FieldError {
  return new FieldError('FieldValueForbidden', field, '', detail);
}

/** A value that must be unique was seen before. */
export function duplicate(field: string, value: BadValue): FieldError {
  return new FieldError('FieldValueDuplicate', field, value, '');
}

/** A referenced value does not exist. */
export function notFound(field: string, value: BadValue): FieldError {
  return new FieldError('FieldValueNotFound', field, value, '');
}

/** A list has more items than allowed. */
export function tooMany(field: string, actual: number, max: number): FieldError {
  return new FieldError('FieldValueTooMany', field, actual, `must have at most ${max} items`);
}

/**
 * `ErrorList.ToAggregate().Error()`: identical messages collapse to one; a single error
 * prints bare, several print as `[a, b]`.
 */
export function aggregateMessage(errors: readonly FieldError[]): string {
  const messages = [...new Set(errors.map(String))];
  return messages.length === 1 ? (messages[0] ?? '') : `[${messages.join(', ')}]`;
}

/** The apiserver's 422 message for an invalid object: `Pod "web" is invalid: <aggregate>`. */
export function invalidObjectMessage(kind: string, name: string, errors: readonly FieldError[]): string {
  return `${kind} ${goQuote(name)} is invalid: ${aggregateMessage(errors)}`;
}

/** Renders a bad value like Go's `%v` / `%q` do in `field.Error`: numbers and booleans plain, strings quoted. */
function renderValue(value: BadValue): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // Go prints structs with %#v, which has no TypeScript equivalent; JSON is the honest stand-in.
  return JSON.stringify(value);
}

export { goQuote };
