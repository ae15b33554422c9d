// Wasm calls per fetch: how often the fetch driver (and the gate) call into
// the module, by export, for four kinds of call against the scripted server.
// The module's instance is wrapped before the package loads it (counting
// wrappers around its exports), so these are the real calls of the real package.
//
//   node bench/calls.mjs          prints the table (bench/run.mjs puts it in RESULTS.md)
//
// tests/package/boundary.test.mjs asserts the rules behind the table (no call on a
// plain success; a healthy gated call at most two, none of them a *_new).
import { fileURLToPath } from 'node:url';

/** calls[export name] = count, since the last `reset()`. */
const calls = {};
const Instance = WebAssembly.Instance;
WebAssembly.Instance = class {
  constructor(module, imports) {
    this.exports = {};
    for (const [name, v] of Object.entries(new Instance(module, imports).exports)) {
      this.exports[name] =
        typeof v !== 'function'
          ? v
          : (...args) => {
              calls[name] = (calls[name] ?? 0) + 1;
              return v(...args);
            };
    }
  }
};

const { fetchWithBackoff, withBackoff } = await import('wasm-backoff');
const { createGate } = await import('wasm-backoff/gate');
const { startScripted } = await import('../tests/server/scripted.mjs');

const reset = () => {
  for (const k of Object.keys(calls)) delete calls[k];
};
const snapshot = () => ({ ...calls });

/**
 * The wasm calls of one call of each kind (after a warm-up call of the same
 * kind, so that one-time work such as validating the default options is not
 * counted), by export.
 */
export async function countCalls() {
  const srv = await startScripted();
  try {
    let n = 0;
    const path = (name, steps) => {
      const p = `/${name}-${n++}`;
      srv.script(p, steps);
      return `${srv.url}${p}`;
    };
    const FAST = { baseMs: 1, maxDelayMs: 2 };
    const plain = withBackoff(fetch, FAST);
    const gate = createGate({ baseMs: 1, maxDelayMs: 2, jitter: 'none' });
    const gated = withBackoff(fetch, { ...FAST, gate });
    const kinds = [
      ['fetchWithBackoff(url), 200', () => fetchWithBackoff(path('a', [{ status: 200 }]))],
      ['withBackoff(fetch, options)(url), 200', () => plain(path('b', [{ status: 200 }]))],
      ['withBackoff(fetch, options)(url), 503, 503, 200', () => plain(path('c', [{ status: 503 }, { status: 503 }, { status: 200 }]))],
      [
        'fetchWithBackoff(url, init, options), 200 (options checked per call)',
        () => fetchWithBackoff(path('d', [{ status: 200 }]), undefined, FAST),
      ],
      ['gated, healthy target, 200', () => gated(`${srv.url}/gated-ok`)],
      ['gated, 503, 503, 200', () => gated(path('f', [{ status: 503 }, { status: 503 }, { status: 200 }]))],
    ];
    srv.script('/gated-ok', [{ status: 200 }]);
    const rows = [];
    for (const [name, call] of kinds) {
      await (await call()).text(); // warm-up (validates the default options, makes the target's slot)
      reset();
      const res = await call();
      await res.text();
      rows.push({ name, status: res.status, calls: snapshot() });
    }
    return rows;
  } finally {
    await srv.close();
  }
}

export async function callsSection() {
  const rows = await countCalls();
  const total = (c) => Object.values(c).reduce((a, b) => a + b, 0);
  return [
    '| call | status | wasm calls | by export |',
    '|---|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.status} | ${total(r.calls)} | ${
          Object.entries(r.calls)
            .map(([k, v]) => `${k} ×${v}`)
            .join(', ') || '—'
        } |`,
    ),
    '',
    "Counted by wrapping the module's exports before the package instantiates it (bench/calls.mjs), against the scripted server on 127.0.0.1; each kind after one warm-up call of the same kind. `gate_*` calls are the gate's (the gate module), `backoff_*` the schedule's (the small module).",
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log((await callsSection()).join('\n'));
}
