#!/usr/bin/env node
/**
 * `npm run bench -- --scenario check [--objects N]`: `probelet check` over N (default
 * 50,000) realistic workload objects with probes — every rule and every budget, findings
 * placed on their lines — beside the time YAML parsing alone takes on the same text, in
 * the same process and run. Goal: 50,000 objects in under 5 s on 2 cores. Prints one JSON
 * line, then a table and the ratio to parse-only.
 */
import { performance } from 'node:perf_hooks';
import yaml from 'js-yaml';
import { parseManifestDocuments } from '../dist/api/documents.js';
import { KUBECTL_SCHEMA, splitDocuments } from '../dist/api/yaml.js';
import { toJson } from '../dist/check/output.js';
import { createChecker } from '../dist/check/run.js';

const GOAL_S = 5;
const GOAL_OBJECTS = 50_000;

/**
 * One workload of a realistic mix (Deployments, StatefulSets, DaemonSets, some with a native
 * sidecar): typical probe settings, some of the usual mistakes so findings are placed too.
 * @param {number} i
 */
function workload(i) {
  const kind = ['Deployment', 'Deployment', 'StatefulSet', 'DaemonSet'][i % 4];
  const port = i % 7 === 0 ? 'metrics' : 'http'; // every 7th: an unresolved named port (an error)
  const sidecar =
    i % 5 === 0
      ? `      initContainers:
        - name: proxy
          image: registry.example/proxy:1.2.${i % 10}
          restartPolicy: Always
          ports:
            - { name: admin, containerPort: 15000 }
          readinessProbe:
            httpGet: { path: /ready, port: admin }
`
      : '';
  return `apiVersion: apps/v1
kind: ${kind}
metadata:
  name: app-${i}
  namespace: team-${i % 40}
  labels:
    app.kubernetes.io/name: app-${i}
    app.kubernetes.io/part-of: shop
spec:
${kind === 'DaemonSet' ? '' : `  replicas: ${1 + (i % 3)}\n`}  selector:
    matchLabels: { app.kubernetes.io/name: app-${i} }
  template:
    metadata:
      labels: { app.kubernetes.io/name: app-${i} }
      annotations:
        prometheus.io/scrape: "true"
    spec:
      terminationGracePeriodSeconds: ${i % 3 === 0 ? 60 : 30}
${sidecar}      containers:
        - name: app
          image: registry.example/app-${i}:1.${i % 20}.0
          args: [--port=8080, --log-level=info]
          env:
            - { name: CACHE_TTL, value: "300" }
            - name: POD_NAME
              valueFrom: { fieldRef: { fieldPath: metadata.name } }
          ports:
            - { name: http, containerPort: 8080, protocol: TCP }
          resources:
            requests: { cpu: 100m, memory: 128Mi }
            limits: { memory: 256Mi }
          startupProbe:
            httpGet: { path: /healthz, port: http }
            periodSeconds: 5
            failureThreshold: ${12 + (i % 24)}
          readinessProbe:
            httpGet: { path: /ready, port: ${port} }
            periodSeconds: 10
          livenessProbe:
            httpGet: { path: /healthz, port: http }
            periodSeconds: 10
            timeoutSeconds: ${1 + (i % 3)}
            failureThreshold: 6
`;
}

/** @param {() => void} fn  @param {number} runs  best wall time and its CPU time, in seconds */
function best(fn, runs) {
  let wall = Infinity;
  let cpu = Infinity;
  for (let r = 0; r < runs; r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    fn();
    const w = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    if (w < wall) {
      wall = w;
      cpu = (c.user + c.system) / 1e6;
    }
  }
  return { wall, cpu };
}

function main() {
  const argv = process.argv.slice(2);
  const at = argv.indexOf('--objects');
  const n = at >= 0 ? Number(argv[at + 1]) : 50_000;
  const runs = Number(process.env['BENCH_RUNS'] ?? 3);
  if (!Number.isInteger(n) || n <= 0) throw new Error('--objects must be a positive integer');

  const text = Array.from({ length: n }, (_, i) => workload(i)).join('---\n');
  const bytes = Buffer.byteLength(text);

  // Parse only: js-yaml over every document with the kubectl schema, nothing else.
  const parse = best(() => {
    for (const chunk of splitDocuments(text)) yaml.load(chunk.text, { schema: KUBECTL_SCHEMA });
  }, runs);
  /** @type {{ findings: unknown[], containers: unknown[], problems: unknown[] } | undefined} */
  let result;
  const check = best(() => {
    // As `probelet check` does: each object checked as it is decoded, then dropped.
    const checker = createChecker({ startupTimes: new Map() });
    result = checker.finish(parseManifestDocuments(text, 'bench.yaml', (object) => checker.add(object)).problems);
  }, runs);
  const json = best(() => void toJson(/** @type {any} */ (result)), 1);
  if (!result) throw new Error('no result');

  const line = {
    scenario: 'check',
    objects: n,
    megabytes: Number((bytes / 1024 / 1024).toFixed(1)),
    findings: result.findings.length,
    containers: result.containers.length,
    problems: result.problems.length,
    parseOnlyS: round(parse.wall),
    parseOnlyCpuS: round(parse.cpu),
    checkS: round(check.wall),
    checkCpuS: round(check.cpu),
    jsonOutputS: round(json.wall),
    objectsPerS: Math.round(n / check.wall),
    ratioToParse: round(check.wall / parse.wall),
    cpuRatioToParse: round(check.cpu / parse.cpu),
    goalS: GOAL_S,
    /** The goal is for 50,000 objects; other sizes are scaled to it. */
    withinGoal: ((check.wall + json.wall) * GOAL_OBJECTS) / n < GOAL_S,
  };
  process.stdout.write(`${JSON.stringify(line)}\n\n`);
  const rows = [
    ['YAML parse only (js-yaml, kubectl schema)', parse.wall, parse.cpu],
    ['probelet check (load + every rule + budgets)', check.wall, check.cpu],
    ['  + JSON output', json.wall, json.cpu],
  ];
  process.stdout.write(`${''.padEnd(46)} ${'wall'.padStart(8)} ${'cpu'.padStart(8)}\n`);
  for (const [label, w, c] of rows) process.stdout.write(`${String(label).padEnd(46)} ${Number(w).toFixed(2).padStart(6)} s ${Number(c).toFixed(2).padStart(6)} s\n`);
  process.stdout.write(
    `\ncheck / parse-only = ${line.ratioToParse}× wall, ${line.cpuRatioToParse}× cpu, for ${n} objects (${line.findings} findings, ${line.containers} containers); goal ${GOAL_OBJECTS} objects < ${GOAL_S} s${n === GOAL_OBJECTS ? '' : ' (scaled)'}: ${line.withinGoal ? 'met' : 'NOT met'}\n`,
  );
  process.stdout.write('(best of runs, measured on this machine now — shared with other work: compare ratios, not seconds)\n');
}

/** @param {number} x */
function round(x) {
  return Math.round(x * 1000) / 1000;
}

// Piped into `head`: stop quietly.
process.stdout.on('error', () => process.exit(0));
main();
