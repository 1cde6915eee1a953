/**
 * The API server's checks of a core/v1 Secret that probelet reads from manifests (as pull
 * Secrets and volumes): the decoding of `data` (base64) and `ValidateSecret`'s rules for the
 * docker config types. A Secret the API server would refuse is refused here with its words,
 * instead of being read as no credentials at all (the pull then went anonymous without a word).
 */
import { goBase64Decode } from '../util/go-base64.js';
import { cannotUnmarshal, goJsonKind, unmarshalIntoMapError } from '../util/go-json.js';
import { invalid, invalidObjectMessage, required, type FieldError } from './field-error.js';
import { isRecord } from './workloads.js';
import type { FieldPath } from './yaml.js';

/** `kubernetes.io/dockerconfigjson` and its key (core/v1 types.go). */
export const DOCKER_CONFIG_JSON_TYPE = 'kubernetes.io/dockerconfigjson';
export const DOCKER_CONFIG_JSON_KEY = '.dockerconfigjson';
/** The legacy `kubernetes.io/dockercfg` and its key. */
export const DOCKERCFG_TYPE = 'kubernetes.io/dockercfg';
export const DOCKERCFG_KEY = '.dockercfg';

/** The docker config types and the key each must hold. */
const DOCKER_CONFIG_KEYS: Readonly<Record<string, string>> = {
  [DOCKER_CONFIG_JSON_TYPE]: DOCKER_CONFIG_JSON_KEY,
  [DOCKERCFG_TYPE]: DOCKERCFG_KEY,
};

/** The key a docker config Secret's `type` keeps its config under, or undefined for another type. */
export function dockerConfigKey(type: string | undefined): string | undefined {
  return type !== undefined && Object.hasOwn(DOCKER_CONFIG_KEYS, type) ? DOCKER_CONFIG_KEYS[type] : undefined;
}

/** What ValidateSecret prints instead of a Secret's bytes. */
const REDACTED = '<secret contents redacted>';

/** A reason the API server refuses a Secret: where in the object, and the message with its fix. */
export interface SecretRefusal {
  path: FieldPath;
  message: string;
}

const BASE64_FIX = 'values under data are base64 (e.g. `base64 -w0 FILE`); put plain text under stringData instead';
const STRING_FIX = 'each value under data or stringData is one string: quote it (a JSON document under stringData is written as a YAML block `|` or a quoted string, not as a mapping)';

/** The decoder's refusal, as the API server words it (`Secret in version "v1" cannot be handled as a Secret: …`). */
function undecodable(path: FieldPath, error: string, fix: string): SecretRefusal[] {
  return [{ path, message: `Secret in version "v1" cannot be handled as a Secret: ${error}; ${fix}` }];
}

function dockerConfigFix(type: string, key: string): string {
  const shape = type === DOCKER_CONFIG_JSON_TYPE ? '{"auths":{"REGISTRY":{"username":"USER","password":"PASSWORD"}}}' : '{"REGISTRY":{"username":"USER","password":"PASSWORD"}}';
  return `a ${type} Secret holds a Docker config JSON object under ${key} (base64 under data, or as text under stringData), e.g. ${shape}; \`kubectl create secret docker-registry NAME --docker-server=REGISTRY --docker-username=USER --docker-password=PASSWORD --dry-run=client -o yaml\` writes one`;
}

/**
 * Why the API server would refuse `secret` (a decoded `kind: Secret` object), or none. The
 * decoder's error comes first and alone, as the API server stops there (`Secret in version
 * "v1" cannot be handled as a Secret: illegal base64 data at input byte 4`, or a value that is
 * not a string: `json: cannot unmarshal object into Go struct field Secret.stringData of type
 * string`) — the first in the order kubectl sends the object, its keys sorted (`data` before
 * `stringData`); then ValidateSecret's, on `data` with `stringData` merged in, as the API server
 * merges it.
 */
export function secretRefusals(secret: Record<string, unknown>): SecretRefusal[] {
  const data = new Map<string, { bytes: Buffer; path: FieldPath }>();
  if (isRecord(secret['data'])) {
    for (const [key, value] of sortedEntries(secret['data'])) {
      if (value === null) continue;
      if (typeof value !== 'string') return undecodable(['data', key], cannotUnmarshal(goJsonKind(value), '[]byte', { struct: 'Secret', path: 'data' }), STRING_FIX);
      const decoded = goBase64Decode(value);
      if ('error' in decoded) return undecodable(['data', key], decoded.error, BASE64_FIX);
      data.set(key, { bytes: decoded.bytes, path: ['data', key] });
    }
  }
  if (isRecord(secret['stringData'])) {
    for (const [key, value] of sortedEntries(secret['stringData'])) {
      if (value === null) continue;
      if (typeof value !== 'string') return undecodable(['stringData', key], cannotUnmarshal(goJsonKind(value), 'string', { struct: 'Secret', path: 'stringData' }), STRING_FIX);
      data.set(key, { bytes: Buffer.from(value, 'utf8'), path: ['stringData', key] });
    }
  }
  const type = typeof secret['type'] === 'string' ? secret['type'] : '';
  const key = dockerConfigKey(type);
  if (key === undefined) return [];
  const field = `data[${key}]`;
  const entry = data.get(key);
  let error: FieldError | undefined;
  let path: FieldPath = isRecord(secret['data']) ? ['data'] : ['type'];
  if (!entry) error = required(field);
  else {
    const why = unmarshalIntoMapError(entry.bytes);
    if (why !== undefined) error = invalid(field, REDACTED, why);
    path = entry.path;
  }
  if (!error) return [];
  const metadata = isRecord(secret['metadata']) ? secret['metadata'] : {};
  const name = typeof metadata['name'] === 'string' ? metadata['name'] : '';
  return [{ path, message: `${invalidObjectMessage('Secret', name, [error])}; ${dockerConfigFix(type, key)}` }];
}

/** A map's entries in the order kubectl sends them (its JSON has sorted keys). */
function sortedEntries(map: Record<string, unknown>): [string, unknown][] {
  return Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * A Secret's data as the API server stores it: `data` decoded, `stringData` merged over it (it
 * wins). For a Secret {@link secretRefusals} passed, whose values are all strings and base64.
 */
export function secretData(secret: Record<string, unknown>): Map<string, Buffer> {
  const data = new Map<string, Buffer>();
  const strings = (field: unknown): [string, string][] => (isRecord(field) ? Object.entries(field).filter((e): e is [string, string] => typeof e[1] === 'string') : []);
  for (const [key, b64] of strings(secret['data'])) data.set(key, Buffer.from(b64, 'base64'));
  for (const [key, text] of strings(secret['stringData'])) data.set(key, Buffer.from(text, 'utf8'));
  return data;
}
