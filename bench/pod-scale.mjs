#!/usr/bin/env node
/**
 * `node bench/pod-scale.mjs [N…]` (after `npm run build`): one pod of N containers
 * (`sleep 300`, no probes) on the process runtime, `probelet run --timeout 2s`; prints the
 * wall time of the whole run (2 s of it the run itself) and the peak RSS, one JSON line per
 * N. Default N: 250 500 1000. Linear work per pod means the time after the first 2 s about
 * doubles with N. Measured 2026-11-27 on the shared 2-core machine: before (main) 250: 5.2 s,
 * 500: 17.9 s, 1000: 63.4 s; after: 500: 3.1–4.9 s, 1000: 4.1–7.9 s (peak RSS ≈ 105–125 MB).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/probelet.js', import.meta.url));
const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
const dir = mkdtempSync(join(tmpdir(), 'probelet-pod-scale-'));
try {
  for (const n of sizes.length > 0 ? sizes : [250, 500, 1000]) {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'scale' },
      spec: {
        terminationGracePeriodSeconds: 2,
        containers: Array.from({ length: n }, (_, i) => ({ name: `c${i}`, image: 'busybox', command: ['sleep', '300'] })),
      },
    };
    const file = join(dir, `pod-${n}.json`);
    writeFileSync(file, JSON.stringify(pod));
    const start = performance.now();
    const run = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, bin, 'run', file, '--timeout', '2s', '--listen', '127.0.0.1:0', '-o', 'json'], {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
    });
    const seconds = (performance.now() - start) / 1000;
    const rssKB = Number(run.stderr.trim().split('\n').at(-1));
    console.log(JSON.stringify({ containers: n, seconds: Number(seconds.toFixed(2)), peakRssMB: Math.round(rssKB / 1024), exit: run.status }));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
