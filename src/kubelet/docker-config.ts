/**
 * A pull Secret's docker config as the kubelet decodes it (pkg/credentialprovider config.go:
 * `DockerConfigJSON` for `.dockerconfigjson`, `DockerConfig` for the legacy `.dockercfg`, each
 * entry's `auth` split into user and password), with `json.Unmarshal`'s errors word for word.
 * The kubelet fails the pull with that error rather than pulling anonymously: the API server
 * only checked that the content is a JSON object, so `{"auths": "x"}` or an `auth` that is no
 * base64 `user:password` reach the node.
 *
 * Go's decoder matches field names without regard to case (`Auths`, `USERNAME`), lets a later
 * key win, merges a repeated map, leaves a field as it was for `null`, keeps the first type
 * error while it goes on decoding, and stops at an error an entry's own decoding returns.
 */
import { goBase64Decode } from '../util/go-base64.js';
import { cannotUnmarshal, checkGoJson, goJsonKind, type GoJsonKind } from '../util/go-json.js';
import { isRecord } from '../api/workloads.js';
import type { RegistryAuth } from '../runtime/types.js';

/** One entry of a docker config: its location (`host[/path]`, maybe with a scheme) and credentials. */
export interface DockerConfigEntry {
  location: string;
  auth: RegistryAuth;
}

const CONFIG_JSON_TYPE = 'credentialprovider.DockerConfigJSON';
const CONFIG_TYPE = 'credentialprovider.DockerConfig';
const ENTRY_TYPE = 'credentialprovider.dockerConfigEntryWithAuth';

/** The entries of a `.dockerconfigjson` (`{"auths": {LOCATION: ENTRY}}`); throws json.Unmarshal's error. */
export function decodeDockerConfigJson(bytes: Buffer): DockerConfigEntry[] {
  const root = parseTop(bytes, CONFIG_JSON_TYPE);
  if (root === null) return [];
  let saved: string | undefined;
  let auths: Map<string, RegistryAuth> | undefined;
  for (const [key, value] of Object.entries(root)) {
    if (sameField(key, 'auths')) {
      if (value === null) auths = undefined;
      else if (isRecord(value)) {
        auths ??= new Map();
        for (const [location, entry] of Object.entries(value)) auths.set(location, decodeEntry(entry, 'auths'));
      } else saved ??= cannotUnmarshal(goJsonKind(value), CONFIG_TYPE, { struct: 'DockerConfigJSON', path: 'auths' });
    } else if (sameField(key, 'HttpHeaders')) {
      if (value === null) continue;
      if (!isRecord(value)) saved ??= cannotUnmarshal(goJsonKind(value), 'map[string]string', { struct: 'DockerConfigJSON', path: 'HttpHeaders' });
      else {
        for (const header of Object.values(value)) {
          if (header !== null && typeof header !== 'string') saved ??= cannotUnmarshal(goJsonKind(header), 'string', { struct: 'DockerConfigJSON', path: 'HttpHeaders' });
        }
      }
    }
  }
  if (saved !== undefined) throw new Error(saved);
  return [...(auths ?? [])].map(([location, auth]) => ({ location, auth }));
}

/** The entries of a legacy `.dockercfg` (`{LOCATION: ENTRY}`); throws json.Unmarshal's error. */
export function decodeDockerConfig(bytes: Buffer): DockerConfigEntry[] {
  const root = parseTop(bytes, CONFIG_TYPE);
  if (root === null) return [];
  return Object.entries(root).map(([location, entry]) => ({ location, auth: decodeEntry(entry, undefined) }));
}

/** The top-level object (null for JSON `null`); throws a syntax error or a top-level type error. */
function parseTop(bytes: Buffer, goType: string): Record<string, unknown> | null {
  const check = checkGoJson(bytes);
  if (check.syntaxError !== undefined) throw new Error(check.syntaxError);
  if (check.kind === 'null') return null;
  if (check.kind !== 'object') throw new Error(cannotUnmarshal(check.kind ?? 'number', goType));
  return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
}

/**
 * `DockerConfigEntry.UnmarshalJSON`: the entry's fields, then `auth` (base64 `user:password`,
 * padded or not) in place of user and password. Its errors end the whole decoding; a type
 * error is reported at the field of the config that holds the entry (`inField`), as Go's
 * decoder rewrites it there.
 */
function decodeEntry(value: unknown, inField: string | undefined): RegistryAuth {
  const fields: Record<string, string> = { username: '', password: '', email: '', auth: '' };
  let typeError: { kind: GoJsonKind; goType: string; field?: string } | undefined;
  if (value !== null && !isRecord(value)) typeError = { kind: goJsonKind(value), goType: ENTRY_TYPE };
  else if (value !== null) {
    for (const [key, field] of Object.entries(value)) {
      const name = Object.keys(fields).find((f) => sameField(key, f));
      if (name === undefined || field === null) continue;
      if (typeof field === 'string') fields[name] = field;
      else typeError ??= { kind: goJsonKind(field), goType: 'string', field: name };
    }
  }
  if (typeError) throw new Error(entryTypeError(typeError, inField));
  const auth = fields['auth'] ?? '';
  if (auth === '') return { username: fields['username'] ?? '', password: fields['password'] ?? '' };
  const decoded = goBase64Decode(auth, auth.trim().endsWith('='));
  if ('error' in decoded) throw new Error(decoded.error);
  const text = decoded.bytes.toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) throw new Error('unable to parse auth field, must be formatted as base64(username:password)');
  return { username: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** An entry's UnmarshalTypeError as it leaves json.Unmarshal (see the note on Go's rewrite in the tests). */
function entryTypeError(error: { kind: GoJsonKind; goType: string; field?: string }, inField: string | undefined): string {
  const path = [inField, error.field].filter((p): p is string => p !== undefined).join('.');
  if (inField !== undefined) return cannotUnmarshal(error.kind, error.goType, { struct: 'DockerConfigJSON', path });
  if (error.field !== undefined) return cannotUnmarshal(error.kind, error.goType, { struct: 'dockerConfigEntryWithAuth', path });
  return cannotUnmarshal(error.kind, error.goType);
}

/** Go's field matching: exact, else equal under (ASCII) case folding. */
function sameField(key: string, field: string): boolean {
  return key.length === field.length && key.toLowerCase() === field.toLowerCase();
}
