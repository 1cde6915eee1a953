/**
 * The globs of a fleet's matches (`image: "example/*"`, `namespace: "team-?"`): `*` any
 * characters (`/` included: `example/*` matches `example/team/api:2`), `?` one, anything else
 * itself. Matched by the linear dynamic programme of util/glob.ts, never a regular
 * expression, so no pattern can make matching slow.
 */
import { matchesSegment } from '../../util/glob.js';

/** Longest glob accepted (image references stay far below it). */
const MAX_GLOB_LENGTH = 512;

/** Characters other glob dialects treat as syntax; here they would be literal, which is never what was meant. */
const UNSUPPORTED = ['[', ']', '{', '}', '\\'] as const;

/** Why `glob` cannot be used (the fix included), or undefined. */
export function globError(glob: string): string | undefined {
  if (glob === '') return 'an empty glob matches nothing: leave the key out to match every value, or write *';
  if (glob.length > MAX_GLOB_LENGTH) return `a glob of ${glob.length} characters: at most ${MAX_GLOB_LENGTH}`;
  const bad = UNSUPPORTED.find((c) => glob.includes(c));
  if (bad !== undefined) return `${JSON.stringify(glob)}: ${JSON.stringify(bad)} is not glob syntax here: only * (any characters) and ? (one character) are wildcards`;
  return undefined;
}

/** Whether `text` matches `glob` (one checked by {@link globError}). */
export function matchesGlob(text: string, glob: string): boolean {
  // Most matches are plain names: no table for them.
  if (!glob.includes('*') && !glob.includes('?')) return text === glob;
  return matchesSegment(text, glob);
}
