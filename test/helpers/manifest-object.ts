import type { ManifestObject } from '../../src/api/documents.js';

/** A bare Pod object `web` for code that needs a ManifestObject but no manifest text (every position is 1:1). */
export const bareWebPod: ManifestObject = {
  source: 'web.yaml',
  document: 1,
  line: 1,
  column: 1,
  apiVersion: 'v1',
  kind: 'Pod',
  name: 'web',
  namespace: 'default',
  value: {},
  position: () => ({ line: 1, column: 1 }),
};
