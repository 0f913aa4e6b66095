#!/usr/bin/env node
// Serves the built page (web/dist/) on localhost and prints its URL: `npm run web` (builds first).
// Options: --port N (default 8080; 0 = any free port), or the PORT environment variable.
import { createServer } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'web', 'dist');
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.png': 'image/png', '.etl': 'application/octet-stream' };

export function serve(port = 8080, host = '127.0.0.1') {
  if (!existsSync(join(dist, 'index.html'))) throw new Error('web/dist/index.html is missing: run `npm run build:web` first');
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    const file = normalize(join(dist, path.endsWith('/') ? path + 'index.html' : path));
    if (!file.startsWith(dist + sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
    res.end(readFileSync(file));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === normalize(process.argv[1])) {
  const i = process.argv.indexOf('--port');
  const port = Number(i > 0 ? process.argv[i + 1] : (process.env.PORT ?? 8080));
  try {
    const server = await serve(port);
    const a = server.address();
    console.log(`etw-decode web page: http://${a.address}:${a.port}/  (Ctrl-C to stop)`);
  } catch (e) {
    console.error(`serve-web: ${e.code === 'EADDRINUSE' ? `port ${port} is in use: try --port 0 or PORT=…` : e.message}`);
    process.exit(1);
  }
}
