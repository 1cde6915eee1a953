/**
 * Kubernetes `$(VAR)` expansion (Go's `third_party/forked/golang/expansion.Expand`).
 *
 * Users copy commands between probes, `command`/`args` and `env`, and expect the same
 * result as on a real cluster, quirks included: `$$` escapes, unknown references stay
 * verbatim (so a later shell still sees them), an unclosed `$(` is kept as text, and a
 * substituted value is never expanded again.
 */

const OPERATOR = '$';
const OPENER = '(';
const CLOSER = ')';

/**
 * Expands every `$(NAME)` in `input` with `lookup(NAME)`; a name `lookup` does not
 * know (returns `undefined`) is left as `$(NAME)`. `$$` becomes `$`; any other `$`
 * (before another character, at the end, or opening a `$(` that never closes) is kept.
 */
export function expandVars(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== OPERATOR || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const next = input[cursor + 1];
    let consumed = 1;
    if (next === OPERATOR) {
      out += OPERATOR;
    } else if (next === OPENER) {
      const close = input.indexOf(CLOSER, cursor + 2);
      if (close === -1) {
        // Unclosed reference: keep `$(` and go on scanning right after it.
        out += OPERATOR + OPENER;
      } else {
        const name = input.slice(cursor + 2, close);
        out += lookup(name) ?? `${OPERATOR}${OPENER}${name}${CLOSER}`;
        consumed = close - cursor;
      }
    } else {
      out += OPERATOR + (next ?? '');
    }
    cursor += consumed;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}
