/**
 * The apimachinery string-format checks (`k8s.io/apimachinery/pkg/util/validation`) that
 * pod validation uses. Each returns every broken rule's message, in upstream order, because
 * the apiserver reports one field error per message (a port named `HTTP` breaks two rules).
 */

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const HTTP_HEADER_NAME_FMT = '[-A-Za-z0-9]+';

const DNS1123_LABEL = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const HTTP_HEADER_NAME = new RegExp(`^${HTTP_HEADER_NAME_FMT}$`);
const PORT_NAME_CHARSET = /^[-a-z0-9]+$/;
const PORT_NAME_ONE_LETTER = /[a-z]/;

export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
const PORT_NAME_MAX_LENGTH = 15;

export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

/**
 * Upstream's `RegexError`. Its example list is joined with `', '` then `' or '`, which yields
 * two spaces before "or"; kept, since users compare these strings with the apiserver's.
 */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  const shown = examples.map((e, i) => `${i > 0 ? ' or ' : ''}'${e}', `).join('');
  return `${msg} (e.g. ${shown}regex used for validation is '${fmt}')`;
}

/** Go measures `len(string)` in UTF-8 bytes. */
function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!DNS1123_LABEL.test(value)) {
    if (DNS1123_SUBDOMAIN.test(value)) errs.push('must not contain dots');
    else
      errs.push(
        regexError(
          'a lowercase RFC 1123 label must consist of lower case alphanumeric characters or ' +
            "'-', and must start and end with an alphanumeric character",
          DNS1123_LABEL_FMT,
          'my-name',
          '123-abc',
        ),
      );
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!DNS1123_SUBDOMAIN.test(value)) {
    errs.push(
      regexError(
        'a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, ' +
          "'-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        'example.com',
      ),
    );
  }
  return errs;
}

export function isValidPortNum(port: number): string[] {
  return Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}

/** An IANA service name (RFC 6335), lower case only. */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (byteLength(port) > PORT_NAME_MAX_LENGTH) errs.push(maxLenError(PORT_NAME_MAX_LENGTH));
  if (!PORT_NAME_CHARSET.test(port)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!PORT_NAME_ONE_LETTER.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.startsWith('-') || port.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

export function isHTTPHeaderName(value: string): string[] {
  return HTTP_HEADER_NAME.test(value)
    ? []
    : [
        regexError(
          "a valid HTTP header must consist of alphanumeric characters or '-'",
          HTTP_HEADER_NAME_FMT,
          'X-Header-Name',
        ),
      ];
}
