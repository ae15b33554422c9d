// One way to start a worker from tests/workerd/ in real workerd (miniflare),
// with the package's modules as they ship: ES modules and the .wasm as a
// compiled module.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The options of a worker running `tests/workerd/<script>` with `bindings` (for one worker among several). */
export function workerOptions(script, bindings = {}) {
  return {
    modules: true,
    scriptPath: path.join(root, 'tests/workerd', script),
    modulesRoot: root,
    modulesRules: [
      // First match wins, and miniflare's globs are unanchored ('*.js' would
      // also take '.json'), so the JSON rule comes first.
      { type: 'Text', include: ['**/*.json'] },
      { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate: '2025-07-01',
    bindings,
  };
}

/** A Miniflare running `tests/workerd/<script>` with `bindings`; dispose() it when done. */
export function worker(script, bindings = {}) {
  return new Miniflare(workerOptions(script, bindings));
}

/** What worker `name` of `mf` answers `route` (JSON; an error unless 200). */
export async function answerOf(mf, name, route) {
  const res = await (await mf.getWorker(name)).fetch(`http://worker${route}`);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${name} ${route}: ${res.status} ${text}`);
  return JSON.parse(text);
}
