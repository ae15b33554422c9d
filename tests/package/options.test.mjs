// Every options object the package takes is read by one reader
// (js/options.js `readAll`) from a table its feature exports; the core's
// schedule, gate and queue fields are the rows of js/gen/boundary.js
// (src/schema.rs). Here each table is checked against the .d.ts that
// declares its options — every option of the table is there, with a doc
// comment and an `@default` (a value the table's default agrees with), and
// every option there is in one of the tables — and the table of
// docs/options.md "Which option applies where" against what the tables
// say: a row per option, a column per entry.
// Run: node --test tests/package/options.test.mjs (the js/ sources: needs
// target/js/wasm_backoff_full.wasm, as tests/engine/ does).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { SCHEDULE, GATE, QUEUE } from '../../js/gen/boundary.js';
import { CALL_OPTIONS, FETCH_OPTIONS, RETRY_FN_OPTIONS } from '../../js/fetch/options.js';
import { STREAM_OPTIONS } from '../../js/stream/job.js';
import { NOT_HERE, UNDICI_OPTIONS } from '../../js/undici/index.js';
import { QUERY_OPTIONS } from '../../js/query/wait.js';
import { RECONNECT_OPTIONS } from '../../js/sse/reconnect.js';
import { SSE_OPTIONS } from '../../js/sse/event-source.js';
import { WS_OPTIONS, WS_RECONNECT_OPTIONS } from '../../js/ws/websocket.js';
import { GATE_OPTIONS, RUN_OPTIONS } from '../../js/gate/gate.js';
import { ACQUIRE_OPTIONS } from '../../js/gate/limiter.js';
import { QUEUE_OPTIONS, PURGE_OPTIONS, ENQUEUE_OPTIONS } from '../../js/queue/options.js';
import { OUTBOX_OPTIONS } from '../../js/queue/outbox.js';
import { DURABLE_STORE_OPTIONS } from '../../js/queue/durable-store.js';
import { BUDGET_OPTIONS } from '../../js/budget.js';
import { HEDGE_OPTIONS } from '../../js/fetch/hedge.js';
import { ENDPOINT_OPTIONS } from '../../js/fetch/failover.js';
import { AUTH_OPTIONS } from '../../js/auth/index.js';
import { DEDUPE_OPTIONS } from '../../js/dedupe/index.js';
import { STALE_OPTIONS } from '../../js/cache/index.js';
import { QUOTA_OPTIONS } from '../../js/quota/index.js';
import { INSTRUMENT_OPTIONS } from '../../js/otel/index.js';
import { CLOCK_OPTIONS, CLOCK_RUN_OPTIONS } from '../../js/testing/clock.js';
import { CHAOS_OPTIONS } from '../../js/testing/chaos.js';
import { OUTCOME_FIELDS } from '../../js/testing/scripted.js';
import { SHARED_GATE_OPTIONS } from '../../js/fleet/shared-gate.js';
import { SHARED_BUDGET_OPTIONS } from '../../js/fleet/shared-budget.js';

const ROOT = new URL('../../', import.meta.url);

/**
 * The fields a section of the options record (SCHEDULE, GATE, QUEUE) names,
 * as a table of the core's: the module checks them (no JS default).
 */
const core = ([, rows]) => Object.fromEntries(rows.filter(([name]) => name).map(([name]) => [name, { core: true }]));
/** Options read by the core outside the record (js/queue/transitions.js: the retention, the nested schedule). */
const QUEUE_CORE = { maxRetentionMs: { core: true }, backoff: { core: true } };
const without = (table, names) => Object.fromEntries(Object.entries(table).filter(([k]) => !names.includes(k)));

/**
 * Who reads which options: [label, .d.ts, interface (or `alias.member`: the
 * object form of a union), the tables read, in the matrix of docs/options.md
 * (true; else in its second table, with its options, or with these words
 * and its last table's)].
 */
