// Each enumeration is declared once, in Rust: the presets (core/src/preset.rs
// Preset::ALL), the strategies (core/src/config.rs Strategy::ALL), the other
// option values, the gate's phases and the task states (src/schema.rs), the
// reasons onDone is told (core/src/policy.rs End) and the headers that may
// name a wait (core/src/retry_after.rs SERVER_WAIT_HEADERS). `cargo run -p
// xtask` renders them into js/gen/ (the package's code reads those) and
// www/gen/ (the demo's pickers). What is written by hand elsewhere — the
// .d.ts unions and their docs, the tables of docs/ — is checked here against
// the generated lists: a failure names the file to change.
// Run: node --test tests/package/lists.test.mjs (js/gen/ is made by the build or
// `cargo run -p xtask`; the error-message test needs a built pkg/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import {
  AT_CEILING,
  CIRCUIT,
  JITTERS,
  JITTER_RATIO,
  LIMIT_KINDS,
  MODES,
  OVERFLOWS,
  PRESETS,
  SERVER_WAIT_HEADERS,
  SLOT_MODES,
  STRATEGIES,
  TASK_STATES,
} from '../../js/gen/boundary.js';
import { END_REASONS } from '../../js/gen/policy.js';

const ROOT = new URL('../../', import.meta.url);
const read = (file) => readFileSync(new URL(file, ROOT), 'utf8');

/**
 * The declaration of `name` in a .d.ts: `export type <name> = …;` (with the
 * doc comment above it), or else the first option `<name>?: …;`. An option
 * whose type is an alias of the same file is followed to the alias.
 */
function declared(file, name) {
  const dts = read(file);
  const type = new RegExp(`(?:/\\*\\*((?:(?!\\*/)[\\s\\S])*)\\*/\\s*)?export type ${name} =([\\s\\S]*?);\\s*\\n`).exec(dts);
  const option = new RegExp(`\\b${name}\\?: ([\\s\\S]*?);\\s*\\n`).exec(dts);
  const m = type ?? option;
  assert.ok(m, `${file}: declares no type or option '${name}'`);
  const body = (type ? m[2] : m[1]).replace(/\/\/[^\n]*/g, '').trim();
  if (/^[A-Z]\w*$/.test(body)) return declared(file, body);
  return { body, doc: type?.[1] ?? '', where: type ? `${file} type ${name}` : `${file} option ${name}` };
}

/** The string literals of a union, in order. */
const strings = (body) => [...body.matchAll(/'([^']*)'/g)].map((m) => m[1]);

/** [.d.ts file, type or option name, the generated list, where that list is declared, whether its doc comment describes each member]. */
const UNIONS = [
  ['types/index.d.ts', 'Preset', PRESETS, 'core/src/preset.rs Preset::ALL', 'documented'],
  ['types/index.d.ts', 'Strategy', STRATEGIES, 'core/src/config.rs Strategy::ALL', 'documented'],
  ['types/index.d.ts', 'atCeiling', AT_CEILING, 'src/schema.rs AT_CEILING'],
  ['types/index.d.ts', 'slotMode', SLOT_MODES, 'src/schema.rs SLOT_MODES'],
  ['types/gate/index.d.ts', 'overflow', OVERFLOWS, 'src/schema.rs OVERFLOWS'],
  ['types/gate/index.d.ts', 'mode', MODES, 'src/schema.rs MODES'],
  ['types/gate/index.d.ts', 'limit', LIMIT_KINDS, 'src/schema.rs LIMIT_KINDS'],
  // The one vocabulary of a target's state (gate.state(key).state, onStateChange,
  // toJSON): CIRCUIT, each state once (the core's phases map onto it).
  ['types/gate/index.d.ts', 'CircuitState', [...new Set(CIRCUIT)], 'src/schema.rs CIRCUIT', 'documented'],
  ['types/queue/index.d.ts', 'TaskState', TASK_STATES, 'src/schema.rs TASK_STATES'],
  // (also in tests/fetch/policy.test.mjs, beside the policy's other checks)
  ['types/index.d.ts', 'DoneReason', END_REASONS, 'core/src/policy.rs End'],
];

