// The scripted server (tests/server/scripted.mjs) over HTTP/2 with TLS, on
// 127.0.0.1: Chromium streams a request body (`duplex: 'half'`) only over
// HTTP/2 or later, so its upload scenarios need this. The scripted server's
// own request handler answers, through node:http2's compatibility API; the
// certificate is self-signed, made at start with the `openssl` CLI into a
// temporary folder (the browser is told to ignore certificate errors).
//
//   const srv = await startScriptedH2();  // null when openssl is missing
//   srv.url -> 'https://127.0.0.1:PORT'; srv.script(...), srv.requests, srv.close()
import http2 from 'node:http2';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startScripted } from './scripted.mjs';

/** A throwaway key and certificate for 127.0.0.1, or null without openssl. */
export function selfSigned() {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-h2-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'].concat([
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        cert,
      ]),
      { stdio: 'ignore' },
    );
    return { key: readFileSync(key), cert: readFileSync(cert) };
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Starts the scripted server and serves its handler over HTTP/2 (TLS only,
 * no HTTP/1.1 fallback: a request that is not HTTP/2 fails). Resolves to the
 * scripted server's object with `url` the HTTP/2 origin, or null without openssl.
 */
export async function startScriptedH2() {
  const tls = selfSigned();
  if (!tls) return null;
  const srv = await startScripted();
  const [handler] = srv.server.listeners('request');
  const h2 = http2.createSecureServer({ ...tls, allowHTTP1: false }, handler);
  const sessions = new Set();
  h2.on('session', (s) => (sessions.add(s), s.on('close', () => sessions.delete(s))));
  await new Promise((resolve, reject) => {
    h2.once('error', reject);
    h2.listen(0, '127.0.0.1', () => (h2.off('error', reject), resolve()));
  });
  const closeH1 = srv.close.bind(srv);
  srv.url = `https://127.0.0.1:${h2.address().port}`;
  srv.close = () => {
    for (const s of sessions) s.destroy();
    return Promise.all([new Promise((r) => h2.close(() => r())), closeH1()]);
  };
  return srv;
}
