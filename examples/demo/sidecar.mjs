// The demo's sidecar (a restartable init container): a tiny HTTP proxy in front of the
// app, as a service mesh would put there. The pod's app container only starts once this
// one is running; its TCP readiness probe checks the port. No dependencies; exits cleanly
// on SIGTERM, which the kubelet sends it only after the app has stopped.
import { createServer, request } from 'node:http';

const port = Number(process.env.PROXY_PORT ?? 18574);
const appPort = Number(process.env.APP_PORT ?? 18573);

const server = createServer((req, res) => {
  const upstream = request(
    { host: '127.0.0.1', port: appPort, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      console.log(`proxy: ${req.method} ${req.url} -> ${answer.statusCode}`);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', (err) => {
    console.log(`proxy: ${req.method} ${req.url} -> 502 (${err.message})`);
    res.writeHead(502, { 'Content-Type': 'text/plain' });
    res.end(`bad gateway: ${err.message}\n`);
  });
  req.pipe(upstream);
});

server.listen(port, '127.0.0.1', () => console.log(`proxy: listening on 127.0.0.1:${port}, forwarding to 127.0.0.1:${appPort}`));

process.on('SIGTERM', () => {
  console.log('proxy: SIGTERM, shutting down');
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
