/**
 * Manifests as users have them: files, folders, stdin; multi-document YAML, JSON, Lists
 * (`kubectl get -o yaml`), every workload kind, and everything else (Services, ConfigMaps,
 * CRDs…) beside them. Every command reads its input here. Objects probelet has nothing to
 * do with are skipped, not refused; every problem is reported with file, line and column,
 * and one bad document never hides the others.
 */
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { secretRefusals } from './secret-validation.js';
import { describe } from './shape.js';

export { formatFieldPath } from './shape.js';
import { duplicateKeyMessage } from './strict-fields.js';
import { isRecord, POD_TEMPLATE_KINDS } from './workloads.js';
import { decodeChunk, invalidUtf8Lines, positionIndex, splitDocuments, type FieldPath, type SourcePosition, type YamlChunk } from './yaml.js';

export type { FieldPath, SourcePosition } from './yaml.js';

/** A Pod, a workload or a PodTemplate found in a manifest, with where it came from. */
export interface ManifestObject {
  /** The file name, or `<stdin>`. */
  source: string;
  /** 1-based number of the document in the file, counting only documents with content. */
  document: number;
  /** Index in the items of a List, when the object came from one. */
  item?: number;
  /** Where the object starts (1-based). */
  line: number;
  column: number;
  apiVersion: string;
  kind: string;
  /** `metadata.name` ('' when absent). */
  name: string;
  /** `metadata.namespace` ('' when absent). */
  namespace: string;
  /** The object as decoded (never mutated by the loader's users: copy before changing). */
  value: Record<string, unknown>;
  /** Line and column of a field inside the object (`['spec','template','spec','containers',0]`); the nearest existing parent when absent. */
  position(path: FieldPath): SourcePosition;
}

/** Something in the input that is not a usable object. Never thrown: collected, so every problem is reported. */
export interface ManifestProblem {
  source: string;
  document?: number;
  item?: number;
  line?: number;
  column?: number;
  /** The field path inside the object, when the problem is about a field. */
  field?: string;
  message: string;
  /** The document is not a Kubernetes object at all (no apiVersion and no kind): see {@link ManifestLoad.notManifests}. */
  notObject?: true;
}

/** An object of a kind that has no pod template (Service, ConfigMap, a CRD…): passed over. */
export interface ManifestSkip {
  source: string;
  document: number;
  line: number;
  apiVersion: string;
  kind: string;
  name: string;
}

export interface ManifestLoad {
  objects: ManifestObject[];
  problems: ManifestProblem[];
  skipped: ManifestSkip[];
  /**
   * The ConfigMap and Secret documents among the skipped ones, as decoded: what a runtime that
   * mounts `configMap`/`secret` volumes reads them from (there is no API server).
   */
  configs?: ManifestConfig[];
  /**
   * Files found by walking a folder none of whose documents is a Kubernetes object (a
   * behaviour file, a values file): passed over with a note, not reported as problems.
   * A file named on the command line is never passed over: the user meant it.
   */
  notManifests?: string[];
  /** Files found by walking a folder that were not read: their names are not `*.yaml`, `*.yml` or `*.json`. */
  notRead?: string[];
  /** Files found by walking a folder that {@link LoadOptions.exclude} left out. */
  excluded?: string[];
}

/** A ConfigMap or Secret of the manifests (see {@link ManifestLoad.configs}). */
export interface ManifestConfig {
  kind: 'ConfigMap' | 'Secret';
  /** `metadata.namespace` ('' when absent). */
  namespace: string;
  name: string;
  value: Record<string, unknown>;
}

/** `file:line:col: document N[, items[i]]: field: message`, leaving out what is not known. */
export function formatProblem(problem: ManifestProblem): string {
  let where = problem.source;
  if (problem.line !== undefined) where += `:${problem.line}${problem.column !== undefined ? `:${problem.column}` : ''}`;
  const parts = [where];
  if (problem.document !== undefined) parts.push(`document ${problem.document}${problem.item !== undefined ? `, items[${problem.item}]` : ''}`);
  if (problem.field) parts.push(problem.field);
  parts.push(problem.message);
  return parts.join(': ');
}

