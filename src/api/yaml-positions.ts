/**
 * A fast way to find where a field is in a plain block-style YAML document (what
 * kubectl, Helm and most people write): walk the lines by indentation, no parsing. It
 * answers only when it is sure; anchors, aliases, merge keys, tabs, multi-line flow
 * collections, a JSON-style root or an absent field make it give up (undefined), and the
 * caller falls back to re-reading the document with js-yaml's listener. `check` asks for a
 * position for every finding, so this is what keeps findings cheap.
 */

/** 0-based line and column. */
export interface LinePosition {
  line: number;
  column: number;
}

interface Line {
  /** Column of the first non-blank character. */
  indent: number;
  /** Column where the content starts after any `- ` sequence markers. */
  keyCol: number;
  /** Content from `keyCol` on, comment-free lines only. */
  text: string;
  /** The line starts (after its indentation) with a `- ` sequence marker. */
  dash: boolean;
}

/** Things this walker does not follow. */
const UNSURE = /(?:^|[\s[{,])[&*!][^\s,\]}]|<<\s*:|\t|^\s*\?\s/m;

/** The document's lines, prepared for `blockPosition`; undefined when the walker must not be used for it. */
export function prepareLines(text: string): (Line | undefined)[] | undefined {
  if (UNSURE.test(text)) return undefined;
  const out: (Line | undefined)[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    let i = 0;
    while (line.charCodeAt(i) === 0x20) i++;
    if (i === line.length || line.charCodeAt(i) === 0x23) {
      out.push(undefined); // blank or comment
      continue;
    }
    const indent = i;
    let dash = false;
    while (line.charCodeAt(i) === 0x2d && (i + 1 === line.length || line.charCodeAt(i + 1) === 0x20)) {
      dash = true;
      i++;
      while (line.charCodeAt(i) === 0x20) i++;
    }
    out.push({ indent, keyCol: i, text: line.slice(i), dash });
  }
  const first = out.find((l) => l !== undefined);
  if (first && (first.text.startsWith('{') || first.text.startsWith('['))) return undefined;
  return out;
}

/** Where `path` is, or undefined when the walker is not sure (the caller then asks js-yaml). */
export function blockPosition(lines: readonly (Line | undefined)[], path: readonly (string | number)[]): LinePosition | undefined {
  let from = 0;
  let to = lines.length;
  /** Column of the keys of the current mapping (or -1: the first content line's). */
  let col = -1;
  let found: LinePosition = { line: 0, column: 0 };
  // The root: the first content line.
  while (from < to && !lines[from]) from++;
  if (from === to) return undefined;
  found = { line: from, column: lines[from]?.indent ?? 0 };
  for (let s = 0; s < path.length; s++) {
    const segment = path[s];
    const first = lines[from];
    if (!first) return undefined;
    if (typeof segment === 'number') {
      // A block sequence: items are the dash lines at the first item's indentation.
      if (!first.dash || (col >= 0 && first.indent < col - 2)) return undefined;
      const dashCol = first.indent;
      let item = -1;
      let at = -1;
      for (let i = from; i < to; i++) {
        const l = lines[i];
        if (!l) continue;
        if (l.indent < dashCol) break;
        if (l.indent === dashCol) {
          if (!l.dash) break;
          if (++item === segment) {
            at = i;
            break;
          }
        }
      }
      if (at < 0) return undefined;
      const here = lines[at];
      if (!here || here.text.startsWith('- ') || here.text.startsWith('{') || here.text.startsWith('[')) return undefined;
      found = { line: at, column: here.keyCol };
      // The item runs to the next line at or left of its dash.
      let end = at + 1;
      while (end < to && (!lines[end] || (lines[end]?.indent ?? 0) > dashCol)) end++;
      from = at;
      to = end;
      col = here.keyCol;
      continue;
    }
    if (typeof segment !== 'string') return undefined;
    const keyCol = col >= 0 ? col : first.keyCol;
    let at = -1;
    for (let i = from; i < to; i++) {
      const l = lines[i];
      if (!l || l.keyCol !== keyCol) continue;
      if (i !== from && l.dash && l.indent < keyCol) break; // the next item of the enclosing sequence
      if (isKey(l.text, segment)) {
        at = i;
        break;
      }
    }
    if (at < 0) return undefined; // absent, or written in a way the walker does not read
    found = { line: at, column: keyCol };
    const rest = afterKey(lines[at]?.text ?? '', segment);
    if (rest !== '' && !rest.startsWith('#')) {
      // An inline value: a scalar has no children; a one-line flow mapping may.
      if (s === path.length - 1) break;
      return flowChild(lines[at]?.text ?? '', segment, path.slice(s + 1), at, keyCol);
    }
    // A block value: the following lines indented more, or a sequence at the same column.
    let end = at + 1;
    while (end < to) {
      const l = lines[end];
      if (l && (l.indent < keyCol || (l.indent === keyCol && !l.dash))) break;
      end++;
    }
    from = at + 1;
    while (from < end && !lines[from]) from++;
    to = end;
    col = -1;
    if (from >= to) {
      if (s === path.length - 1) break;
      return undefined;
    }
  }
  return found;
}

function isKey(text: string, key: string): boolean {
  for (const written of [key, `"${key}"`, `'${key}'`]) {
    if (text.startsWith(written) && text.charCodeAt(written.length) === 0x3a) {
      const next = text.charCodeAt(written.length + 1);
      if (Number.isNaN(next) || next === 0x20) return true;
    }
  }
  return false;
}

function afterKey(text: string, key: string): string {
  const colon = text.indexOf(':', key.length);
  return text.slice(colon + 1).trim();
}

/**
 * One level into a one-line flow mapping (`httpGet: { path: /x, port: http }` → `port`):
 * anything deeper or less simple is left to js-yaml.
 */
function flowChild(text: string, key: string, rest: readonly (string | number)[], line: number, keyCol: number): LinePosition | undefined {
  const [child] = rest;
  if (rest.length !== 1 || typeof child !== 'string') return undefined;
  const colon = text.indexOf(':', key.length);
  const value = text.slice(colon + 1);
  const open = value.indexOf('{');
  if (open < 0 || value.slice(0, open).trim() !== '' || !value.trimEnd().endsWith('}') || /["'{[]/.test(value.slice(open + 1))) return undefined;
  const inner = value.slice(open + 1);
  const match = new RegExp(`(^|,)\\s*(${child.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')})\\s*:`).exec(inner);
  if (!match) return undefined;
  const offset = colon + 1 + open + 1 + match.index + (match[0].length - match[0].trimStart().length) + match[0].trimStart().indexOf(child);
  return { line, column: keyCol + offset };
}
