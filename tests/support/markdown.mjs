// The README's and docs/'s code, read and run as a user would: the fenced
// blocks of a markdown file, and a ```js block run as a module under target/
// (where 'wasm-backoff' resolves as for a user, node_modules/wasm-backoff →
// pkg/) with https://api.example.com pointing at the scripted server.
//
// The convention: every ```js block runs in a test, unless the line before
// its fence is `<!-- not run: why -->` (a Worker, a Service Worker, a
// placeholder such as `db.query`); the why is for the reader.
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

/** Imports `block` as a module, https://api.example.com becoming `origin`; resolves with what it logged. */
export async function runBlock(block, origin) {
  const dir = new URL('target/readme/', ROOT);
  mkdirSync(dir, { recursive: true });
  const name = `${block.file.replace(/\W+/g, '-')}-${block.line}-${Date.now()}.mjs`;
  const file = new URL(name, dir);
  writeFileSync(file, block.code.replaceAll('https://api.example.com', origin));
  const logged = [];
  const log = console.log;
  console.log = (...args) => logged.push(format(...args));
  try {
    await import(pathToFileURL(file.pathname).href);
  } finally {
    console.log = log;
  }
  return logged;
}