const LIST_KINDS: ReadonlySet<string> = new Set(['List', 'PodList']);

/**
 * The apiserver's limit for one request body (`Request entity too large: limit is 3145728`).
 * A larger document is refused before it is parsed, unless it is a List (`kubectl get -o
 * yaml` of many objects), whose items are judged one by one.
 */
const MAX_OBJECT_BYTES = 3 * 1024 * 1024;
/**
 * All the input one command reads (every file, folder and stdin together), so that
 * `/dev/zero`, a runaway pipe or a mistaken path is refused instead of filling memory
 * (`Invalid string length` at 512 MiB, issue 21). Well above the 50,000-object benchmark's
 * 66.7 MB; more is a mistake or should be split over several runs.
 */
export const MAX_INPUT_BYTES = 256 * 1024 * 1024;

function inputTooLarge(): string {
  return `more than ${MAX_INPUT_BYTES / 1024 / 1024} MiB of input in all, the most probelet reads at once (3 MiB a document): split the input over several runs`;
}
/** A top-level `kind: List` (column 0 in YAML; the first indentation level of pretty-printed JSON), never one nested in an annotation or an item. */
const LIST_DOCUMENT = /^(?:["']?kind["']?|[ \t]{1,4}"kind")[ \t]*:[ \t]*["']?(?:Pod)?List\b/m;

/**
 * What etcd stores for one object (its default `--max-request-bytes`, 1.5 MiB): a larger one
 * is refused by the apiserver with etcd's words. Checked on the decoded object (aliases
 * expanded), so a List item or a small document whose aliases expand is held to it too.
 */
export const MAX_STORED_OBJECT_BYTES = 1.5 * 1024 * 1024;
/** The apiserver's limit for all of an object's annotations together (`TotalAnnotationSizeLimitB`). */
export const MAX_ANNOTATIONS_BYTES = 256 * 1024;

/** Measured only up to the limit: the message says "more than", never a size it did not count. */
function tooLargeToStore(): string {
  return `etcdserver: request is too large: the object takes more than ${MAX_STORED_OBJECT_BYTES} bytes as JSON (aliases expanded), the most etcd stores for one object: split it`;
}

/**
 * About how many bytes `value` takes as JSON, counting up to just past `limit` (then it stops):
 * shared (aliased) values are counted every time they appear, as the JSON would repeat them.
 */
export function approximateJsonBytes(value: unknown, limit: number): number {
  let bytes = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && bytes <= limit) {
    const item = stack.pop();
    if (typeof item === 'string') bytes += item.length + 2;
    else if (Array.isArray(item)) {
      bytes += 2 + item.length;
      for (const child of item) stack.push(child);
    } else if (typeof item === 'object' && item !== null) {
      bytes += 2;
      for (const key of Object.keys(item)) {
        bytes += key.length + 4;
        stack.push((item as Record<string, unknown>)[key]);
      }
    } else bytes += String(item).length;
  }
  return bytes;
}

/** Bytes of all annotations of `metadata` (keys and values, as the apiserver counts them); non-strings are for validation to name. */
function annotationsBytes(metadata: unknown): number {
  if (!isRecord(metadata) || !isRecord(metadata['annotations'])) return 0;
  let bytes = 0;
  for (const [key, value] of Object.entries(metadata['annotations'])) bytes += Buffer.byteLength(key) + (typeof value === 'string' ? Buffer.byteLength(value) : 0);
  return bytes;
}

function tooLarge(bytes: number): string {
  return `the document is ${(bytes / 1024 / 1024).toFixed(1)} MiB, more than the apiserver accepts for one object (Request entity too large: limit is ${MAX_OBJECT_BYTES}): split it`;
}
const CORE_API_VERSION = 'v1';
/** js-yaml's reason for a key given twice in one mapping (named by `duplicateKeyMessage`). */
const DUPLICATE_KEY = 'duplicated mapping key';
const HELM_HINT = 'this looks like an unrendered template ({{ … }}): render it first, e.g. `helm template RELEASE CHART | probelet check -`';

