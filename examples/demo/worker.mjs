// The demo's background worker: no port, so its readiness is an exec probe
// (`cat $(READY_FILE)`), which succeeds once the worker has written that file after
// warming up for WARMUP_SECONDS. It then logs a line per job. The file is removed at
// start (a leftover from an earlier run must not make it ready early) and on SIGTERM.
// No dependencies.
import { rmSync, writeFileSync } from 'node:fs';

const readyFile = process.env.READY_FILE ?? '/tmp/probelet-demo-worker-ready';
const warmupSeconds = Number(process.env.WARMUP_SECONDS ?? 3);
const jobEverySeconds = Number(process.env.JOB_EVERY_SECONDS ?? 5);

const forget = () => rmSync(readyFile, { force: true });
forget();
console.log(`worker: warming up for ${warmupSeconds}s`);

let jobs = 0;
let jobTimer;
const warmup = setTimeout(() => {
  writeFileSync(readyFile, `ready since ${new Date().toISOString()}\n`);
  console.log(`worker: ready (${readyFile} written)`);
  jobTimer = setInterval(() => console.log(`worker: job ${++jobs} done`), jobEverySeconds * 1000);
}, warmupSeconds * 1000);

process.on('SIGTERM', () => {
  console.log(`worker: SIGTERM after ${jobs} jobs, shutting down`);
  clearTimeout(warmup);
  clearInterval(jobTimer);
  forget();
  process.exit(0);
});
