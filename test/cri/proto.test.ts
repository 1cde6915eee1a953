/**
 * `src/runtime/cri/cri.proto` is a hand-written subset of CRI `runtime.v1`: every message,
 * field (number, repetition), enum value and method it declares must match the published
 * API. The reference here is the `runtime.v1` FileDescriptorProto that containerd's binary
 * embeds (gzipped): the schema of the very server the CRI tests talk to.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
// protobufjs's descriptor extension is CommonJS only.
const protobuf = require('protobufjs') as typeof import('protobufjs');
const descriptor = require('protobufjs/ext/descriptor') as {
  FileDescriptorProto: { decode(b: Uint8Array): FileDescriptor };
};

interface FieldDescriptor {
  name: string;
  number: number;
  label: number;
}
interface FileDescriptor {
  package: string;
  messageType: { name: string; field: FieldDescriptor[] }[];
  enumType: { name: string; value: { name: string; number: number }[] }[];
  service: { name: string; method: { name: string; inputType: string; outputType: string }[] }[];
}

const CONTAINERD = '/usr/bin/containerd';
const PROTO = fileURLToPath(new URL('../../src/runtime/cri/cri.proto', import.meta.url));
const LABEL_REPEATED = 3;

/** The embedded runtime.v1 descriptor: the gzip stream that decodes to it. */
function embeddedRuntimeV1(): FileDescriptor | undefined {
  const binary = readFileSync(CONTAINERD);
  const magic = Buffer.from([0x1f, 0x8b, 0x08]);
  for (let at = binary.indexOf(magic); at >= 0; at = binary.indexOf(magic, at + 1)) {
    try {
      const file = descriptor.FileDescriptorProto.decode(gunzipSync(binary.subarray(at, at + 256 * 1024), { finishFlush: 2 }));
      if (file.package === 'runtime.v1' && file.messageType.length > 50) return file;
    } catch {
      // Not a gzip stream, or not a descriptor.
    }
  }
  return undefined;
}

const suite = existsSync(CONTAINERD) ? describe : describe.skip;
suite(existsSync(CONTAINERD) ? 'cri.proto' : `cri.proto — skipped: no ${CONTAINERD} to compare with (npm run cri:up installs it)`, () => {
  it('declares only messages, fields, enum values and methods that containerd’s runtime.v1 has, with the same numbers', () => {
    const upstream = embeddedRuntimeV1();
    expect(upstream, 'runtime.v1 descriptor in the containerd binary').toBeDefined();
    if (!upstream) return;
    const ours = new protobuf.Root().loadSync(PROTO, { keepCase: true }).lookup('runtime.v1') as import('protobufjs').Namespace;
    const mismatches: string[] = [];
    let fields = 0;
    for (const type of ours.nestedArray) {
      if (type instanceof protobuf.Type) {
        const theirs = upstream.messageType.find((m) => m.name === type.name);
        if (!theirs) {
          mismatches.push(`message ${type.name} missing upstream`);
          continue;
        }
        for (const field of type.fieldsArray) {
          fields++;
          const match = theirs.field.find((f) => f.name === field.name);
          if (!match || match.number !== field.id) mismatches.push(`${type.name}.${field.name} = ${field.id}, upstream ${match?.number ?? 'none'}`);
          else if (!(field instanceof protobuf.MapField) && field.repeated !== (match.label === LABEL_REPEATED)) mismatches.push(`${type.name}.${field.name} repetition`);
        }
      } else if (type instanceof protobuf.Enum) {
        const theirs = upstream.enumType.find((e) => e.name === type.name);
        for (const [name, number] of Object.entries(type.values)) {
          if (theirs?.value.find((v) => v.name === name)?.number !== number) mismatches.push(`enum ${type.name}.${name} = ${number}`);
        }
      } else if (type instanceof protobuf.Service) {
        const theirs = upstream.service.find((s) => s.name === type.name);
        for (const method of type.methodsArray) {
          const match = theirs?.method.find((m) => m.name === method.name);
          if (match?.inputType !== `.runtime.v1.${method.requestType}` || match.outputType !== `.runtime.v1.${method.responseType}`) {
            mismatches.push(`rpc ${type.name}.${method.name}`);
          }
        }
      }
    }
    expect(mismatches).toEqual([]);
    expect(fields).toBeGreaterThan(80);
  });
});