/**
 * What a file of bytes that are no text is (an image saved as .yaml, a binary): its bytes
 * would otherwise be read as YAML and blamed on a template or a syntax error. NUL bytes in its
 * first KiB, or a PNG's signature, tell it. Text with a bad UTF-8 sequence alone is text: the
 * reader refuses it with go-yaml's words and its line, as kubectl does.
 */
function binaryContent(text: string): string | undefined {
  const head = text.slice(0, 1024);
  if (!head.includes('\u0000') && !head.startsWith('\uFFFDPNG')) return undefined;
  const kind = head.startsWith('\uFFFDPNG') ? 'a PNG image' : head.startsWith('%PDF') ? 'a PDF document' : 'binary data';
  return `not YAML or JSON text: the file holds ${kind}, not a manifest`;
}

/**
 * Receives each object as soon as its document is decoded, instead of the load keeping it:
 * a caller that is done with an object when the call returns (`check`) lets it die young, so
 * 50,000 objects never sit in memory together.
 */
export type ObjectSink = (object: ManifestObject) => void;

/** Every object of every document of `text` (named `source` in messages); with `sink`, objects go there instead of `objects`. */
export function parseManifestDocuments(text: string, source: string, sink?: ObjectSink, badUtf8: ReadonlyMap<number, string> = new Map()): ManifestLoad {
  const load: ManifestLoad = { objects: [], problems: [], skipped: [] };
  const add: ObjectSink = sink ?? ((object) => load.objects.push(object));
  const binary = binaryContent(text);
  if (binary !== undefined) {
    load.problems.push({ source, line: 1, column: 1, message: binary });
    return load;
  }
  let document = 0;
  for (const chunk of splitDocuments(text)) {
    if (isBlank(chunk.text)) continue;
    document++;
    if (chunk.text.length > MAX_OBJECT_BYTES && !LIST_DOCUMENT.test(chunk.text)) {
      load.problems.push({ source, document, line: firstContentLine(chunk), column: 1, message: tooLarge(chunk.text.length) });
      continue;
    }
    const badLine = badUtf8.size > 0 ? firstBadLine(chunk, badUtf8) : undefined;
    if (badLine !== undefined) {
      load.problems.push({ source, document, line: badLine, message: badUtf8.get(badLine) ?? 'invalid UTF-8' });
      continue;
    }
    const decoded = decodeChunk(chunk);
    if (decoded.error) {
      const hint = chunk.text.includes('{{') ? `; ${HELM_HINT}` : '';
      const { line, column } = decoded.error.line !== undefined ? decoded.error : { line: firstContentLine(chunk), column: 1 };
      const message = decoded.error.message === DUPLICATE_KEY && line !== undefined && column !== undefined ? duplicateKeyMessage(text, line, column, 0) : decoded.error.message;
      load.problems.push({ source, document, line, column, message: message + hint });
      continue;
    }
    if (decoded.value === null || decoded.value === undefined) {
      document--; // a document of comments only
      continue;
    }
    const position = positionIndex(chunk);
    // Only a document this large, or with aliases, can hold an object etcd would not store.
    const measure = chunk.text.length > MAX_STORED_OBJECT_BYTES || chunk.text.includes('*');
    addObject(load, add, decoded.value, { source, document, position, chunk, measure }, undefined, false);
  }
  return load;
}

interface DocumentContext {
  source: string;
  document: number;
  chunk: YamlChunk;
  position: (path: FieldPath) => SourcePosition;
  /** Whether objects must be measured against {@link MAX_STORED_OBJECT_BYTES}. */
  measure: boolean;
}

