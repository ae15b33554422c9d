// The page's state: policies A and B and the view settings, kept in the
// form and in the URL query. A's fields and the view's are unprefixed (so
// links from the first edition still open), B's are `b.<field>`; a URL with
// no B field at all shows the default B. Only what is set is written.

import { PRESETS, STRATEGIES, JITTER_KINDS } from './gen/lists.js';

/** The fields of one policy (the names of its form elements, B's with `b.` before them). */
export const POLICY_FIELDS = [
  'preset',
  'strategy',
  'baseMs',
  'factor',
  'maxDelayMs',
  'jitter',
  'jitterAmount',
  'maxAttempts',
  'maxElapsedMs',
  'seed',
];
/** The view's fields: schedule length and scale, the histogram's retry, the storm swimlane, the outage and the reconnect storm. */
export const VIEW_FIELDS = [
  'retries',
  'log',
  'hist',
  'laneN',
  'laneRun',
  'speed',
  'C',
  'K',
  'T',
  'runs',
  'outageSchedule',
  'rN',
  'rC',
  'rR',
];

/** B when the URL names none: A's default timing without jitter (what jitter is for). */
export const DEFAULT_B = { jitter: 'none' };
/** The seed of a policy that names none: the drawn path is reproducible. */
export const DEFAULT_SEED = 42;

const name = (p, k) => (p === 'a' ? k : `b.${k}`);

/** {a, b, view} from a URL query string. */
export function fromQuery(search) {
  const q = new URLSearchParams(search);
  const pick = (p) => Object.fromEntries(POLICY_FIELDS.filter((k) => q.get(name(p, k))).map((k) => [k, q.get(name(p, k))]));
  const hasB = q.has('b') || POLICY_FIELDS.some((k) => q.has(name('b', k)));
  return {
    a: pick('a'),
    b: hasB ? pick('b') : { ...DEFAULT_B },
    view: Object.fromEntries(VIEW_FIELDS.filter((k) => q.get(k)).map((k) => [k, q.get(k)])),
  };
}

/** The URL query string of a state (`b=` marks a B with no field set). */
export function toQuery({ a, b, view }) {
  const q = new URLSearchParams();
  for (const [p, s] of [
    ['a', a],
    ['b', b],
  ])
    for (const [k, v] of Object.entries(s)) q.set(name(p, k), v);
  if (!Object.keys(b).length) q.set('b', '');
  for (const [k, v] of Object.entries(view)) q.set(k, v);
  return q.toString();
}

/** The state the form shows. */
export function readForm(form) {
  const get = (n) => {
    const e = form.elements.namedItem(n);
    if (!e) return '';
    if (e.type === 'checkbox') return e.checked ? '1' : '';
    return e.value === e.dataset.default ? '' : e.value; // defaults stay out of the URL
  };
  const pick = (p) => Object.fromEntries(POLICY_FIELDS.map((k) => [k, get(name(p, k))]).filter(([, v]) => v !== ''));
  return {
    a: pick('a'),
    b: pick('b'),
    view: Object.fromEntries(VIEW_FIELDS.map((k) => [k, get(k)]).filter(([, v]) => v !== '')),
  };
}

/** Shows a state in the form (fields it does not set are cleared, or back to their default value). */
export function writeForm(form, { a, b, view }) {
  const set = (n, v) => {
    const e = form.elements.namedItem(n);
    if (!e) return;
    if (e.type === 'checkbox') e.checked = v === '1';
    else e.value = v ?? e.dataset.default ?? '';
  };
  for (const k of POLICY_FIELDS) set(name('a', k), a[k]), set(name('b', k), b[k]);
  for (const k of VIEW_FIELDS) set(k, view[k]);
}

/** The library options a policy's fields describe. */
export function options(s) {
  const o = {};
  if (s.preset) o.preset = s.preset;
  if (s.strategy) o.strategy = s.strategy;
  for (const k of ['baseMs', 'factor', 'maxDelayMs', 'maxAttempts', 'maxElapsedMs', 'seed']) if (s[k] !== undefined) o[k] = Number(s[k]);
  if (s.jitter === 'ratio') o.jitter = { ratio: Number(s.jitterAmount ?? 0.2) };
  else if (s.jitter === 'add') o.jitter = { addMaxMs: Number(s.jitterAmount ?? 1000) };
  else if (s.jitter) o.jitter = s.jitter;
  if (o.seed === undefined) o.seed = DEFAULT_SEED;
  return o;
}

/**
 * Fills the pickers of A's fieldset with the library's lists, each after
 * its "(none)" or "(default)" entry: the presets, the strategies and the
 * jitters that are plain strings (www/gen/lists.js, rendered from the Rust
 * lists by `cargo run -p xtask`: a preset added in the core shows up here).
 */
export function fillPickers(fieldsetA) {
  for (const [name, values] of [
    ['preset', PRESETS],
    ['strategy', STRATEGIES],
    ['jitter', JITTER_KINDS],
  ]) {
    const select = /** @type {HTMLSelectElement} */ (fieldsetA.querySelector(`select[name="${name}"]`));
    select.options[0].after(...values.map((v) => new Option(v)));
  }
}

/**
 * Makes B's fieldset from A's (one description of the controls, in the
 * HTML): a copy whose element names get the `b.` prefix.
 */
export function cloneForB(fieldsetA) {
  const b = /** @type {HTMLFieldSetElement} */ (fieldsetA.cloneNode(true));
  b.dataset.policy = 'b';
  b.querySelector('legend').textContent = fieldsetA.querySelector('legend').textContent.replace(/\bA\b/, 'B');
  for (const e of b.querySelectorAll('[name]')) e.setAttribute('name', `b.${e.getAttribute('name')}`);
  fieldsetA.after(b);
  return b;
}
