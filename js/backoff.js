// The public `Backoff`. This file reads the options object — JavaScript is
// the natural place to look at JavaScript values, and type errors are its to
// raise — and hands the wasm calculator plain numbers (NaN = not given),
// which validates ranges, applies presets and does all the arithmetic.
import { RawBackoff } from './wasm_backoff.js';

/** The module's memory, for reading `draws` results; set by the entry. */
export let memory;

/** Called once by each entry with the instantiated module's exports. */
export function attach(exports) {
  memory = exports.memory;
}



const PRESETS = ['gcs', 'aws', 'decorrelated', 'equal', 'grpc', 'ethernet', 'akka', 'flume', 'hadoop'];
const STRATEGIES = ['exponential', 'constant', 'linear', 'fibonacci', 'decorrelated', 'slotted'];
const JITTERS = ['none', 'full', 'equal'];
const AT_CEILING = ['stay', 'reset'];
const SLOT_MODES = ['binary', 'exponent'];
const JITTER = "jitter must be 'none', 'full', 'equal', { ratio } or { addMaxMs }";

// Indexed by the wasm error code (`ConfigError::code` in the Rust core; a
// test checks that these texts match the core's).
const MSG = [
  '',
  'baseMs must be a finite number >= 0',
  'factor must be a finite number >= 1',
  'maxDelayMs must be a number >= 0',
  'jitter.ratio must be a number in [0, 1]',
  'jitter.addMaxMs must be a finite number >= 0',
  'maxAttempts must be an integer >= 1',
  'maxElapsedMs must be a number >= 0',
  'ceiling must be an integer in [1, 1023]',
  "maxAttempts must be an integer in [1, 63] with preset 'hadoop'",
];
MSG[32] = 'seed must be a safe integer';

const oneOf = (key, values) => `${key} must be one of ${values.map((v) => `'${v}'`).join(', ')}`;

/** The index of `o[key]` in `values`; NaN when undefined (shared with gate.js). */
export function choice(o, key, values) {
  const v = o[key];
  if (v === undefined) return NaN;
  const i = values.indexOf(v);
  if (i < 0) throw new (typeof v === 'string' ? RangeError : TypeError)(oneOf(key, values));
  return i;
}

/** The longest delay setTimeout honours (2^31 − 1 ms); longer ones fire at once. */
export const MAX_TIMER = 2147483647;

/**
 * The option readers of the JS-only options (fetch driver, gate, queue):
 * `o[key]`, or `dflt` when undefined; else a number passing `ok`, described
 * by `what` in the error.
 */
export function number(o, key, dflt, ok, what) {
  const v = o[key];
  if (v === undefined) return dflt;
  const msg = `${key} must be ${what}`;
  if (typeof v !== 'number') throw new TypeError(msg);
  if (!ok(v)) throw new RangeError(msg);
  return v;
}

/** A function option: `o[key]`, which may be undefined unless `required`. */
export function fn(o, key, required) {
  const f = o[key];
  if (typeof f !== 'function' && (required || f !== undefined)) throw new TypeError(`${key} must be a function`);
  return f;
}

/** `o[key]` if a number (NaN when undefined); the range is checked in wasm. */
export function num(o, key, code) {
  const v = o[key];
  if (v === undefined) return NaN;
  if (typeof v !== 'number') throw new TypeError(MSG[code]);
  if (v !== v) throw new RangeError(MSG[code]);
  return v;
}

function jitter(o) {
  const j = o.jitter;
  if (j === undefined) return [NaN, NaN];
  if (typeof j === 'string') {
    const i = JITTERS.indexOf(j);
    if (i < 0) throw new RangeError(JITTER);
    return [i, NaN];
  }
  if (j === null || typeof j !== 'object') throw new TypeError(JITTER);
  const ratio = j.ratio !== undefined;
  if (ratio === (j.addMaxMs !== undefined)) throw new TypeError(JITTER);
  return ratio ? [3, num(j, 'ratio', 4)] : [4, num(j, 'addMaxMs', 5)];
}

