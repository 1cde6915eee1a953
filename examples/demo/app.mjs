// The demo's app container: an HTTP server that starts slowly, serves, and after a while
// goes unhealthy, so that every probe of the demo pod has something to say.
//
//   GET /started  503 until START_SECONDS have passed, then 200   (startup probe)
//   GET /ready    200 once started                                 (readiness probe)
//   GET /healthz  200 until UNHEALTHY_AFTER_SECONDS, then 500       (liveness probe)
//   anything else 200 "hello from the demo app"
//
// Times count from this process's start, so every restart goes through the same story
// again: start, ready, unhealthy, killed. No dependencies; exits cleanly on SIGTERM.
import { createServer } from 'node:http';

const port = Number(process.env.APP_PORT ?? 18573);
const startSeconds = Number(process.env.START_SECONDS ?? 5);
const unhealthyAfterSeconds = Number(process.env.UNHEALTHY_AFTER_SECONDS ?? 30);
const bornAt = Date.now();
const uptime = () => (Date.now() - bornAt) / 1000;

const server = createServer((req, res) => {
  const started = uptime() >= startSeconds;
  let status = 200;
  let body = 'hello from the demo app\n';
  if (req.url === '/started') {
    status = started ? 200 : 503;
    body = started ? 'started\n' : `starting (${uptime().toFixed(1)}s of ${startSeconds}s)\n`;
  } else if (req.url === '/ready') {
    status = started ? 200 : 503;
    body = started ? 'ready\n' : 'not ready: still starting\n';
  } else if (req.url === '/healthz') {
    const healthy = uptime() < unhealthyAfterSeconds;
    status = healthy ? 200 : 500;
    body = healthy ? 'ok\n' : `unhealthy: stuck since ${unhealthyAfterSeconds}s of uptime\n`;
  }
  console.log(`app: ${req.method} ${req.url} -> ${status} (uptime ${uptime().toFixed(1)}s)`);
  res.writeHead(status, { 'Content-Type': 'text/plain' });
  res.end(body);
});

server.listen(port, '127.0.0.1', () => console.log(`app: listening on 127.0.0.1:${port}, starting for ${startSeconds}s`));

process.on('SIGTERM', () => {
  console.log('app: SIGTERM, shutting down');
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
