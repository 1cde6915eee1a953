/**
 * `text` without the trailing run of `char`: what `/c+$/` would strip, in one pass from the end.
 * Why not the regular expression: V8's backtracking engine retries `/\n+$/` at every start of
 * a long run that is not at the end (quadratic), and every regex here must be linear on any input.
 */
export function trimTrailing(text: string, char: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === char) end--;
  return text.slice(0, end);
}
