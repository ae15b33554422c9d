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
import { Flaky } from '../www/flaky.js';

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
  '.ts': 'text/plain; charset=utf-8',
};

/** The demo's scripted endpoint (www/flaky.js: the grammar of its scripts, shared with the demo's Service Worker). */
const flakyEndpoint = new Flaky('server');

/** Answers a request of the flaky endpoint: a response, a hung request or a dropped connection. */
function flaky(url, req, res) {
  const a = flakyEndpoint.answer(url);
  if (a.hang) return req.on('close', () => res.destroy());
  // (a few bytes first: a browser silently resends a request whose reused connection closes before any byte)
  if (a.reset) return req.socket.end('reset\r\n');
  res.writeHead(a.status, a.headers);
  res.end(a.body ?? undefined);
}

/** The demo's own routes: the flaky endpoint (at /flaky, and beside the page as the page asks it), and / -> /www/. */
export const DEMO_ROUTES = {
  '/flaky': flaky,
  '/www/flaky': flaky,
  '/': (_url, _req, res) => res.writeHead(302, { location: '/www/' }).end(),
};

/**
 * Starts a static server on 127.0.0.1; resolves to { server, url, close }.
 * The demo and every browser test use it:
 * - `mounts`: [urlPrefix, dir] pairs, longest prefix first (default: the
 *   repository at `/`), or a function returning them (a test that serves a
 *   different build per run);
 * - `csp`: the policy sent with every file (a string, a function of nothing,
 *   or null for none); default the strict one the package promises to work under;
 * - `routes`: path -> handler(url, req, res) answered before files (default the demo's);
 * - `hidden`: paths never served (default node_modules and .git of the repository);
 * - `onMiss(path)`: told of every 404;
 * - `cacheControl`: the Cache-Control of every answer (default no-store: each
 *   load fetches every file anew, as after an edit).
 * Port 0 = any free port.
 */
export function serve({
  root = ROOT,
  mounts,
  port = 0,
  host = '127.0.0.1',
  csp = CSP,
  routes = DEMO_ROUTES,
  hidden = /[\\/](node_modules|\.git)[\\/]/,
  onMiss,
  cacheControl = 'no-store',
} = {}) {
  const mountsNow = typeof mounts === 'function' ? mounts : () => mounts ?? [['/', root]];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    let rel = decodeURIComponent(url.pathname);
    if (routes[rel]) return routes[rel](url, req, res);
    if (rel === '/favicon.ico') return res.writeHead(204).end(); // browsers ask, at their own pace
    const policy = typeof csp === 'function' ? csp() : csp;
    const headers = { 'cache-control': cacheControl, ...(policy ? { 'content-security-policy': policy } : {}) };
    // The page learns from its own navigation that the scripted endpoint is here (www/live.js), without a probe that 404s on static hosting.
    if (routes['/www/flaky']) headers['server-timing'] = 'demo-flaky';
    if (rel.endsWith('/')) rel += 'index.html';
    const [prefix, dir] = mountsNow().find(([p]) => rel.startsWith(p)) ?? [];
    const file = dir && path.join(dir, path.normalize(rel.slice(prefix.length)));
    if (!file?.startsWith(dir + path.sep) || hidden?.test(path.sep + path.relative(dir, file))) {
      res.writeHead(403, headers);
      return res.end('forbidden');
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { ...headers, 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      onMiss?.(rel);
      res.writeHead(404, { ...headers, 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: p } = server.address();
      const close = () => new Promise((r) => (server.closeAllConnections(), server.close(() => r())));
      resolve({ server, url: `http://${host}:${p}`, close });
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--port');
  const wanted = Number(i > 0 ? process.argv[i + 1] : (process.env.PORT ?? 8080));
  let started;
  try {
    started = await serve({ port: wanted });
  } catch (e) {
    if (e.code !== 'EADDRINUSE') throw e;
    started = await serve({ port: 0 }); // the usual port is taken: any free one
  }
  console.log(`\n  wasm-backoff demo: ${started.url}/www/\n  (Ctrl+C to stop)\n`);
}
