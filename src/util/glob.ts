/**
 * Path globs (`charts/** /tests/*`, written without the space) for `.probelet.yaml`'s
 * `exclude`, matched without regular expressions: segment by segment, `**` any number of
 * segments, `*` any characters within one, `?` one character. Dynamic programming in
 * O(pattern × path) for each, so no pattern can make it slow.
 */

/** Whether `path` (with `/` separators) matches `pattern`. */
export function matchesGlob(path: string, pattern: string): boolean {
  const parts = path.split('/').filter((s) => s !== '' && s !== '.');
  const globs = pattern.split('/').filter((s) => s !== '' && s !== '.');
  // can[i][j]: the first i glob segments match the first j path segments.
  let previous: boolean[] = Array.from({ length: parts.length + 1 }, (_, j) => j === 0);
  for (const glob of globs) {
    const current: boolean[] = new Array<boolean>(parts.length + 1).fill(false);
    for (let j = 0; j <= parts.length; j++) {
      if (glob === '**') current[j] = previous[j] === true || (j > 0 && current[j - 1] === true);
      else current[j] = j > 0 && previous[j - 1] === true && matchesSegment(parts[j - 1] ?? '', glob);
    }
    previous = current;
  }
  return previous[parts.length] === true;
}

/** `*` and `?` within one path segment; on its own, a wildcard match of a whole string (`*` matches `/` too). */
export function matchesSegment(text: string, glob: string): boolean {
  let previous: boolean[] = Array.from({ length: text.length + 1 }, (_, j) => j === 0);
  for (const c of glob) {
    const current: boolean[] = new Array<boolean>(text.length + 1).fill(false);
    for (let j = 0; j <= text.length; j++) {
      if (c === '*') current[j] = previous[j] === true || (j > 0 && current[j - 1] === true);
      else current[j] = j > 0 && previous[j - 1] === true && (c === '?' || text[j - 1] === c);
    }
    previous = current;
  }
  return previous[text.length] === true;
}
