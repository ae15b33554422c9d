// @ts-check
// The observable gauges of wasm-backoff/otel: each gate target's circuit
// state, a limiter's rate and a budget's credit, read when the meter's
// reader collects (nothing runs between collections). One set of gauges per
// meter, however many gates, limiters and budgets are watched; each is held
// weakly, so watching one never keeps it alive.

/** Circuit states, each observed 1 (the target's state now) or 0 (the conventions' `hw.status` shape). */
const STATES = ['closed', 'open', 'half-open', 'isolated'];
/** The most gate keys remembered per gate (a key per origin: more is a bug elsewhere). */
const MAX_KEYS = 256;

/**
 * @typedef {object} Watched
 * @property {WeakRef<any>} ref
 * @property {import('@opentelemetry/api').Attributes} base
 * @property {Set<unknown>} [keys] a gate's targets seen by instrumented calls
 */

/** Per meter: what its gauges read. @type {WeakMap<object, { gates: Watched[], limiters: Watched[], budgets: Watched[] }>} */
const watched = new WeakMap();

/**
 * The gauges of `meter`, made at its first use.
 * @param {import('@opentelemetry/api').Meter} meter
 */
function gaugesOf(meter) {
  let w = watched.get(meter);
  if (w) return w;
  const lists = { gates: /** @type {Watched[]} */ ([]), limiters: /** @type {Watched[]} */ ([]), budgets: /** @type {Watched[]} */ ([]) };
  w = lists;
  watched.set(meter, w);
  /**
   * A gauge whose callback reads each live one of `list` (dead ones dropped).
   * @param {string} name
   * @param {string} description
   * @param {string} unit
   * @param {Watched[]} list
   * @param {(r: import('@opentelemetry/api').ObservableResult, x: any, it: Watched) => void} read
   */
  const gauge = (name, description, unit, list, read) =>
    meter.createObservableGauge(name, { description, unit }).addCallback((r) => {
      for (let i = list.length - 1; i >= 0; i--) {
        const x = list[i].ref.deref();
        if (x === undefined) list.splice(i, 1);
        else read(r, x, list[i]);
      }
    });
  const STATE = "A gate target's circuit state: 1 for the state it is in, 0 for the others.";
  gauge('wasm_backoff.gate.target.state', STATE, '1', lists.gates, (r, gate, it) => {
    const keys = new Set(it.keys);
    for (const k of Object.keys(gate.toJSON?.().targets ?? {})) keys.add(k);
    for (const key of keys) {
      const now = gate.state(key).state;
      for (const s of STATES) {
        r.observe(now === s ? 1 : 0, { ...it.base, 'wasm_backoff.gate.target': String(key), 'wasm_backoff.circuit.state': s });
      }
    }
  });
  gauge('wasm_backoff.limiter.rate', "An adaptive limiter's rate (none while it is off).", '{request}/s', lists.limiters, (r, l, it) => {
    if (Number.isFinite(l.rate)) r.observe(l.rate, it.base);
  });
  gauge('wasm_backoff.budget.credit', "A retry budget's retries available now.", '{retry}', lists.budgets, (r, b, it) =>
    r.observe(b.available(), it.base),
  );
  return w;
}

/**
 * The entry of `x` in `list`, added if missing: one watched twice (by two
 * instrument() calls) is read once, with the first one's attributes.
 * @param {Watched[]} list
 * @param {object} x
 * @param {import('@opentelemetry/api').Attributes} base
 */
function add(list, x, base) {
  let it = list.find((e) => e.ref.deref() === x);
  if (!it) list.push((it = { ref: new WeakRef(x), base, keys: new Set() }));
  return it;
}

/**
 * Watches a gate, a limiter and a budget (each optional, checked by
 * js/otel/index.js INSTRUMENT_OPTIONS) on the
 * gauges of `meter`; returns what records a gate key an instrumented call
 * goes to (undefined without a gate).
 * @param {import('@opentelemetry/api').Meter} meter
 * @param {import('@opentelemetry/api').Attributes} base
 * @param {{ gate?: any, limiter?: any, budget?: any }} what
 * @returns {((key: unknown) => void) | undefined}
 */
export function observeAll(meter, base, { gate, limiter, budget }) {
  if (gate === undefined && limiter === undefined && budget === undefined) return undefined;
  const w = gaugesOf(meter);
  if (limiter) add(w.limiters, limiter, base);
  if (budget) add(w.budgets, budget, base);
  if (!gate) return undefined;
  const keys = /** @type {Set<unknown>} */ (add(w.gates, gate, base).keys);
  return (key) => {
    if (key !== undefined && keys.size < MAX_KEYS) keys.add(key);
  };
}
