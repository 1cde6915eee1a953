/**
 * Type checks on a decoded Pod for the fields probelet reads. The apiserver's JSON decoder
 * rejects `command: "sleep 10"` or `periodSeconds: "10"` before validation runs; without
 * this step such values would travel into the runtime and prober and fail far from the
 * manifest line that caused them. Unknown fields are refused before this step (`strict-fields.ts`).
 */
import { isRecord } from './workloads.js';

type Shape =
  | 'string'
  /** int32, as most Kubernetes integer fields are. */
  | 'integer'
  /** int64 (terminationGracePeriodSeconds), within what a JSON number holds exactly. */
  | 'int64'
  | 'boolean'
  | 'intOrString'
  | { object: Readonly<Record<string, Shape>> }
  | { list: Shape }
  | { map: Shape };

const strings: Shape = { list: 'string' };

const httpGet: Shape = {
  object: {
    path: 'string',
    port: 'intOrString',
    host: 'string',
    scheme: 'string',
    httpHeaders: { list: { object: { name: 'string', value: 'string' } } },
  },
};
const tcpSocket: Shape = { object: { port: 'intOrString', host: 'string' } };

const probe: Shape = {
  object: {
    exec: { object: { command: strings } },
    httpGet,
    tcpSocket,
    grpc: { object: { port: 'integer', service: 'string' } },
    initialDelaySeconds: 'integer',
    timeoutSeconds: 'integer',
    periodSeconds: 'integer',
    successThreshold: 'integer',
    failureThreshold: 'integer',
    terminationGracePeriodSeconds: 'int64',
  },
};

const lifecycleHandler: Shape = {
  object: {
    exec: { object: { command: strings } },
    httpGet,
    tcpSocket,
    sleep: { object: { seconds: 'integer' } },
  },
};

const container: Shape = {
  object: {
    name: 'string',
    image: 'string',
    command: strings,
    args: strings,
    workingDir: 'string',
    env: { list: { object: { name: 'string', value: 'string' } } },
    ports: {
      list: {
        object: { name: 'string', containerPort: 'integer', hostPort: 'integer', protocol: 'string', hostIP: 'string' },
      },
    },
    livenessProbe: probe,
    readinessProbe: probe,
    startupProbe: probe,
    lifecycle: { object: { postStart: lifecycleHandler, preStop: lifecycleHandler } },
    restartPolicy: 'string',
    restartPolicyRules: {
      list: {
        object: { action: 'string', exitCodes: { object: { operator: 'string', values: { list: 'integer' } } } },
      },
    },
    targetContainerName: 'string',
  },
};

const podShape: Shape = {
  object: {
    apiVersion: 'string',
    kind: 'string',
    metadata: {
      object: {
        name: 'string',
        generateName: 'string',
        namespace: 'string',
        uid: 'string',
        labels: { map: 'string' },
        annotations: { map: 'string' },
      },
    },
    spec: {
      object: {
        containers: { list: container },
        initContainers: { list: container },
        ephemeralContainers: { list: container },
        restartPolicy: 'string',
        terminationGracePeriodSeconds: 'int64',
      },
    },
  },
};

/** A value of the wrong type: its path inside the pod and what was expected. */
export interface ShapeProblem {
  path: (string | number)[];
  /** `expected an integer, got "10"`. */
  message: string;
}

/** Every type mismatch in `pod`, as `<path>: expected <type>, got <value>`. */
export function checkPodShape(pod: unknown): string[] {
  return podShapeProblems(pod).map((p) => `${formatFieldPath(p.path) || '(root)'}: ${p.message}`);
}

/** Every type mismatch in `pod`, with its path. */
export function podShapeProblems(pod: unknown): ShapeProblem[] {
  const problems: ShapeProblem[] = [];
  check(pod, podShape, [], problems);
  return problems;
}

/**
 * A `null` in the pod and what the decoder makes of it: the Go zero value for a list item or
 * a map value (`containers: [null]` → `{}`, `command: [null, ls]` → `""`), and for a field of
 * an object, the field as if it were absent (`zero` undefined): Go's zero value for a
 * pointer, list or map is nil, and for a string or a number the value our code already
 * reads for an absent field. `image: null` threw `Cannot read properties of null` (issue 21).
 */
export interface NullValue {
  path: (string | number)[];
  /** undefined: the field is removed. */
  zero: unknown;
}

