/**
 * YAML as kubectl reads it. kubectl (sigs.k8s.io/yaml over go-yaml v2) speaks YAML 1.1:
 * merge keys (`<<: *probe`), `0644` is octal (420), `yes`/`on`/`y` are booleans, and a
 * timestamp-looking scalar stays a string. js-yaml with the schema below decodes the same
 * way, several times faster than a full YAML 1.2 document model; positions of fields are
 * found lazily (`locate`), only for the documents a message is about.
 */
import { isUtf8 } from 'node:buffer';
import yaml from 'js-yaml';
import { blockPosition, prepareLines } from './yaml-positions.js';

/** Deepest nesting accepted. Kubernetes objects stay far below it; a CRD schema may reach a few dozen. */
export const MAX_YAML_DEPTH = 1000;

/** go-yaml v2's booleans (its resolve table), YAML 1.1 style. */
const TRUE_WORDS = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']);
const FALSE_WORDS = new Set(['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']);

const bool11 = new yaml.Type('tag:yaml.org,2002:bool', {
  kind: 'scalar',
  // Every plain scalar is offered to every implicit type: reject by length before hashing.
  resolve: (data: string | null) => data !== null && data.length <= 5 && (TRUE_WORDS.has(data) || FALSE_WORDS.has(data)),
  construct: (data: string) => TRUE_WORDS.has(data),
  predicate: (value: unknown) => typeof value === 'boolean',
});

/** Go's `strconv.ParseInt(s, 0, 64)` after go-yaml drops underscores: 0b, 0o, 0x and leading-0 octal. */
const INT_PATTERN = /^[-+]?(?:0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+|0[0-7_]+|[0-9][0-9_]*)$/;

/** A digit or a sign first: the cheap test that turns most plain scalars (names, images) away. */
function startsLikeNumber(data: string): boolean {
  const c = data.charCodeAt(0);
  return (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d;
}

const int11 = new yaml.Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (data: string | null) => data !== null && startsLikeNumber(data) && INT_PATTERN.test(data) && /[0-9]/.test(data),
  construct: (data: string) => {
    let text = data.replace(/_/g, '');
    let sign = 1;
    if (text[0] === '-' || text[0] === '+') {
      if (text[0] === '-') sign = -1;
      text = text.slice(1);
    }
    if (text.startsWith('0b')) return sign * parseInt(text.slice(2), 2);
    if (text.startsWith('0o')) return sign * parseInt(text.slice(2), 8);
    if (text.startsWith('0x')) return sign * parseInt(text.slice(2), 16);
    if (text.length > 1 && text[0] === '0') return sign * parseInt(text.slice(1), 8);
    return sign * parseInt(text, 10);
  },
  predicate: (value: unknown) => typeof value === 'number' && Number.isInteger(value),
});

/** js-yaml's own type definitions (exported at run time; its typings omit them). */
const types = (yaml as unknown as { types: Record<'null' | 'float' | 'merge' | 'binary' | 'omap' | 'pairs' | 'set', yaml.Type> }).types;

/** YAML 1.1 as go-yaml v2 resolves it; no implicit timestamps (they stay strings for kubectl). */
export const KUBECTL_SCHEMA = yaml.FAILSAFE_SCHEMA.extend({
  implicit: [types.null, bool11, int11, types.float, types.merge],
  explicit: [types.binary, types.omap, types.pairs, types.set],
});

export interface YamlChunk {
  /** The document's own text. */
  text: string;
  /** 0-based line of the chunk's first line in the file. */
  lineOffset: number;
}

const DOCUMENT_MARKER = /^(?:---|\.\.\.)(?:[ \t].*)?$/;

/**
 * Splits a YAML stream into its documents at `---` / `...` lines, so that a syntax error in
 * one document never hides the others (js-yaml's loadAll stops at the first error). A
 * marker line at column 0 ends a document even inside a block scalar, as the spec says.
 */
export function splitDocuments(text: string): YamlChunk[] {
  const chunks: YamlChunk[] = [];
  let start = 0;
  let line = 0;
  let chunkLine = 0;
  /** The chunk starts with a `--- value` line: its marker is blanked so columns stay those of the file. */
  let blankMarker = false;
  const chunkText = (endAt: number): string => {
    const body = text.slice(start, endAt);
    return blankMarker ? `   ${body.slice(3)}` : body;
  };
  let pos = 0;
  while (pos <= text.length) {
    let end = text.indexOf('\n', pos);
    if (end === -1) end = text.length;
    const lineText = text.charCodeAt(pos) === 0x2d || text.charCodeAt(pos) === 0x2e ? text.slice(pos, end).replace(/\r$/, '') : '';
    if (lineText !== '' && DOCUMENT_MARKER.test(lineText)) {
      const before = chunkText(pos);
      // `%YAML 1.1` and other directives belong to the document the marker starts: keep them with it.
      if (lineText.startsWith('---') && directivesOnly(before)) {
        pos = end + 1;
        line++;
        continue;
      }
      chunks.push({ text: before, lineOffset: chunkLine });
      // A `--- value` line starts the next document with content on the marker line.
      const rest = lineText.startsWith('---') ? lineText.slice(3) : '';
      start = end + 1;
      chunkLine = line + 1;
      blankMarker = false;
      if (rest.trim() !== '' && !rest.trim().startsWith('#')) {
        start = pos;
        chunkLine = line;
        blankMarker = true;
      }
    }
    pos = end + 1;
    line++;
  }
  if (start < text.length) chunks.push({ text: chunkText(text.length), lineOffset: chunkLine });
  return chunks;
}