/**
 * A validated `RawBackoff` for `options`; throws TypeError / RangeError.
 * `fallbackAttempts` applies when neither the options nor the preset limit
 * the attempts. `seedless` supplies the seed when the options have none:
 * fresh entropy, except when only validating (workerd forbids random values
 * at module scope, where a worker wraps its fetch).
 */
export function rawBackoff(options, fallbackAttempts, seedless = entropy) {
  if (options == null) options = {};
  else if (typeof options !== 'object') throw new TypeError('options must be an object');
  const o = options;
  const [j, amount] = jitter(o);
  const raw = new RawBackoff(
    choice(o, 'preset', PRESETS),
    choice(o, 'strategy', STRATEGIES),
    num(o, 'baseMs', 1),
    num(o, 'factor', 2),
    num(o, 'maxDelayMs', 3),
    j,
    amount,
    num(o, 'maxAttempts', 6),
    num(o, 'maxElapsedMs', 7),
    num(o, 'ceiling', 8),
    choice(o, 'atCeiling', AT_CEILING),
    choice(o, 'slotMode', SLOT_MODES),
    o.seed === undefined ? seedless() : num(o, 'seed', 32),
    fallbackAttempts,
  );
  const code = raw.error;
  if (code !== 0) {
    raw.free();
    throw new RangeError(MSG[code]);
  }
  return raw;
}

/**
 * A fresh 53-bit seed from `crypto.getRandomValues`, which every supported
 * runtime has (browsers, workers, workerd, Deno, Bun, Node >= 19); never a
 * constant. Drawn here rather than through getrandom in wasm: the same call,
 * without the externref and error-forwarding glue that would cost every
 * user bytes.
 */
/** A random safe integer (53 bits), the seed when none is given (shared with queue.js). */
export function entropy() {
  const [hi, lo] = crypto.getRandomValues(new Uint32Array(2));
  return (hi & 0x1fffff) * 2 ** 32 + lo;
}

export function integer(v, name, lo, hi) {
  const msg = `${name} must be an integer in [${lo}, ${hi}]`;
  if (typeof v !== 'number') throw new TypeError(msg);
  if (!(Number.isInteger(v) && v >= lo && v <= hi)) throw new RangeError(msg);
  return v;
}

/** A retry schedule; see index.d.ts for the options and their defaults. */
export class Backoff {
  #raw;

  constructor(options) {
    this.#raw = rawBackoff(options);
  }

  /** The delay in ms before the next retry, or `undefined` to give up. */
  next() {
    const d = this.#raw.next();
    return d < 0 ? undefined : d;
  }

  /** Back to the first retry (what a success does). */
  reset() {
    this.#raw.reset();
  }

  /** Retries handed out since the last reset. */
  get attempt() {
    return this.#raw.attempt;
  }

  /** Retries handed out since construction. */
  get totalRetries() {
    return this.#raw.totalRetries;
  }

  /** Calls of reset() after a retry, plus slotted wraps past the ceiling. */
  get resets() {
    return this.#raw.resets;
  }

  /** Sum of the delays handed out since the last reset, in ms. */
  get elapsedMs() {
    return this.#raw.elapsedMs;
  }

  /** `count` independent draws of the delay before retry `attempt` (1 = first retry). */
  static sample(options, attempt, count) {
    const a = integer(attempt, 'attempt', 1, 4294967295);
    const n = integer(count, 'count', 0, 16777216);
    const raw = rawBackoff(options);
    try {
      const out = new Float64Array(n);
      // The module fills a fixed 4096-draw scratch buffer; copy each chunk out.
      for (let i = 0; i < n; i += 4096) {
        const k = Math.min(4096, n - i);
        out.set(new Float64Array(memory.buffer, raw.draws(a, k), k), i);
      }
      return out;
    } finally {
      raw.free();
    }
  }
}