/**
 * Every `null` in `pod` (see {@link NullValue}), so that validation, the rules, the runtime
 * and the prober see what the apiserver would have stored, instead of a null nobody expects.
 */
export function nullValues(pod: unknown): NullValue[] {
  const found: NullValue[] = [];
  findNulls(pod, podShape, [], found);
  return found;
}

function findNulls(value: unknown, shape: Shape, path: (string | number)[], found: NullValue[]): void {
  if (value === null || value === undefined || typeof shape === 'string') return;
  if ('list' in shape) {
    if (!Array.isArray(value)) return;
    value.forEach((item, i) => {
      if (item === null || item === undefined) found.push({ path: [...path, i], zero: zeroOf(shape.list) });
      else findNulls(item, shape.list, [...path, i], found);
    });
  } else if ('map' in shape) {
    if (!isRecord(value)) return;
    for (const key of Object.keys(value)) {
      if (value[key] === null) found.push({ path: [...path, key], zero: zeroOf(shape.map) });
      else findNulls(value[key], shape.map, [...path, key], found);
    }
  } else if (isRecord(value)) {
    // Fields this walk does not know are removed too: a null is never what anyone reads.
    for (const key of Object.keys(value)) {
      // Own fields only: a key named `toString` or `constructor` is no field of the schema.
      const field = Object.hasOwn(shape.object, key) ? shape.object[key] : undefined;
      if (value[key] === null) found.push({ path: [...path, key], zero: undefined });
      else if (field !== undefined) findNulls(value[key], field, [...path, key], found);
    }
  }
}

function zeroOf(shape: Shape): unknown {
  if (shape === 'string') return '';
  if (shape === 'boolean') return false;
  if (typeof shape === 'string') return 0;
  if ('list' in shape) return null;
  return {};
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

function check(value: unknown, shape: Shape, path: (string | number)[], problems: ShapeProblem[]): void {
  // A JSON null decodes to the Go zero value, so it is never a type error.
  if (value === null || value === undefined) return;
  // `path` is one array pushed and popped along the walk (no copy per field); a problem keeps a copy.
  const fail = (expected: string) => problems.push({ path: [...path], message: `expected ${expected}, got ${describe(value)}` });
  if (shape === 'string') {
    if (typeof value !== 'string') fail('a string');
  } else if (shape === 'integer') {
    if (!Number.isInteger(value)) fail('an integer');
    else if ((value as number) < INT32_MIN || (value as number) > INT32_MAX) fail('a 32-bit integer');
  } else if (shape === 'int64') {
    if (!Number.isInteger(value)) fail('an integer');
    else if (!Number.isSafeInteger(value)) fail(`an integer within ±${Number.MAX_SAFE_INTEGER}`);
  } else if (shape === 'boolean') {
    if (typeof value !== 'boolean') fail('a boolean');
  } else if (shape === 'intOrString') {
    if (typeof value === 'string') return;
    if (!Number.isInteger(value)) fail('an integer or a string');
    else if ((value as number) < INT32_MIN || (value as number) > INT32_MAX) fail('a 32-bit integer or a string');
  } else if ('list' in shape) {
    if (!Array.isArray(value)) fail(shape.list === 'string' ? 'a list of strings' : 'a list');
    else {
      for (let i = 0; i < value.length; i++) {
        path.push(i);
        check(value[i], shape.list, path, problems);
        path.pop();
      }
    }
  } else if ('map' in shape) {
    if (!isRecord(value)) fail('a mapping');
    else {
      for (const key of Object.keys(value)) {
        path.push(key);
        check(value[key], shape.map, path, problems);
        path.pop();
      }
    }
  } else if (!isRecord(value)) {
    fail('a mapping');
  } else {
    for (const key in shape.object) {
      const item = value[key];
      if (item === null || item === undefined) continue;
      path.push(key);
      check(item, shape.object[key] as Shape, path, problems);
      path.pop();
    }
  }
}

/** A field path the apiserver's way: `spec.containers[0].livenessProbe`. */
export function formatFieldPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const segment of path) out += typeof segment === 'number' ? `[${segment}]` : out === '' ? segment : `.${segment}`;
  return out;
}

/** Short rendering of an offending value for messages. */
export function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (isRecord(value)) return 'a mapping';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}