const READERS = [
  ['`Backoff`', 'types/index.d.ts', 'BackoffOptions', [core(SCHEDULE)], true],
  ['`retry`', 'types/index.d.ts', 'RetryFnOptions', [core(SCHEDULE), CALL_OPTIONS, RETRY_FN_OPTIONS], true],
  ['`fetchWithBackoff`', 'types/index.d.ts', 'RetryOptions', [core(SCHEDULE), CALL_OPTIONS, FETCH_OPTIONS], true],
  ['`/stream`', 'types/stream/index.d.ts', 'RetryOptions', [core(SCHEDULE), CALL_OPTIONS, FETCH_OPTIONS, STREAM_OPTIONS], true],
  [
    '`/undici`',
    'types/undici/index.d.ts',
    'UndiciRetryOptions',
    [core(SCHEDULE), without(CALL_OPTIONS, NOT_HERE), without(FETCH_OPTIONS, NOT_HERE), UNDICI_OPTIONS],
    true,
  ],
  ['`/query`', 'types/query/index.d.ts', 'QueryRetryOptions', [without(core(SCHEDULE), ['maxElapsedMs']), QUERY_OPTIONS], true],
  ['`/sse`', 'types/sse/index.d.ts', 'EventSourceOptions', [core(SCHEDULE), RECONNECT_OPTIONS, SSE_OPTIONS], true],
  ['`/ws`', 'types/ws/index.d.ts', 'WebSocketOptions', [core(SCHEDULE), WS_RECONNECT_OPTIONS, WS_OPTIONS], true],
  ['`createGate`', 'types/gate/index.d.ts', 'GateOptions', [core(SCHEDULE), core(GATE), GATE_OPTIONS], true],
  ['`gate.run`', 'types/gate/index.d.ts', 'GateRunOptions', [RUN_OPTIONS], true],
  ['`TaskQueue`', 'types/queue/index.d.ts', 'TaskQueueOptions', [QUEUE_OPTIONS, core(QUEUE), QUEUE_CORE]],
  ['`queue.enqueue`', 'types/queue/index.d.ts', 'EnqueueOptions', [ENQUEUE_OPTIONS]],
  ['`queue.purge`', 'types/queue/index.d.ts', 'PurgeOptions', [PURGE_OPTIONS]],
  ['`DurableObjectStore`', 'types/queue/index.d.ts', 'DurableObjectStoreOptions', [DURABLE_STORE_OPTIONS]],
  ['`Outbox`', 'types/outbox/index.d.ts', 'OutboxOptions', [OUTBOX_OPTIONS]],
  ['`RetryBudget`', 'types/budget/index.d.ts', 'RetryBudgetOptions', [BUDGET_OPTIONS]],
  ['`limiter.acquire`', 'types/gate/index.d.ts', 'AcquireOptions', [ACQUIRE_OPTIONS]],
  [
    '`sharedGate`',
    'types/gate/index.d.ts',
    'SharedGateOptions',
    [core(SCHEDULE), core(GATE), GATE_OPTIONS, SHARED_GATE_OPTIONS],
    "`createGate`'s, and",
  ],
  ['`SharedBudget`', 'types/gate/index.d.ts', 'SharedBudgetOptions', [SHARED_BUDGET_OPTIONS]],
  ['`hedge()`', 'types/hedge/index.d.ts', 'HedgeOptions', [HEDGE_OPTIONS]],
  ['`failover()`', 'types/failover/index.d.ts', 'Endpoint.url', [ENDPOINT_OPTIONS]],
  ['`auth()`', 'types/auth/index.d.ts', 'AuthOptions', [AUTH_OPTIONS]],
  ['`dedupe()`', 'types/dedupe/index.d.ts', 'DedupeOptions', [DEDUPE_OPTIONS]],
  ['`staleIfError()`', 'types/cache/index.d.ts', 'StaleIfErrorOptions', [STALE_OPTIONS]],
  ['`quota()`', 'types/quota/index.d.ts', 'QuotaOptions', [QUOTA_OPTIONS]],
  ['`instrument()`', 'types/otel/index.d.ts', 'InstrumentWith', [INSTRUMENT_OPTIONS]],
  ['`virtualClock()`', 'types/testing/index.d.ts', 'VirtualClockOptions', [CLOCK_OPTIONS]],
  ['`clock.run`', 'types/testing/index.d.ts', 'RunOptions', [CLOCK_RUN_OPTIONS]],
  ['`chaos()`', 'types/testing/index.d.ts', 'ChaosOptions', [CHAOS_OPTIONS]],
  ['`scriptedFetch()`', 'types/testing/index.d.ts', 'OutcomeInit', [OUTCOME_FIELDS]],
];

