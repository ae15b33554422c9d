// Keeps a module's exports of ours alone (the names without a leading
// `__`): binaryen's wasm-metadce with them as the roots drops the linker's
// own exports (`__data_end`, `__heap_base`) and whatever only they reached.
// The module imports nothing, and the loaders instantiate it with no glue
// at all (js/load/instantiate.js).
//
//   node scripts/dce.mjs <in.wasm> <out.wasm>
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const [input, output] = process.argv.slice(2);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const names = WebAssembly.Module.exports(new WebAssembly.Module(readFileSync(input)))
  .map((e) => e.name)
  .filter((n) => !n.startsWith('__'));
const graph = join(mkdtempSync(join(tmpdir(), 'dce-')), 'graph.json');
writeFileSync(graph, JSON.stringify([{ name: 'outside', root: true, reaches: names }, ...names.map((n) => ({ name: n, export: n }))]));
// The features rustc's wasm32 target emits; binaryen must be told it may keep them.
const features = [
  'bulk-memory',
  'bulk-memory-opt',
  'nontrapping-float-to-int',
  'sign-ext',
  'reference-types',
  'multivalue',
  'mutable-globals',
];
const metadce = execFileSync('bash', [join(ROOT, 'scripts/tool.sh'), 'wasm-metadce'], { encoding: 'utf8' }).trim();
execFileSync(metadce, ['-f', graph, input, '-o', output, ...features.map((f) => `--enable-${f}`)], {
  stdio: ['ignore', 'ignore', 'inherit'],
});
