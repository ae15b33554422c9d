// The README's and docs/'s code, read and run as a user would: the fenced
// blocks of a markdown file, and a ```js block run as a module under target/
// (where 'wasm-backoff' resolves as for a user, node_modules/wasm-backoff →
// pkg/) with https://api.example.com pointing at the scripted server.
//
// The convention: every ```js block runs in a test, unless the line before
// its fence is `<!-- not run: why -->` (a Worker, a Service Worker, a
// placeholder such as `db.query`); the why is for the reader.
//
// A block shows the values to use in production (a recipe's waits of
// seconds); its test lays its own over them (`runBlock`'s `over`: `{
// baseMs: 1 }`, a `delay` hook that records each wait and waits none, …),
// so that the docs never carry test values.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { format } from 'node:util';

export const ROOT = new URL('../../', import.meta.url);

/**
 * The fenced code blocks of `file` (relative to the repository root), in order:
 * { file, line (1-based, of the fence), lang, code, heading (the nearest `#` heading above), skip (the why, or null) }.
 */
export function codeBlocks(file) {
  const lines = readFileSync(new URL(file, ROOT), 'utf8').split('\n');
  const out = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    if (/^#{1,6} /.test(lines[i])) heading = lines[i];
    const open = /^```(\S*)/.exec(lines[i]);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`${file}:${i + 1}: an unclosed code block`);
    const skip = /^<!-- not run: (.+) -->$/.exec(lines[i - 1] ?? '')?.[1] ?? null;
    out.push({ file, line: i + 1, lang: open[1], code: `${lines.slice(i + 1, end).join('\n')}\n`, heading, skip });
    i = end;
  }
  return out;
}

/** The ```js blocks of `file` that run (not marked `<!-- not run: … -->`). */
export const runnable = (file) => codeBlocks(file).filter((b) => b.lang === 'js' && !b.skip);

/** The package's functions that take options, and the index of their options argument. */
const OPTIONS_AT = {
  withBackoff: 1,
  fetchWithBackoff: 2,
  retry: 1,
  retryGlobalFetch: 0,
  retryDispatcher: 1,
  retryInterceptor: 0,
  queryRetry: 0,
  swrRetry: 0,
};
/** The options laid over a running block's (`runBlock`'s `over`), read when the block calls. */
let laid;
/** `f`, its options argument (at `at`) with `laid` over it. */
export const overlaid =
  (f, at) =>
  (...args) => {
    args[at] = { ...args[at], ...laid };
    return f(...args);
  };

/**
 * A module that stands in for `spec` ('wasm-backoff' or a subpath): the same
 * exports, the functions of OPTIONS_AT through `overlaid`. Its URL.
 */
async function standIn(spec, dir) {
  const names = Object.keys(await import(spec)).filter((n) => n in OPTIONS_AT);
  const code = [
    `import * as m from '${spec}';`,
    `import { overlaid } from '${import.meta.url}';`,
    `export * from '${spec}';`,
    ...names.map((n) => `export const ${n} = overlaid(m.${n}, ${OPTIONS_AT[n]});`),
  ];
  const file = new URL(`over-${spec.replace(/\W+/g, '-')}.mjs`, dir);
  writeFileSync(file, `${code.join('\n')}\n`);
  return `./${file.pathname.split('/').at(-1)}`;
}

/**
 * Imports `block` as a module, https://api.example.com becoming `origin`;
 * resolves with what it logged. `over`: options laid over those the block
 * passes to the package (`withBackoff`, `fetchWithBackoff`, `retry`,
 * `retryGlobalFetch`, `queryRetry`, …: its imports of 'wasm-backoff' and
 * its subpaths go through a stand-in), so that a block written with the
 * waits of production runs in milliseconds, or tells its test each wait
 * (a `delay` hook).
 */
/** Blocks run by this process (runBlock's file names). */
let blocks = 0;

export async function runBlock(block, origin, { over } = {}) {
  const dir = new URL('target/readme/', ROOT);
  mkdirSync(dir, { recursive: true });
  // (unique per process and block run: test files run side by side share the folder, and an ESM import of a name seen before is served from the cache)
  const name = `${block.file.replace(/\W+/g, '-')}-${block.line}-${process.pid}-${++blocks}.mjs`;
  const file = new URL(name, dir);
  let code = block.code.replaceAll('https://api.example.com', origin);
  if (over) {
    const from = /(from\s+)'(wasm-backoff(?:\/[\w-]+)?)'/g;
    const specs = new Set([...code.matchAll(from)].map((m) => m[2]));
    const to = new Map();
    for (const spec of specs) to.set(spec, await standIn(spec, dir));
    code = code.replace(from, (_, f, spec) => `${f}'${to.get(spec)}'`);
  }
  writeFileSync(file, code);
  const logged = [];
  const log = console.log;
  console.log = (...args) => logged.push(format(...args));
  laid = over;
  try {
    await import(pathToFileURL(file.pathname).href);
  } finally {
    console.log = log;
    laid = undefined;
  }
  return logged;
}
