// Marc Brooker's retry-storm model ("Exponential Backoff And Jitter", AWS
// Architecture Blog, 2015), in virtual time: N clients each want to update
// one row guarded by optimistic concurrency. A client reads the row's version
// (one network hop there, one back), then writes conditionally on it (one hop
// there, one back); the write succeeds only if nobody wrote in between. A
// failed client waits `backoff(attempt)` (attempt 1 after its first failure)
// before reading again. One hop takes |N(10 ms, 2 ms)|. "Calls" counts
// writes, as in the original; "time" is when the last client finished.
//
// The waits come from the library's own calculator: `makeBackoff()` returns,
// per client, a function giving the delay before each retry (undefined: the
// policy gives up, and so does the client).

/** mulberry32: a tiny seeded PRNG for the network's randomness (not the backoff's). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A binary min-heap of [time, seq, event] (seq keeps equal times in FIFO order). */
export class Heap {
  items = [];
  push(x) {
    const a = this.items;
    a.push(x);
    for (let i = a.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (less(a[p], a[i])) break;
      [a[p], a[i]] = [a[i], a[p]];
      i = p;
    }
  }
  pop() {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length) {
      a[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1,
          r = l + 1;
        let m = i;
        if (l < a.length && less(a[l], a[m])) m = l;
        if (r < a.length && less(a[r], a[m])) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i], a[m]];
        i = m;
      }
    }
    return top;
  }
  get size() {
    return this.items.length;
  }
}
const less = (x, y) => x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]);

const READ = 0,
  READ_RSP = 1,
  WRITE = 2,
  WRITE_RSP = 3;

/** Outcomes of a write in a trace. */
export const CONFLICT = 0,
  SUCCESS = 1,
  GAVE_UP = 2;

/**
 * One run: `clients` clients, `makeBackoff(clientIndex)` → (attempt) => ms or undefined.
 * Returns { calls, timeMs, gaveUp }. With `trace`, every write is appended to
 * it as it happens: its time at the server, client and outcome (CONFLICT,
 * SUCCESS; GAVE_UP when the failed client's policy gives up).
 */
export function simulate({ clients, makeBackoff, seed = 1, hopMs = 10, hopSdMs = 2, trace }) {
  const rand = mulberry32(seed);
  const hop = () => {
    // Box–Muller; |N(mean, sd)| as in the original model.
    const u = 1 - rand(),
      v = rand();
    return Math.abs(hopMs + hopSdMs * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
  };
  const heap = new Heap();
  let seq = 0;
  const at = (t, client, kind, value) => heap.push([t, seq++, client, kind, value]);
  const backoffs = Array.from({ length: clients }, (_, i) => makeBackoff(i));
  const attempts = new Array(clients).fill(0);
  const lastWrite = trace && new Array(clients); // index in the trace of each client's last write
  let version = 0,
    calls = 0,
    gaveUp = 0,
    now = 0;
  for (let c = 0; c < clients; c++) at(hop(), c, READ, 0);
  while (heap.size) {
    const [t, , c, kind, value] = heap.pop();
    now = t;
    switch (kind) {
      case READ: // at the server: answer with the current version
        at(t + hop(), c, READ_RSP, version);
        break;
      case READ_RSP: // at the client: write conditionally on what it read
        at(t + hop(), c, WRITE, value);
        break;
      case WRITE: {
        calls++;
        const ok = value === version;
        if (ok) version++;
        at(t + hop(), c, WRITE_RSP, ok);
        if (trace) (lastWrite[c] = trace.k.length), trace.t.push(t), trace.c.push(c), trace.k.push(ok ? SUCCESS : CONFLICT);
        break;
      }
      case WRITE_RSP:
        if (!value) {
          const h = hop();
          const wait = backoffs[c](++attempts[c]);
          if (wait === undefined) {
            gaveUp++;
            if (trace) trace.k[lastWrite[c]] = GAVE_UP;
          } else at(t + h + wait, c, READ, 0);
        }
        break;
    }
  }
  return { calls, timeMs: now, gaveUp };
}

/**
 * The strategies of the original post, as library options (base 5 ms, cap 2 s;
 * the post's first wait is 2·base, hence baseMs 10 for the exponential forms).
 */
export const BROOKER = {
  'no backoff': null,
  exponential: { strategy: 'exponential', baseMs: 10, maxDelayMs: 2000, jitter: 'none' },
  'full jitter': { strategy: 'exponential', baseMs: 10, maxDelayMs: 2000, jitter: 'full' },
  'equal jitter': { strategy: 'exponential', baseMs: 10, maxDelayMs: 2000, jitter: 'equal' },
  decorrelated: { strategy: 'decorrelated', baseMs: 5, maxDelayMs: 2000 },
};

/**
 * Run `r` (0-based) of `storm`: network seed seed0 + r·7919, client i's
 * schedule seeded network seed · 1000 + i (whatever seed `options` name).
 */
export function stormRun(Backoff, options, clients, r = 0, seed0 = 1, trace) {
  const seed = seed0 + r * 7919;
  const makeBackoff = options
    ? (i) => {
        const b = new Backoff({ ...options, seed: seed * 1000 + i });
        return () => b.next();
      }
    : () => () => 0;
  return simulate({ clients, makeBackoff, seed, trace });
}

/** Mean calls, time and clients that gave up over `runs` seeds for `options` (null = no backoff), using `Backoff`. */
export function storm(Backoff, options, clients, runs = 20, seed0 = 1) {
  let calls = 0,
    time = 0,
    gaveUp = 0;
  for (let r = 0; r < runs; r++) {
    const out = stormRun(Backoff, options, clients, r, seed0);
    calls += out.calls;
    time += out.timeMs;
    gaveUp += out.gaveUp;
  }
  return { calls: calls / runs, timeMs: time / runs, gaveUp: gaveUp / runs };
}
