// The example Rust wasm page (examples/fetch-page: fetch_with_backoff from
// the wasm-backoff-web crate) in headless Chromium: a debug build
// (`scripts/example.sh --dev`: behaviour, not size), served from
// target/example/fetch-page-dev/, it fetches the scripted server (another
// origin) and lists its attempts in the DOM. `npm test` runs this file in its
// Rust checks, right after the web crate's tests, which built the page
// (CARGO_TARGET_DIR=target/checks): its build here is then a no-op.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { CSP, ROOT } from '../../scripts/serve.mjs';
import { startScripted } from '../server/scripted.mjs';
import { serverAndBrowser, watchedPage } from '../support/browser.mjs';

const SITE = path.join(ROOT, 'target/example/fetch-page-dev');

let srv;
before(
  async () => {
    // A quick no-op when nothing changed; a cold debug build takes half a minute (6 s after the web crate's tests).
    try {
      execFileSync('bash', [path.join(ROOT, 'scripts/example.sh'), '--dev'], { encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      throw new Error(`scripts/example.sh failed:\n${e.stdout}\n${e.stderr}`);
    }
    srv = await startScripted();
  },
  { timeout: 600_000 },
);
after(() => srv?.close());
// The built page alone, no demo routes; it may talk to the scripted server's origin.
const ctx = serverAndBrowser({
  mounts: [['/', SITE]],
  routes: {},
  csp: CSP.replace("connect-src 'self'", "connect-src 'self' http://127.0.0.1:*"),
});

/** Loads the page on `url` and waits until it is done: its attempts, outcome and console problems. */
async function load(url) {
  const page = await watchedPage(ctx.browser);
  await page.goto(`${ctx.url}/?url=${encodeURIComponent(url)}`);
  await page.waitForSelector('body[data-done="1"]', { timeout: 20_000 });
  const shown = await page.evaluate(() => ({
    attempts: [...document.querySelectorAll('#attempts li')].map((li) => ({ ...li.dataset, text: li.textContent })),
    body: { ...document.body.dataset },
    result: document.getElementById('result').textContent,
  }));
  // Failed responses log "Failed to load resource" by design; nothing else may be logged.
  const problems = page.problems.filter((p) => !/Failed to load resource/.test(p));
  await page.close();
  return { ...shown, problems };
}

test('the page retries a 503 and a 429 (waiting the 40 ms it names) and shows every attempt', { timeout: 30_000 }, async () => {
  const p = '/example-retried';
  srv.script(p, [{ status: 503 }, { status: 429, headers: { 'retry-after-ms': '40' } }, { status: 200, body: 'hello from the server' }]);
  const { attempts, body, result, problems } = await load(srv.url + p);
  assert.deepEqual(
    attempts.map((a) => [a.attempt, a.status]),
    [
      ['1', '503'],
      ['2', '429'],
      ['3', '200'],
    ],
  );
  // The first wait is the schedule's (full jitter below 100 ms), the second at least the server's 40 ms.
  assert.ok(Number(attempts[0].delay) <= 100, attempts[0].text);
  assert.ok(Number(attempts[1].delay) >= 40, attempts[1].text);
  assert.match(attempts[1].text, /^attempt 2: 429, retrying in \d+ ms \(the server named 40 ms\)$/);
  assert.equal(attempts[2].delay, undefined);
  assert.deepEqual(body, { attempts: '3', status: '200', done: '1' });
  assert.equal(result, '200 after 3 attempt(s): hello from the server');
  assert.equal(srv.count(p), 3);
  assert.deepEqual(problems, []);
});

test('a status that is not retried is shown once, after one request', { timeout: 30_000 }, async () => {
  const p = '/example-missing';
  srv.script(p, [{ status: 404, body: 'no such thing' }, { status: 200 }]);
  const { attempts, body, result, problems } = await load(srv.url + p);
  assert.deepEqual(
    attempts.map((a) => [a.attempt, a.status, a.text]),
    [['1', '404', 'attempt 1: 404']],
  );
  assert.deepEqual(body, { attempts: '1', status: '404', done: '1' });
  assert.equal(result, '404 after 1 attempt(s): no such thing');
  assert.equal(srv.count(p), 1);
  assert.deepEqual(problems, []);
});