function addObject(load: ManifestLoad, add: ObjectSink, value: unknown, ctx: DocumentContext, item: number | undefined, podListItem: boolean): void {
  const base: FieldPath = item === undefined ? [] : ['items', item];
  const at = ctx.position(base);
  const problem = (message: string, path: FieldPath = base, notObject = false): void => {
    const { line, column } = ctx.position(path);
    load.problems.push({ source: ctx.source, document: ctx.document, ...(item !== undefined ? { item } : {}), line, column, message, ...(notObject ? { notObject } : {}) });
  };
  if (!isRecord(value)) {
    problem(`expected a Kubernetes object (a mapping with apiVersion and kind), got ${describe(value)}`, base, item === undefined);
    return;
  }
  // Items of a typed PodList may omit their type, as the kubelet's own /pods output does.
  const object = podListItem ? { apiVersion: CORE_API_VERSION, kind: 'Pod', ...value } : value;
  const apiVersion = object['apiVersion'];
  const kind = object['kind'];
  const missing = [typeof apiVersion === 'string' && apiVersion !== '' ? '' : 'apiVersion', typeof kind === 'string' && kind !== '' ? '' : 'kind'].filter(Boolean);
  if (missing.length > 0) {
    problem(`${missing.map((f) => `${f} not set`).join(', ')}: every object needs apiVersion and kind (e.g. apiVersion: v1, kind: Pod)`, base, item === undefined && missing.length === 2);
    return;
  }
  const kindText = kind as string;
  const versionText = apiVersion as string;
  const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
  const name = typeof metadata['name'] === 'string' ? metadata['name'] : '';
  const namespace = typeof metadata['namespace'] === 'string' ? metadata['namespace'] : '';

  if (LIST_KINDS.has(kindText)) {
    if (item !== undefined) return problem(`a ${kindText} inside a list is not supported`);
    const items = object['items'] ?? [];
    if (!Array.isArray(items)) return problem(`items: expected a list, got ${describe(items)}`, ['items']);
    items.forEach((entry, i) => addObject(load, add, entry, ctx, i, kindText === 'PodList'));
    return;
  }
  // Own kinds only: `kind: toString` is no kind of ours (it read Object.prototype's).
  const expected = Object.hasOwn(POD_TEMPLATE_KINDS, kindText) ? POD_TEMPLATE_KINDS[kindText] : undefined;
  if (expected !== undefined && refusedForSize(object, expected.templatePath, ctx, problem, base)) return;
  if (expected === undefined) {
    if (kindText === 'Secret' && versionText === CORE_API_VERSION) {
      // A Secret the API server refuses is no Secret any pod can use: an input problem of its
      // own (never read as "no credentials" later), the other documents go on.
      const refused = secretRefusals(object);
      for (const r of refused) problem(r.message, [...base, ...r.path]);
      if (refused.length > 0) return;
    }
    load.skipped.push({ source: ctx.source, document: ctx.document, line: at.line, apiVersion: versionText, kind: kindText, name });
    if ((kindText === 'ConfigMap' || kindText === 'Secret') && versionText === CORE_API_VERSION) (load.configs ??= []).push({ kind: kindText, namespace, name, value: object });
    return;
  }
  if (expected.apiVersion !== versionText) {
    problem(`no matches for kind ${JSON.stringify(kindText)} in version ${JSON.stringify(versionText)}: use apiVersion: ${expected.apiVersion}`, [...base, 'apiVersion']);
    return;
  }
  const position = item === undefined ? ctx.position : (path: FieldPath) => ctx.position([...base, ...path]);
  add({
    source: ctx.source,
    document: ctx.document,
    ...(item !== undefined ? { item } : {}),
    line: at.line,
    column: at.column,
    apiVersion: versionText,
    kind: kindText,
    name,
    namespace,
    value: object,
    position,
  });
}

/**
 * The apiserver's size limits, checked before anything walks or copies the object: etcd's
 * for the whole object, and the total of annotations (the object's and its pod template's).
 * True when the object was refused (its problem reported).
 */
function refusedForSize(
  object: Record<string, unknown>,
  templatePath: readonly string[],
  ctx: DocumentContext,
  problem: (message: string, path?: FieldPath) => void,
  base: FieldPath,
): boolean {
  if (ctx.measure) {
    const bytes = approximateJsonBytes(object, MAX_STORED_OBJECT_BYTES);
    if (bytes > MAX_STORED_OBJECT_BYTES) {
      problem(tooLargeToStore());
      return true;
    }
  }
  let template: unknown = object;
  for (const key of templatePath) template = isRecord(template) && Object.hasOwn(template, key) ? template[key] : undefined;
  for (const [metadata, path] of [
    [object['metadata'], ['metadata', 'annotations']],
    [isRecord(template) && templatePath.length > 0 ? template['metadata'] : undefined, [...templatePath, 'metadata', 'annotations']],
  ] as const) {
    if (annotationsBytes(metadata) > MAX_ANNOTATIONS_BYTES) {
      // The apiserver's field.TooLong for metadata.annotations.
      problem(`${path.join('.')}: Too long: may not be more than ${MAX_ANNOTATIONS_BYTES} bytes`, [...base, ...path]);
      return true;
    }
  }
  return false;
}

