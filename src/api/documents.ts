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
import { describe } from './shape.js';

export { formatFieldPath } from './shape.js';
import { duplicateKeyMessage } from './strict-fields.js';
import { isRecord, POD_TEMPLATE_KINDS } from './workloads.js';
import { decodeChunk, positionIndex, splitDocuments, type FieldPath, type SourcePosition, type YamlChunk } from './yaml.js';

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

function tooLarge(bytes: number): string {
  return `the document is ${(bytes / 1024 / 1024).toFixed(1)} MiB, more than the apiserver accepts for one object (Request entity too large: limit is ${MAX_OBJECT_BYTES}): split it`;
}
const CORE_API_VERSION = 'v1';
/** js-yaml's reason for a key given twice in one mapping (named by `duplicateKeyMessage`). */
const DUPLICATE_KEY = 'duplicated mapping key';
const HELM_HINT = 'this looks like an unrendered template ({{ … }}): render it first, e.g. `helm template RELEASE CHART | probelet check -`';

/**
 * Receives each object as soon as its document is decoded, instead of the load keeping it:
 * a caller that is done with an object when the call returns (`check`) lets it die young, so
 * 50,000 objects never sit in memory together.
 */
export type ObjectSink = (object: ManifestObject) => void;

/** Every object of every document of `text` (named `source` in messages); with `sink`, objects go there instead of `objects`. */
export function parseManifestDocuments(text: string, source: string, sink?: ObjectSink): ManifestLoad {
  const load: ManifestLoad = { objects: [], problems: [], skipped: [] };
  const add: ObjectSink = sink ?? ((object) => load.objects.push(object));
  let document = 0;
  for (const chunk of splitDocuments(text)) {
    if (isBlank(chunk.text)) continue;
    document++;
    if (chunk.text.length > MAX_OBJECT_BYTES && !LIST_DOCUMENT.test(chunk.text)) {
      load.problems.push({ source, document, line: firstContentLine(chunk), column: 1, message: tooLarge(chunk.text.length) });
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
    addObject(load, add, decoded.value, { source, document, position, chunk }, undefined, false);
  }
  return load;
}

interface DocumentContext {
  source: string;
  document: number;
  chunk: YamlChunk;
  position: (path: FieldPath) => SourcePosition;
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
  const expected = POD_TEMPLATE_KINDS[kindText];
  if (expected === undefined) {
    load.skipped.push({ source: ctx.source, document: ctx.document, line: at.line, apiVersion: versionText, kind: kindText, name });
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
  const texts: (string | Error)[] = [];
  for (const file of files) {
    try {
      if (file === STDIN_PATH) texts.push(await (options.readStdin ?? (() => readStdin(budget)))());
      else texts.push(await readWithin(createReadStream(file), budget));
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
    const one = parseManifestDocuments(text ?? '', source, sink && ((object) => (sunk++, sink(object))));
    if (walked.has(file) && isNotManifest(one, sunk)) {
      (load.notManifests ??= []).push(source);
      return;
    }
    load.objects.push(...one.objects);
    load.problems.push(...one.problems);
    load.skipped.push(...one.skipped);
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

async function readStdin(budget: { left: number }): Promise<string> {
  return readWithin(process.stdin, budget);
}

class InputTooLarge extends Error {}

/** Reads `input` to its end as UTF-8 and takes its size from `budget`; throws InputTooLarge (taking nothing) once it holds more than is left. */
async function readWithin(input: AsyncIterable<unknown>, budget: { left: number }): Promise<string> {
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
  return Buffer.concat(chunks).toString('utf8');
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