/**
 * Text made of directives (`%YAML 1.1`, `%TAG …`), comments and blank lines only, with at
 * least one directive; lines end in LF or CRLF. A linear scan, line by line: the regular
 * expression it replaces let a comment line end either in its own `\r` or in `\r\n`, so a
 * CRLF file with 34 `#` lines before `---` took minutes to be refused.
 */
function directivesOnly(text: string): boolean {
  let directive = false;
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.startsWith('%')) {
      directive = true;
      continue;
    }
    let i = 0;
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (i < line.length && line[i] !== '#') return false;
  }
  return directive;
}

/**
 * The lines (1-based) of `bytes` that are not UTF-8, each with go-yaml's words for its first
 * bad sequence: kubectl's reader refuses such a document (`error converting YAML to JSON:
 * yaml: invalid leading UTF-8 octet`), where decoding it as Node does would quietly put U+FFFD
 * in its place. Empty (and fast) for a valid file; lines split at LF, a byte never part of a
 * multi-byte sequence.
 */
export function invalidUtf8Lines(bytes: Buffer): Map<number, string> {
  const bad = new Map<number, string>();
  if (isUtf8(bytes)) return bad;
  let line = 1;
  let start = 0;
  while (start <= bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    const lineBytes = bytes.subarray(start, end);
    if (!isUtf8(lineBytes)) bad.set(line, `yaml: ${utf8Fault(lineBytes)} (kubectl refuses the document: save the file as UTF-8)`);
    start = end + 1;
    line++;
  }
  return bad;
}

/** go-yaml's reader's message for the first bad sequence of `bytes` (yaml_parser_update_buffer). */
function utf8Fault(bytes: Buffer): string {
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i] ?? 0;
    const width = b < 0x80 ? 1 : (b & 0xe0) === 0xc0 ? 2 : (b & 0xf0) === 0xe0 ? 3 : (b & 0xf8) === 0xf0 ? 4 : 0;
    if (width === 0) return 'invalid leading UTF-8 octet';
    if (i + width > bytes.length) return 'incomplete UTF-8 octet sequence';
    let value = width === 1 ? b : width === 2 ? b & 0x1f : width === 3 ? b & 0x0f : b & 0x07;
    for (let k = 1; k < width; k++) {
      const t = bytes[i + k] ?? 0;
      if ((t & 0xc0) !== 0x80) return 'invalid trailing UTF-8 octet';
      value = (value << 6) + (t & 0x3f);
    }
    if (!(width === 1 || (width === 2 && value >= 0x80) || (width === 3 && value >= 0x800) || (width === 4 && value >= 0x10000))) return 'invalid length of a UTF-8 sequence';
    if ((value >= 0xd800 && value <= 0xdfff) || value > 0x10ffff) return 'invalid Unicode character';
    i += width;
  }
  return 'invalid UTF-8';
}

export interface YamlError {
  message: string;
  /** 1-based, in the file (the chunk's offset applied). */
  line?: number;
  column?: number;
}

/** Decodes one document. Never throws: a syntax error, an alias bomb or too deep a nesting comes back as `error`. */
export function decodeChunk(chunk: YamlChunk): { value: unknown; error?: undefined } | { value?: undefined; error: YamlError } {
  let value: unknown;
  // Only a document with an alias can expand: the others are read without the listener's cost.
  const expansion = chunk.text.includes('*') ? expansionGuard(chunk.text.length + MAX_EXPANSION_BYTES) : undefined;
  try {
    value = yaml.load(chunk.text, { schema: KUBECTL_SCHEMA, maxDepth: MAX_YAML_DEPTH, ...(expansion ? { listener: expansion } : {}) } as yaml.LoadOptions);
  } catch (err) {
    if (err instanceof ExcessiveAliasing) return { error: { message: err.message, line: err.line + chunk.lineOffset + 1, column: err.column + 1 } };
    return { error: yamlError(err, chunk) };
  }
  const budget = chunk.text.length + 10_000;
  if (expandedSize(value, budget) > budget) {
    return {
      error: {
        message: `the document expands to more than ${budget} values through aliases (an alias bomb); kubectl refuses it as excessive aliasing`,
      },
    };
  }
  return { value };
}

