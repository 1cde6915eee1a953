/**
 * Go's `strconv.Quote` (`%q`): errors users grep for quote values this way (`parse "…"`,
 * `Unsupported value: "http"`, `Pod "web" is invalid`), so there is one rendering of it.
 */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const SHORT_ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};

/** Double quotes, Go escapes, non-printable runes as `\x`, `\u` or `\U`. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) {
      out += short;
      continue;
    }
    const cp = ch.codePointAt(0) ?? 0;
    // The apiserver's JSON decoder turns a lone surrogate into U+FFFD, which Go prints as is.
    if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd';
    else if (PRINTABLE.test(ch)) out += ch;
    else if (cp < 0x80) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return `${out}"`;
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}
