/**
 * What the manifest itself says, before the apiserver's defaults: the rules see the pod with
 * its defaults applied (`ContainerContext.pod`), where an unset `timeoutSeconds` reads 1 like a
 * written one, so a message that says "(the default)" must look at the object as decoded.
 */
import type { FieldPath, ManifestObject } from '../api/documents.js';

/** The value at `path` in the object as written, `undefined` where nothing (or null) is written. */
export function writtenValue(object: ManifestObject, path: FieldPath): unknown {
  let value: unknown = object.value;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string | number, unknown>)[key];
  }
  return value ?? undefined;
}

/** Whether the field at `path` is written in the manifest (not left to its default). */
export function isWritten(object: ManifestObject, path: FieldPath): boolean {
  return writtenValue(object, path) !== undefined;
}