/** The option names of a reader, in its tables' order. */
const names = (tables) => [...new Set(tables.flatMap((t) => Object.keys(t)))];
/**
 * What a reader's tables say of `name` (the last that has it: a later table
 * overrides): whether it is required, its default, or that the core reads it.
 */
const specOf = (tables, name) => {
  const s = tables.findLast((t) => Object.hasOwn(t, name))[name];
  // (a spec is js/options.js's tuple [is, what, ok, d, map, r])
  return s.core ? s : { r: s[5], d: s[3] };
};

// The declarations, as TypeScript reads them (inherited, picked and omitted members resolved).
const FILES = [...new Set(READERS.map(([, file]) => new URL(file, ROOT).pathname))];
const program = ts.createProgram(FILES, { strict: true, noEmit: true, skipLibCheck: true, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'] });
const checker = program.getTypeChecker();

/** The properties of interface `name` of `file` (or of the object member of union alias `Alias.member`). */
function properties(file, name) {
  const source = program.getSourceFile(new URL(file, ROOT).pathname);
  const [decl, member] = name.split('.');
  let type;
  ts.forEachChild(source, (n) => {
    if ((ts.isInterfaceDeclaration(n) || ts.isTypeAliasDeclaration(n)) && n.name.text === decl) type = checker.getTypeAtLocation(n.name);
  });
  assert.ok(type, `${file}: declares no interface or type ${decl}`);
  if (member) type = type.types.find((t) => t.getProperty(member));
  return checker.getPropertiesOfType(type);
}

/** A property's doc comment (its text) and its `@default` (text), from its declaration. */
function docs(symbol) {
  const text = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
  const tag = symbol.getJsDocTags(checker).find((t) => t.name === 'default');
  return { text, dflt: tag && ts.displayPartsToString(tag.text).trim() };
}

/**
 * Whether `@default` text `doc` states the table's default `d` (checked for
 * numbers, strings, booleans and Sets of them; anything else, and a
 * default computed from another option, by its words only).
 */
function agrees(d, doc) {
  if (d instanceof Set) return doc.replace(/\s/g, '').startsWith(JSON.stringify([...d]).replace(/"/g, "'"));
  if (typeof d === 'boolean' || typeof d === 'string') return doc.split(/\s/)[0] === (typeof d === 'string' ? `'${d}'` : String(d));
  // (Infinity: none, or no limit)
  if (d === Infinity) return /^(?:Infinity|undefined)\b/.test(doc);
  if (typeof d === 'number' && d >= 0) return Number(doc.split(/\s/)[0].replace(/_/g, '')) === d;
  if (d === undefined) return !/^-?\d/.test(doc);
  return true;
}

for (const [label, file, iface, tables] of READERS) {
  test(`${label}: its tables are ${file} ${iface}, each option with a doc comment and @default`, () => {
    const props = new Map(properties(file, iface).map((p) => [p.name, p]));
    const want = names(tables);
    assert.deepEqual(
      [...props.keys()].filter((k) => !want.includes(k)),
      [],
      `${file} ${iface}: options no table reads (add them to the feature's table, or take them out of the types)`,
    );
    assert.deepEqual(
      want.filter((k) => !props.has(k)),
      [],
      `${file} ${iface}: options a table reads that the types lack`,
    );
    const problems = [];
    for (const name of want) {
      const p = props.get(name);
      const s = specOf(tables, name);
      const { text, dflt } = docs(p);
      const at = `${file} ${iface}.${name}`;
      if (!text && !dflt) problems.push(`${at}: no doc comment`);
      const optional = (p.flags & ts.SymbolFlags.Optional) !== 0;
      if (s.r) {
        if (optional) problems.push(`${at}: required by its table, optional in the types`);
      } else if (!optional) problems.push(`${at}: optional in its table, required in the types`);
      else if (!dflt) problems.push(`${at}: no @default`);
      else if (!s.core && !agrees(s.d, dflt)) problems.push(`${at}: @default ${dflt}, its table says ${String(s.d)}`);
    }
    assert.deepEqual(problems, []);
  });
}

/** The matrix docs/options.md shows: [label, options] of each column, and the rows in order of first appearance. */
function matrix() {
  const columns = READERS.filter((r) => r[4] === true).map(([label, , , tables]) => [label, new Set(names(tables))]);
  const rows = [...new Set(columns.flatMap(([, set]) => [...set]))];
  return { columns, rows };
}

/** The table as docs/options.md writes it: a header, then a row per option, ✓ where it applies. */
function render({ columns, rows }) {
  return [
    `| option | ${columns.map(([label]) => label).join(' | ')} |`,
    `|---|${columns.map(() => ':-:').join('|')}|`,
    ...rows.map((name) => `| \`${name}\` | ${columns.map(([, set]) => (set.has(name) ? '✓' : '')).join(' | ')} |`),
  ];
}

/** The rows of the second table: each other reader, its options in its tables' order. */
const others = () =>
  READERS.filter((r) => r[4] !== true).map(([label, , , tables, over]) => {
    const list = names(over ? tables.slice(-1) : tables).map((n) => `\`${n}\``);
    return `| ${label} | ${over ? `${over} ` : ''}${list.join(', ')} |`;
  });

/** The markdown table that begins with `head` in the text after `at`, its cells' spaces normalised. */
function tableAt(doc, at, head) {
  const lines = doc.slice(at).split('\n');
  const first = lines.findIndex((l) => l.startsWith(head));
  assert.ok(first >= 0, `docs/options.md: a table beginning "${head}"`);
  return lines.slice(first, lines.indexOf('', first)).map(tidy);
}
const tidy = (/** @type {string} */ l) => l.replace(/ +\|/g, ' |').replace(/\| +/g, '| ').trimEnd();

test('docs/options.md "Which option applies where": a row per option, a column per entry, derived from the tables', () => {
  const doc = readFileSync(new URL('docs/options.md', ROOT), 'utf8');
  const at = doc.indexOf('\n## Which option applies where\n');
  assert.ok(at > 0, 'docs/options.md: the section "## Which option applies where"');
  const want = render(matrix());
  assert.deepEqual(
    tableAt(doc, at, '| option |'),
    want.map(tidy),
    `docs/options.md: the table, as the feature tables make it:\n${want.join('\n')}\n`,
  );
  const rest = ['| options of | options |', '|---|---|', ...others()];
  assert.deepEqual(
    tableAt(doc, at, '| options of |'),
    rest.map(tidy),
    `docs/options.md: the second table, as the tables make it:\n${rest.join('\n')}\n`,
  );
});

test('the options only /stream reads are named in the main entry refusal (js/fetch/index.js STREAM_OPTIONS)', () => {
  const src = readFileSync(new URL('js/fetch/index.js', ROOT), 'utf8');
  const list = /const STREAM_OPTIONS = \[([^\]]*)\]/.exec(src)?.[1];
  assert.deepEqual(
    [...(list ?? '').matchAll(/'(\w+)'/g)].map((m) => m[1]),
    Object.keys(STREAM_OPTIONS),
  );
});
