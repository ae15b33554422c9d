// Every relative link of README.md, CONTRIBUTING.md, CHANGELOG.md and
// docs/*.md points to a file or folder that exists, and its #anchor (if any)
// to a heading of the markdown file it names (GitHub's slugs). Links inside
// code blocks and inline code are not links; absolute URLs are not checked.
// Run: node --test tests/package/links.test.mjs (no build needed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { ROOT } from '../support/markdown.mjs';
import { slugger } from '../../scripts/site.mjs';

const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
  ...readdirSync(new URL('docs/', ROOT))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

/** The text of a markdown file without its fenced blocks and inline code spans. */
const prose = (text) => text.replace(/^```[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '');

/** GitHub's anchors of a markdown file's headings (lower case, punctuation dropped, spaces → '-', repeats numbered). */
function anchors(text) {
  const slug = slugger();
  return new Set([...text.replace(/^```[\s\S]*?^```$/gm, '').matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));
}

for (const page of PAGES) {
  test(`${page}: every relative link points to an existing file and heading`, () => {
    const text = readFileSync(new URL(page, ROOT), 'utf8');
    const broken = [];
    for (const [, target] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path, anchor] = target.split('#');
      const file = path ? new URL(path, new URL(page, ROOT)) : new URL(page, ROOT);
      if (!existsSync(file)) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (anchor !== undefined && file.pathname.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(anchor))
        broken.push(`${target}: no heading with that anchor`);
    }
    assert.deepEqual(broken, [], `${page}: broken relative links`);
  });
}

test("the anchors are GitHub's", () => {
  const a = anchors(
    '## fetchWithBackoff / withBackoff / retry\n## Which protection do I want?\n## `wasm-backoff/gate`: x\n## Size\n## Size\n',
  );
  assert.deepEqual([...a], ['fetchwithbackoff--withbackoff--retry', 'which-protection-do-i-want', 'wasm-backoffgate-x', 'size', 'size-1']);
});