/**
 * Only blank lines and comments. A linear scan, line by line: the regular expression it
 * replaces, `/^(?:\s|#[^\n]*)*$/`, backtracked exponentially on a banner of `#` above
 * content (each more `#` doubled the time; 30 of them took 40 s).
 */
function isBlank(text: string): boolean {
  return text.split('\n').every(isBlankOrCommentLine);
}

/** A line (without its `\n`) that is whitespace only, or a comment after optional whitespace. */
function isBlankOrCommentLine(line: string): boolean {
  const rest = line.trimStart();
  return rest === '' || rest.startsWith('#');
}

/** The first line (1-based, in the file) of `chunk` that is not UTF-8. */
function firstBadLine(chunk: YamlChunk, badUtf8: ReadonlyMap<number, string>): number | undefined {
  const lines = chunk.text.split('\n').length;
  for (let line = chunk.lineOffset + 1; line <= chunk.lineOffset + lines; line++) if (badUtf8.has(line)) return line;
  return undefined;
}

function firstContentLine(chunk: YamlChunk): number {
  const lines = chunk.text.split('\n');
  const index = lines.findIndex((l) => !isBlankOrCommentLine(l));
  return chunk.lineOffset + Math.max(index, 0) + 1;
}

/** The name `-` means standard input, as in `kubectl apply -f -`. */
export const STDIN_PATH = '-';

export interface LoadOptions {
  /** Reads standard input (tests pass their own). */
  readStdin?: () => Promise<string>;
  /** Objects go here as they are decoded, file by file, instead of into the load (see {@link ObjectSink}). */
  sink?: ObjectSink;
  /** Files found in a folder for which this is true are not read (`check`'s configured `exclude`). */
  exclude?: (file: string) => boolean;
  /** Named files too are passed over when they hold no Kubernetes object, as a folder's are (a hook handed every changed YAML file). */
  passOverNamed?: boolean;
}

const MANIFEST_EXTENSIONS = /\.(?:ya?ml|json)$/i;

/**
 * Every object of every path: files, folders (recursively, `*.yaml`, `*.yml`, `*.json`, in
 * name order) and `-` for stdin. A path that cannot be read is a problem of its own; the
 * other paths are still read.
 */
export async function loadManifests(paths: readonly string[], options: LoadOptions = {}): Promise<ManifestLoad> {
  const load: ManifestLoad = { objects: [], problems: [], skipped: [] };
  const files: string[] = [];
  /** Files found in a folder rather than named: these may be passed over when they are no manifest. */
  const walked = new Set<string>();
  for (const path of paths) {
    if (path === STDIN_PATH) {
      files.push(path);
      continue;
    }
    try {
      if ((await stat(path)).isDirectory()) {
        const found = await manifestFilesIn(path, (load.notRead ??= []));
        for (const file of found) {
          if (options.exclude?.(file)) (load.excluded ??= []).push(file);
          else {
            walked.add(file);
            files.push(file);
          }
        }
      } else {
        if (options.passOverNamed) walked.add(path);
        files.push(path);
      }
    } catch (err) {
      load.problems.push({ source: path, message: `cannot read: ${readReason(err)}` });
    }
  }
  // One after the other, within one budget for them all (MAX_INPUT_BYTES). An input that
  // does not fit is refused and its bytes dropped, so the inputs after it may still fit.
  const budget = { left: MAX_INPUT_BYTES };
  const texts: ({ text: string; badUtf8: Map<number, string> } | Error)[] = [];
  for (const file of files) {
    try {
      if (file === STDIN_PATH && options.readStdin) texts.push({ text: await options.readStdin(), badUtf8: new Map() });
      else texts.push(decodeUtf8(await readWithin(file === STDIN_PATH ? process.stdin : createReadStream(file), budget)));
    } catch (err) {
      texts.push(new Error(err instanceof InputTooLarge ? `not read: ${err.message}` : `cannot read: ${readReason(err)}`));
    }
  }
  files.forEach((file, i) => {
    const text = texts[i];
    const source = file === STDIN_PATH ? '<stdin>' : file;
    if (text instanceof Error) {
      load.problems.push({ source, message: text.message });
      return;
    }
    let sunk = 0;
    const sink = options.sink;
    const one = parseManifestDocuments(text?.text ?? '', source, sink && ((object) => (sunk++, sink(object))), text?.badUtf8);
    if (walked.has(file) && isNotManifest(one, sunk)) {
      (load.notManifests ??= []).push(source);
      return;
    }
    load.objects.push(...one.objects);
    load.problems.push(...one.problems);
    load.skipped.push(...one.skipped);
    if (one.configs) (load.configs ??= []).push(...one.configs);
  });
  return load;
}