/** Bytes a document may grow by through aliases: the apiserver's request limit (3 MiB). */
const MAX_EXPANSION_BYTES = 3 * 1024 * 1024;

class ExcessiveAliasing extends Error {
  constructor(
    message: string,
    /** 0-based, in the chunk: where the reader was when the expansion went over. */
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

/**
 * A js-yaml listener that refuses a document while it is read, as soon as a node expanded
 * through aliases would be larger than `limitBytes` — before js-yaml builds from it what
 * expands for real: a complex key (`? [*s, *s, …]` is joined into one string) or a merge key
 * (`<<: *a` copies keys). Counted bottom-up: each node's bytes are its scalar's length or its
 * children's sum; an alias counts as the bytes of its anchor, every time it appears.
 */
function expansionGuard(limitBytes: number): (event: 'open' | 'close', state: yaml.State) => void {
  const frames: Array<{ bytes: number; alias: string | undefined }> = [];
  const anchors = new Map<string, number>();
  return (event, state) => {
    const s = state as unknown as { position: number; input: string; result: unknown; anchor: string | null; line: number; lineStart: number };
    if (event === 'open') {
      frames.push({ bytes: 0, alias: aliasAt(s.input, s.position) });
      return;
    }
    const frame = frames.pop();
    if (frame === undefined) return;
    let bytes = frame.alias !== undefined ? (anchors.get(frame.alias) ?? 0) : frame.bytes;
    if (frame.alias === undefined && (typeof s.result !== 'object' || s.result === null)) bytes += String(s.result).length;
    if (bytes > limitBytes) {
      throw new ExcessiveAliasing(
        `the document expands to more than ${limitBytes} bytes through aliases (an alias bomb, merge keys or complex keys included); kubectl refuses it as excessive aliasing`,
        s.line,
        s.position - s.lineStart,
      );
    }
    if (frame.alias === undefined && s.anchor !== null) anchors.set(s.anchor, bytes);
    const parent = frames[frames.length - 1];
    if (parent) parent.bytes += bytes;
  };
}

/** The alias name when the node at `position` (blanks and comments first) is an alias (`*name`). */
function aliasAt(input: string, position: number): string | undefined {
  let p = position;
  for (;;) {
    const c = input.charCodeAt(p);
    if (c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a) p++;
    else if (c === 0x23) while (p < input.length && input.charCodeAt(p) !== 0x0a) p++;
    else break;
  }
  if (input.charCodeAt(p) !== 0x2a) return undefined;
  let end = p + 1;
  // An alias name ends at a blank or a flow indicator (YAML 1.2 ns-anchor-char).
  while (end < input.length && !' \t\r\n,[]{}'.includes(input[end] ?? ' ')) end++;
  return input.slice(p + 1, end);
}

function yamlError(err: unknown, chunk: YamlChunk): YamlError {
  if (err instanceof yaml.YAMLException) {
    const reason = err.reason.startsWith('nesting exceeded maxDepth')
      ? `nested deeper than ${MAX_YAML_DEPTH} levels, the limit for a manifest (Kubernetes objects are never this deep)`
      : err.reason;
    const mark = err.mark as { line?: number; column?: number } | undefined;
    if (mark && typeof mark.line === 'number') {
      return { message: reason, line: mark.line + chunk.lineOffset + 1, column: (mark.column ?? 0) + 1 };
    }
    return { message: reason };
  }
  if (err instanceof RangeError) {
    return { message: `nested too deeply to read (${err.message}); the limit is ${MAX_YAML_DEPTH} levels` };
  }
  return { message: err instanceof Error ? err.message : String(err) };
}

/**
 * How many values `value` has once aliases are expanded, counting up to just past `limit`.
 * js-yaml shares an anchored value between its aliases, so a "billion laughs" document is
 * small in memory but endless to anything that walks or copies it.
 */
export function expandedSize(value: unknown, limit: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && count <= limit) {
    const item = stack.pop();
    count++;
    if (Array.isArray(item)) {
      for (const child of item) stack.push(child);
    } else if (typeof item === 'object' && item !== null) {
      for (const key in item) stack.push((item as Record<string, unknown>)[key]);
    }
  }
  return count;
}

export type FieldPath = readonly (string | number)[];

export interface SourcePosition {
  /** 1-based. */
  line: number;
  column: number;
}

interface PositionNode {
  line: number;
  column: number;
  /** A mapping key (followed by `:`), as opposed to a value or a sequence item. */
  isKey: boolean;
  result: unknown;
  children: PositionNode[];
}

/**
 * Where `path` is in the document: the position of the last key (or list item) of the path
 * that exists, following merge keys into their anchors. Reads the document again with a
 * listener; callers keep the returned function (it caches the tree).
 */
export function positionIndex(chunk: YamlChunk): (path: FieldPath) => SourcePosition {
  let lines: ReturnType<typeof prepareLines> | null = null;
  const slow = listenerIndex(chunk);
  return (path) => {
    if (lines === null) lines = prepareLines(chunk.text);
    const fast = lines && blockPosition(lines, path);
    return fast ? { line: fast.line + chunk.lineOffset + 1, column: fast.column + 1 } : slow(path);
  };
}

/** The positions as js-yaml sees them: every node of the document, from a second read with a listener. */
export function listenerIndex(chunk: YamlChunk): (path: FieldPath) => SourcePosition {
  let root: PositionNode | undefined;
  const anchors = new Map<unknown, PositionNode>();
  const build = (): PositionNode => {
    const top: PositionNode = { line: 0, column: 0, isKey: false, result: undefined, children: [] };
    const stack: PositionNode[] = [top];
    const listener = (event: 'open' | 'close', state: yaml.State): void => {
      const s = state as unknown as { position: number; line: number; lineStart: number; result: unknown; anchor: string | null; input: string };
      if (event === 'open') {
        // "open" fires before the blanks and comments ahead of the node are skipped.
        let p = s.position;
        let line = s.line;
        let lineStart = s.lineStart;
        for (;;) {
          const c = s.input.charCodeAt(p);
          if (c === 0x20 || c === 0x09 || c === 0x0d) p++;
          else if (c === 0x0a) {
            lineStart = ++p;
            line++;
          }
          else if (c === 0x23) while (p < s.input.length && s.input.charCodeAt(p) !== 0x0a) p++;
          else break;
        }
        const node: PositionNode = { line, column: p - lineStart, isKey: false, result: undefined, children: [] };
        stack[stack.length - 1]?.children.push(node);
        stack.push(node);
        return;
      }
      const node = stack.pop();
      if (!node) return;
      node.result = s.result;
      let p = s.position;
      while (s.input.charCodeAt(p) === 0x20 || s.input.charCodeAt(p) === 0x09) p++;
      node.isKey = s.input.charCodeAt(p) === 0x3a && (typeof s.result === 'string' || typeof s.result === 'number' || typeof s.result === 'boolean');
      if (s.anchor && typeof s.result === 'object' && s.result !== null) anchors.set(s.result, node);
    };
    try {
      yaml.load(chunk.text, { schema: KUBECTL_SCHEMA, maxDepth: MAX_YAML_DEPTH, listener } as yaml.LoadOptions);
    } catch {
      // Positions are best effort: a document that loaded once loads again.
    }
    return top.children[0] ?? top;
  };
  const at = (node: PositionNode): SourcePosition => ({ line: node.line + chunk.lineOffset + 1, column: node.column + 1 });
  return (path) => {
    root ??= build();
    let node = root;
    let found = node;
    for (const segment of path) {
      const next = childAt(node, segment, anchors, 0);
      if (!next) break;
      found = next.pointer;
      node = next.value;
    }
    return at(found);
  };
}

/** The child of a mapping (by key) or sequence (by index): the node to report and the node to descend into. */
function childAt(
  node: PositionNode,
  segment: string | number,
  anchors: Map<unknown, PositionNode>,
  depth: number,
): { pointer: PositionNode; value: PositionNode } | undefined {
  if (depth > 10) return undefined;
  // A flow collection at the root of a document (a JSON file) is reported twice, nested in itself.
  const only = node.children.length === 1 ? node.children[0] : undefined;
  if (only && !only.isKey && only.result === node.result && typeof node.result === 'object') return childAt(only, segment, anchors, depth + 1);
  const target = anchors.get(node.result) !== node && node.children.length === 0 ? anchors.get(node.result) : undefined;
  if (target) return childAt(target, segment, anchors, depth + 1);
  if (Array.isArray(node.result)) {
    if (typeof segment !== 'number') return undefined;
    const item = node.children[segment];
    return item ? { pointer: item, value: item } : undefined;
  }
  const merges: PositionNode[] = [];
  for (let i = 0; i < node.children.length; i++) {
    const child = node.children[i];
    if (!child?.isKey) continue;
    const value = node.children[i + 1];
    const valueNode = value && !value.isKey ? value : child;
    if (String(child.result) === String(segment)) return { pointer: child, value: valueNode };
    if (child.result === '<<' && value) merges.push(value);
  }
  for (const merge of merges) {
    const sources = merge.children.length > 0 && Array.isArray(merge.result) ? merge.children : [merge];
    for (const source of sources) {
      const found = childAt(source, segment, anchors, depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}