for (const [file, name, list, source, documented] of UNIONS) {
  test(`${file} ${name}: the values of ${source}, in its order`, () => {
    const { body, doc, where } = declared(file, name);
    assert.deepEqual(strings(body), list, `${where}: one member per value of ${source} (generated), in its order`);
    // The union's documentation (the comment above `export type`) describes each member.
    if (documented) {
      const named = list.filter((v) => doc.includes(`'${v}'`) || doc.includes(`\`${v}\``));
      assert.deepEqual(named, list, `${where}: its doc comment names each value of ${source}`);
    }
  });
}

test('types/index.d.ts Jitter: the string kinds of src/schema.rs JITTERS, then its object shapes', () => {
  const { body, doc } = declared('types/index.d.ts', 'Jitter');
  const shapes = [...body.matchAll(/\{\s*(\w+): number/g)].map((m) => m[1]);
  assert.deepEqual([...strings(body), ...shapes], JITTERS, 'types/index.d.ts Jitter: the values of src/schema.rs JITTERS, in its order');
  for (const v of JITTERS)
    assert.ok(doc.includes(`'${v}'`) || doc.includes(`{ ${v}`), `types/index.d.ts Jitter: its doc comment names ${v}`);
});

test('docs/presets.md: the presets table has a row per preset; docs/options.md: the strategy and jitter rows name each value', () => {
  const presets = read('docs/presets.md');
  const section = presets.slice(presets.indexOf('\n## Presets\n'));
  const rows = [...section.matchAll(/^\| `([a-z-]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual(rows, PRESETS, 'docs/presets.md "## Presets" table: one row per preset of core/src/preset.rs Preset::ALL, in its order');
  const options = read('docs/options.md');
  const row = (option) => options.match(new RegExp(`^\\| \`${option}\` \\|.*$`, 'm'))?.[0] ?? '';
  const strategies = STRATEGIES.filter((s) => !row('strategy').includes(`'${s}'`));
  assert.deepEqual(
    strategies,
    [],
    'docs/options.md options table, row `strategy`: names each strategy of core/src/config.rs Strategy::ALL',
  );
  const jitters = JITTERS.filter((j, i) => !row('jitter').includes(i < JITTER_RATIO ? `'${j}'` : `{${j}}`));
  assert.deepEqual(jitters, [], 'docs/options.md options table, row `jitter`: names each kind of src/schema.rs JITTERS');
});

test('docs/fetch.md "Server-named waits" names each header of core/src/retry_after.rs SERVER_WAIT_HEADERS, in its order', () => {
  const fetchDoc = read('docs/fetch.md');
  const at = fetchDoc.indexOf('**Server-named waits:**');
  assert.ok(at > 0, 'docs/fetch.md: the "Server-named waits" paragraph');
  const para = fetchDoc.slice(at, fetchDoc.indexOf('\n\n', at)).toLowerCase();
  const named = [...para.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]).filter((h) => SERVER_WAIT_HEADERS.includes(h));
  assert.deepEqual(
    [...new Set(named)],
    SERVER_WAIT_HEADERS,
    'docs/fetch.md "Server-named waits": each header of SERVER_WAIT_HEADERS, in its order',
  );
});

test("the messages of a wrong preset or strategy list the core's values (the built package)", {
  skip: !existsSync(new URL('pkg/node.mjs', ROOT)) && 'pkg/ is not built',
}, async () => {
  const { Backoff } = await import(new URL('pkg/node.mjs', ROOT).href);
  const oneOf = (key, list) => `${key} must be one of ${list.map((v) => `'${v}'`).join(', ')}`;
  assert.throws(() => new Backoff({ preset: 'nope' }), { name: 'RangeError', message: oneOf('preset', PRESETS) });
  assert.throws(() => new Backoff({ preset: 3 }), { name: 'TypeError', message: oneOf('preset', PRESETS) });
  assert.throws(() => new Backoff({ strategy: 'exp' }), { name: 'RangeError', message: oneOf('strategy', STRATEGIES) });
  for (const preset of PRESETS) assert.ok(new Backoff({ preset, seed: 1 }).next() !== null, preset);
  for (const strategy of STRATEGIES) assert.ok(new Backoff({ strategy, seed: 1 }).next() !== null, strategy);
});
