// The demo's scripted endpoint, `…/flaky`, in one place for both of its
// hosts: the demo server (scripts/serve.mjs) and, when the page is served
// as plain static files, the demo's Service Worker (sw.js).
//
//   flaky?id=<call>&script=503,429ra1,hang,reset,200[&server=<page>]
//     answers the n-th request of call <id> with the n-th step (the last one
//     repeats): a status; `<status>ra<s>` (with Retry-After: s);
//     `<status>rl<s>` (with RateLimit-Limit: 10, RateLimit-Remaining: 0,
//     RateLimit-Reset: s); `<status>ms<n>` (with retry-after-ms: n);
//     `hang` (never answers); `reset` (drops the connection).
//   flaky?server=<page>&down=<ms>   "server down": for that long, every call
//     of that page gets 503 without using up a step of its script.
//   flaky?probe                     answers 204: tells the page who answers.
// Every answer names its host in `x-demo-flaky` (`server` or `service worker`).

/** The most calls and pages remembered (the oldest are forgotten first). */
const LIMIT = 1000;

const remember = (map, key, value) => {
  map.set(key, value);
  if (map.size > LIMIT) map.delete(map.keys().next().value);
};

/** One step of a script as an answer: {status, headers} | {hang: true} | {reset: true}. */
export function stepAnswer(step) {
  if (step === 'hang') return { hang: true };
  if (step === 'reset') return { reset: true };
  const m = /^(\d{3})(?:(ra|rl|ms)(\d+))?$/.exec(step);
  const status = m ? Number(m[1]) : 500;
  const headers = {};
  if (m?.[2] === 'ra') headers['retry-after'] = m[3];
  if (m?.[2] === 'ms') headers['retry-after-ms'] = m[3];
  if (m?.[2] === 'rl') Object.assign(headers, { 'ratelimit-limit': '10', 'ratelimit-remaining': '0', 'ratelimit-reset': m[3] });
  return { status, headers };
}

export class Flaky {
  #calls = new Map(); // call id -> requests answered
  #down = new Map(); // page id -> down until (ms)

  /** @param {string} host what `x-demo-flaky` says */
  constructor(host) {
    this.host = host;
  }

  /**
   * The answer to a request for `url` at `now`: {status, headers, body} (a
   * response to send), {hang: true} or {reset: true}.
   * @param {URL} url
   */
  answer(url, now = Date.now()) {
    const q = url.searchParams;
    const base = { 'content-type': 'text/plain', 'cache-control': 'no-store', 'x-demo-flaky': this.host };
    const page = q.get('server') ?? '';
    if (q.has('probe')) return { status: 204, headers: base, body: null };
    if (q.has('down')) {
      remember(this.#down, page, now + Math.min(Math.max(Number(q.get('down')) || 0, 0), 60_000));
      return { status: 204, headers: base, body: null };
    }
    if ((this.#down.get(page) ?? 0) > now) return { status: 503, headers: base, body: 'server down' };
    const id = q.get('id') ?? '';
    const n = this.#calls.get(id) ?? 0;
    remember(this.#calls, id, n + 1);
    const steps = (q.get('script') ?? '200').split(',');
    const a = stepAnswer(steps[Math.min(n, steps.length - 1)]);
    if (a.hang || a.reset) return a;
    return { status: a.status, headers: { ...base, ...a.headers }, body: `attempt ${n + 1}: ${a.status}` };
  }
}
