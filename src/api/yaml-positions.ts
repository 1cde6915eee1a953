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
  /** Where the content starts and the line ends in the document (no slices kept: a finding needs a few). */
  start: number;
  end: number;
  /** The line starts (after its indentation) with a `- ` sequence marker. */
  dash: boolean;
}

/**
 * Things this walker does not follow. The indentation before a `?` key is matched without
 * line terminators (`^\s*` let every line start of a long blank run rescan the whole run).
 */
const UNSURE = /(?:^|[\s[{,])[&*!][^\s,\]}]|<<\s*:|\t|^[^\S\n\r\u2028\u2029]*\?\s/m;
const MAYBE_UNSURE = /[&*!<\t?]/;

/** Prepared lines of one document; `doc` is its text. */
export interface Lines {
  doc: string;
  lines: (Line | undefined)[];
  /** Per sequence (by its first line): the line of every item and where the sequence ends, so a List of 1,000 items is walked once. */
  sequences: Map<number, { items: number[]; end: number }>;
  /** Per key line: where its block value ends. */
  blockEnds: Map<number, number>;
}

/** The document's lines, prepared for `blockPosition`; undefined when the walker must not be used for it. */
export function prepareLines(doc: string): Lines | undefined {
  if (MAYBE_UNSURE.test(doc) && UNSURE.test(doc)) return undefined;
  const lines: (Line | undefined)[] = [];
  let pos = 0;
  while (pos <= doc.length) {
    let end = doc.indexOf('\n', pos);
    if (end === -1) end = doc.length;
    let i = pos;
    while (doc.charCodeAt(i) === 0x20) i++;
    if (i >= end || doc.charCodeAt(i) === 0x23 || (doc.charCodeAt(i) === 0x0d && i + 1 === end)) {
      lines.push(undefined); // blank or comment
    } else {
      const indent = i - pos;
      let dash = false;
      while (doc.charCodeAt(i) === 0x2d && (i + 1 === end || doc.charCodeAt(i + 1) === 0x20 || doc.charCodeAt(i + 1) === 0x0d)) {
        dash = true;
        i++;
        while (doc.charCodeAt(i) === 0x20) i++;
      }
      const start = i;
      const stop = doc.charCodeAt(end - 1) === 0x0d ? end - 1 : end;
      lines.push({ indent, keyCol: i - pos, start, end: stop, dash });
    }
    pos = end + 1;
  }
  const first = lines.find((l) => l !== undefined);
  const c = first ? doc.charCodeAt(first.start) : 0;
  if (c === 0x7b || c === 0x5b) return undefined; // `{` or `[`: a flow (JSON) root
  return { doc, lines, sequences: new Map(), blockEnds: new Map() };
}

/** Where `path` is, or undefined when the walker is not sure (the caller then asks js-yaml). */
export function blockPosition(prepared: Lines, path: readonly (string | number)[]): LinePosition | undefined {
  const { doc, lines } = prepared;
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
      let sequence = prepared.sequences.get(from);
      if (!sequence) {
        const items: number[] = [];
        let i = from;
        for (; i < to; i++) {
          const l = lines[i];
          if (!l) continue;
          if (l.indent < dashCol || (l.indent === dashCol && !l.dash)) break;
          if (l.indent === dashCol) items.push(i);
        }
        sequence = { items, end: i };
        prepared.sequences.set(from, sequence);
      }
      const at = sequence.items[segment] ?? -1;
      if (at < 0) return undefined;
      const here = lines[at];
      if (!here || doc.startsWith('- ', here.start) || doc.charCodeAt(here.start) === 0x7b || doc.charCodeAt(here.start) === 0x5b) return undefined;
      found = { line: at, column: here.keyCol };
      // The item runs to the next item, or the end of the sequence.
      const end = sequence.items[segment + 1] ?? sequence.end;
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
      if (isKey(doc, l.start, segment)) {
        at = i;
        break;
      }
    }
    if (at < 0) return undefined; // absent, or written in a way the walker does not read
    found = { line: at, column: keyCol };
    const line = lines[at];
    const text = line ? doc.slice(line.start, line.end) : '';
    const rest = afterKey(text, segment);
    if (rest !== '' && !rest.startsWith('#')) {
      // An inline value: a scalar has no children; a one-line flow mapping may.
      if (s === path.length - 1) break;
      return flowChild(text, segment, path.slice(s + 1), at, keyCol);
    }
    // A block value: the following lines indented more, or a sequence at the same column.
    let end = prepared.blockEnds.get(at);
    if (end === undefined) {
      end = at + 1;
      while (end < to) {
        const l = lines[end];
        if (l && (l.indent < keyCol || (l.indent === keyCol && !l.dash))) break;
        end++;
      }
      prepared.blockEnds.set(at, end);
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

function isKey(doc: string, start: number, key: string): boolean {
  const c = doc.charCodeAt(start);
  const written = c === 0x22 ? `"${key}"` : c === 0x27 ? `'${key}'` : key;
  if (!doc.startsWith(written, start) || doc.charCodeAt(start + written.length) !== 0x3a) return false;
  const next = doc.charCodeAt(start + written.length + 1);
  return Number.isNaN(next) || next === 0x20 || next === 0x0a || next === 0x0d;
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