/** Nothing in the file is a Kubernetes object, and nothing went wrong but that. */
function isNotManifest(one: ManifestLoad, sunk: number): boolean {
  return one.objects.length === 0 && sunk === 0 && one.skipped.length === 0 && one.problems.length > 0 && one.problems.every((p) => p.notObject === true);
}

/** The manifest files under `dir`; the other files go to `notRead` (those inside a hidden folder, such as `.git`, are not named). */
async function manifestFilesIn(dir: string, notRead: string[], hidden = false): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await manifestFilesIn(path, notRead, hidden || entry.name.startsWith('.'))));
    else if (entry.isFile() && MANIFEST_EXTENSIONS.test(entry.name)) files.push(path);
    else if (entry.isFile() && !hidden && !entry.name.startsWith('.')) notRead.push(path);
  }
  return files;
}

function readReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ENOENT') return 'no such file or directory';
  if (e.code === 'EACCES') return 'permission denied';
  if (e.code === 'EISDIR') return 'is a directory';
  return e.message ?? String(err);
}

class InputTooLarge extends Error {}

/** The text of `bytes`, and its lines that are not UTF-8 (their documents are refused, as kubectl does). */
function decodeUtf8(bytes: Buffer): { text: string; badUtf8: Map<number, string> } {
  return { text: bytes.toString('utf8'), badUtf8: invalidUtf8Lines(bytes) };
}

/** Reads `input` to its end and takes its size from `budget`; throws InputTooLarge (taking nothing) once it holds more than is left. */
async function readWithin(input: AsyncIterable<unknown>, budget: { left: number }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let read = 0;
  // Leaving the loop by a throw closes the stream.
  for await (const chunk of input) {
    const bytes = chunk as Buffer;
    read += bytes.length;
    if (read > budget.left) throw new InputTooLarge(inputTooLarge());
    chunks.push(bytes);
  }
  budget.left -= read;
  return Buffer.concat(chunks);
}

/** One line naming what was passed over, e.g. `skipped 3 objects probelet does not run (Service ×2, ConfigMap)`; '' when none. */
export function skippedNote(skipped: readonly ManifestSkip[]): string {
  if (skipped.length === 0) return '';
  const counts = new Map<string, number>();
  for (const s of skipped) counts.set(s.kind, (counts.get(s.kind) ?? 0) + 1);
  const kinds = [...counts].map(([kind, n]) => (n > 1 ? `${kind} ×${n}` : kind)).join(', ');
  return `skipped ${skipped.length} object${skipped.length === 1 ? '' : 's'} without a pod template (${kinds})`;
}

/** One line naming the files of a folder that hold no Kubernetes object; '' when none. */
export function notManifestsNote(files: readonly string[] | undefined): string {
  if (!files || files.length === 0) return '';
  return `skipped ${files.length} file${files.length === 1 ? '' : 's'} in the folder that hold${files.length === 1 ? 's' : ''} no Kubernetes object (${files.join(', ')})`;
}
