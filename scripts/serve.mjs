// A small static server for the demo page and the browser tests: serves the
// repository root on 127.0.0.1 with the strict Content-Security-Policy the
// package promises to work under, and the right MIME type for .wasm
// (instantiateStreaming requires application/wasm).
//
//   node scripts/serve.mjs [--port 8080]      prints the demo URL
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What a page of ours is served with: scripts only from the origin, wasm compilation allowed, nothing inline. */
export const CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'";

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** Per-session request counts of the demo's flaky endpoint (bounded). */
const sessions = new Map();

/**
 * The demo's flaky endpoint: `/flaky?id=<session>&script=503,429ra1,hang,reset,200`
 * answers the n-th request of a session with the n-th step (the last one
 * repeats): a status, `429ra<s>` (429 with Retry-After: s), `hang` (never
 * answers) or `reset` (drops the connection).
 */
function flaky(url, req, res) {
  const id = url.searchParams.get('id') ?? '';
  const steps = (url.searchParams.get('script') ?? '200').split(',');
  const n = sessions.get(id) ?? 0;
  sessions.set(id, n + 1);
  if (sessions.size > 1000) sessions.delete(sessions.keys().next().value);
  const step = steps[Math.min(n, steps.length - 1)];
  if (step === 'hang') return req.on('close', () => res.destroy());
  if (step === 'reset') return req.socket.destroy();
  const ra = /^(\d{3})ra(\d+)$/.exec(step);
  const status = Number(ra ? ra[1] : step) || 500;
  res.writeHead(status, { 'content-type': 'text/plain', 'cache-control': 'no-store', ...(ra ? { 'retry-after': ra[2] } : {}) });
  res.end(`attempt ${n + 1}: ${status}`);
}

/** Starts the server; resolves to { server, url }. Port 0 = any free port; `csp` replaces the policy (tests that call another origin). */
export function serve({ root = ROOT, port = 0, host = '127.0.0.1', csp = CSP } = {}) {
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    let rel = decodeURIComponent(url.pathname);
    if (rel === '/flaky') return flaky(url, req, res);
    if (rel === '/') {
      res.writeHead(302, { location: '/www/' });
      return res.end();
    }
    if (rel.endsWith('/')) rel += 'index.html';
    const file = path.join(root, path.normalize(rel));
    if (!file.startsWith(root + path.sep) || file.includes(`${path.sep}node_modules${path.sep}`) || file.includes(`${path.sep}.git${path.sep}`)) {
      res.writeHead(403);
      return res.end('forbidden');
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
        'content-security-policy': csp,
        'cache-control': 'no-store',
      });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: p } = server.address();
      resolve({ server, url: `http://${host}:${p}` });
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--port');
  const wanted = Number(i > 0 ? process.argv[i + 1] : process.env.PORT ?? 8080);
  let started;
  try {
    started = await serve({ port: wanted });
  } catch (e) {
    if (e.code !== 'EADDRINUSE') throw e;
    started = await serve({ port: 0 }); // the usual port is taken: any free one
  }
  console.log(`\n  wasm-backoff demo: ${started.url}/www/\n  (Ctrl+C to stop)\n`);
}
