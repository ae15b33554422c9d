// Live fetch: real `withBackoff(fetch)` calls against the scripted endpoint
// (flaky.js; the demo server's, or the demo's Service Worker when the page
// is plain static files), several in flight at once, each call a lane of
// bars (attempts, with the status and any Retry-After / rate-limit header
// on them) and gaps (the waits the library chose), on one clock; an abort
// button per call and a "server down" button for the whole page. A call may
// be steered: hedged (a second copy after 300 ms; the bar that won says so)
// or with failover to a backup host (each bar says where it went).
import { withBackoff } from '../pkg/index.js';
import { hedge } from '../pkg/hedge/index.js';
import { failover } from '../pkg/failover/index.js';
import { el, fmtMs, ticks } from './chart.js';

/** The response headers a bar shows (the ones the library reads for a server-named wait). */
const SHOWN = [
  ['retry-after', 'Retry-After'],
  ['retry-after-ms', 'retry-after-ms'],
  ['ratelimit-limit', 'RateLimit-Limit'],
  ['ratelimit-remaining', 'RateLimit-Remaining'],
  ['ratelimit-reset', 'RateLimit-Reset'],
];
/**
 * Failover's two hosts: stand-ins the page's fetch routes to the scripted
 * endpoint beside it (one origin serves the demo): the primary follows the
 * call's script and the "server down" button; the backup always answers
 * 200 and is never down.
 */
const PRIMARY = 'https://primary.demo';
const BACKUP = 'https://backup.demo';

/**
 * Where a request to a stand-in host goes, and which host it was.
 * @param {string} url
 * @param {string} page
 * @returns {[string, string | undefined]}
 */
function route(url, page) {
  const u = new URL(url, location.href);
  if (!u.hostname.endsWith('.demo')) return [url, undefined];
  const backup = u.origin === BACKUP;
  if (backup) {
    u.searchParams.set('server', `${page}-backup`);
    u.searchParams.set('id', `${u.searchParams.get('id')}-backup`);
    u.searchParams.set('script', '200');
  }
  return [new URL(`./flaky${u.search}`, location.href).href, backup ? 'backup' : 'primary'];
}

const H = 56,
  L = 4,
  R = 24;
/** Room a label needs, in px (11 px text). */
const textWidth = (s) => s.length * 6.3 + 6;

/**
 * Where the scripted endpoint is: beside the page (`./flaky`), answered by
 * the demo server, which says so in the page's own response
 * (`Server-Timing: demo-flaky`, read from the navigation entry: no request,
 * so no 404 in the console on static hosting); otherwise (plain static
 * hosting) the demo's Service Worker is registered to answer instead.
 * Resolves to who answers: 'server', 'service worker' or 'none'.
 */
export async function findEndpoint() {
  const nav = /** @type {PerformanceNavigationTiming | undefined} */ (performance.getEntriesByType('navigation')[0]);
  if (nav?.serverTiming?.some((e) => e.name === 'demo-flaky')) return 'server';
  const sw = navigator.serviceWorker;
  if (!sw) return 'none';
  await sw.register('./sw.js', { type: 'module' });
  await sw.ready;
  if (!sw.controller) await new Promise((r) => sw.addEventListener('controllerchange', r, { once: true }));
  return 'service worker';
}

export class Live {
  /**
   * @param {{ root: HTMLElement, lanes: HTMLElement, script: HTMLSelectElement, policy: HTMLSelectElement,
   *   steer: HTMLSelectElement, run: HTMLButtonElement, down: HTMLButtonElement, downSeconds: HTMLInputElement, clear: HTMLButtonElement,
   *   endpoint: HTMLElement }} ui
   * @param {(name: string) => Record<string, any>} optionsOf the library options of policy 'A' or 'B'
   */
  constructor(ui, optionsOf) {
    this.ui = ui;
    this.optionsOf = optionsOf;
    this.page = crypto.randomUUID(); // this page's "server", for the down button
    this.calls = [];
    this.downs = [];
    this.t0 = undefined;
    this.timer = 0;
    this.ready = findEndpoint().then((host) => {
      ui.endpoint.textContent =
        host === 'none'
          ? 'no endpoint: this browser has no Service Worker'
          : `answered by ${host === 'server' ? 'the demo server' : "the demo's Service Worker (static hosting)"}`;
      ui.root.dataset.endpoint = host;
      return host;
    });
    ui.run.addEventListener('click', () => this.start(ui.script.value, ui.policy.value, ui.steer.value));
    ui.down.addEventListener('click', () => this.serverDown(Number(ui.downSeconds.value) * 1000));
    ui.downSeconds.addEventListener('input', () => (ui.down.textContent = `Server down for ${+ui.downSeconds.value || 0} s`));
    ui.clear.addEventListener('click', () => this.clear());
  }

  now() {
    return performance.now() - this.t0;
  }

  /** A new call, in its own lane: `script` (flaky.js) with policy `name`'s options, steered by `steer` ('', 'hedge', 'failover'). */
  async start(script, name, steer = '') {
    await this.ready;
    this.t0 ??= performance.now();
    const n = this.calls.length + 1;
    const o = this.optionsOf(name);
    const call = { n, name, script, steer, attempts: [], waits: [], abort: new AbortController(), done: false, outcome: '' };
    this.calls.push(call);
    this.lane(call);
    this.tick();
    // Wrap fetch to see each attempt as it happens (and route failover's stand-in hosts).
    const traced = async (input, init) => {
      const [url, via] = route(input instanceof Request ? input.url : String(input), this.page);
      const a = { start: this.now(), via };
      call.attempts.push(a);
      try {
        const res = await fetch(url, init);
        a.status = res.status;
        a.headers = SHOWN.filter(([h]) => res.headers.has(h)).map(([h, label]) => `${label}: ${res.headers.get(h)}`);
        return res;
      } catch (e) {
        a.error = e.name;
        throw e;
      } finally {
        a.end = this.now();
        this.draw(call);
      }
    };
    const f = withBackoff(traced, {
      ...o,
      maxAttempts: o.maxAttempts ?? 5,
      // (a hung attempt ends at its timeout; a hedged call's hedge, at 300 ms, is what ends it, the
      // timeout only a backstop: 2 s leaves the hedge's answer room on a slow machine)
      timeoutMs: script.includes('hang') ? (steer === 'hedge' ? 2000 : 500) : undefined,
      hedge: steer === 'hedge' ? hedge({ delayMs: 300 }) : undefined,
      endpoints: steer === 'failover' ? failover([PRIMARY, BACKUP]) : undefined,
      onRetry: (i) => {
        const start = this.now();
        call.waits.push({ start, end: start + i.delayMs, delayMs: i.delayMs, retryAfterMs: i.retryAfterMs });
        this.draw(call);
      },
      onDone: (d) => Object.assign(call, { won: d.won, hedges: d.hedges, endpoint: d.endpoint }),
    });
    const base = steer === 'failover' ? `${PRIMARY}/` : './';
    try {
      const res = await f(`${base}flaky?server=${this.page}&id=${crypto.randomUUID()}&script=${script}`, { signal: call.abort.signal });
      call.outcome = `resolved: ${res.status} after ${call.attempts.length} attempt${call.attempts.length > 1 ? 's' : ''}${steered(call)}`;
    } catch (e) {
      call.outcome = `rejected: ${e?.name ?? e} after ${call.attempts.length} attempt${call.attempts.length > 1 ? 's' : ''}`;
    } finally {
      call.done = true;
      call.end = this.now();
      this.draw(call);
    }
  }

  /** "Server down": every call of this page gets 503 for `ms`. */
  async serverDown(ms) {
    await this.ready;
    this.t0 ??= performance.now();
    await fetch(`./flaky?server=${this.page}&down=${ms}`, { cache: 'no-store' });
    const start = this.now();
    this.downs.push({ start, end: start + ms });
    this.ui.root.dataset.downs = JSON.stringify(this.downs);
    this.tick();
  }

  /** Redraws every lane every 100 ms while a call is in flight or the server is down. */
  tick() {
    if (this.timer) return;
    this.timer = setInterval(() => {
      for (const c of this.calls) this.draw(c);
      this.axis();
      const busy = this.calls.some((c) => !c.done) || this.downs.some((d) => d.end > this.now());
      this.ui.root.dataset.inFlight = String(this.calls.filter((c) => !c.done).length);
      if (!busy) clearInterval(this.timer), (this.timer = 0);
    }, 100);
  }

  clear() {
    for (const c of this.calls) c.abort.abort(new DOMException('Cleared from the page', 'AbortError'));
    this.calls = [];
    this.downs = [];
    this.t0 = undefined;
    this.ui.lanes.replaceChildren();
    this.ui.axis.replaceChildren();
    delete this.ui.root.dataset.downs;
  }

  /** The lane of a call: its title and state, its abort button, its bars. */
  lane(call) {
    const li = document.createElement('li');
    li.className = 'call';
    const head = document.createElement('div');
    head.className = 'call-head';
    const title = document.createElement('span');
    const tag = document.createElement('span');
    tag.className = `tag ${call.name.toLowerCase()}`;
    tag.textContent = call.name;
    title.append(tag, ` call ${call.n}: ${call.script.split(',').join(', ')}${call.steer ? ` (${call.steer})` : ''}`);
    const state = document.createElement('output');
    state.className = 'num';
    const abort = document.createElement('button');
    abort.type = 'button';
    abort.className = 'quiet';
    abort.textContent = `Abort call ${call.n}`;
    abort.addEventListener('click', () => call.abort.abort(new DOMException('Aborted from the page', 'AbortError')));
    head.append(title, state, abort);
    const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('role', 'img');
    li.append(head, svg);
    this.ui.lanes.append(li);
    Object.assign(call, { li, svg, state, abortButton: abort });
  }

  /** The time scale shared by every lane: [0, span] ms over the lanes' width in px. */
  scale() {
    const now = this.now();
    const span = Math.max(now, 1000, ...this.calls.flatMap((c) => c.waits.map((w) => Math.min(w.end, c.end ?? Infinity))));
    const W = this.ui.lanes.clientWidth || 640;
    return { now, span, W, x: (t) => L + (Math.min(t, span) / span) * (W - L - R) };
  }

  /** The time axis under the lanes. */
  axis() {
    const { span, W, x } = this.scale();
    const svg = this.ui.axis;
    svg.replaceChildren();
    svg.setAttribute('viewBox', `0 0 ${W} 36`);
    el(svg, 'line', { class: 'axis-line', x1: L, x2: W - R, y1: 1, y2: 1 });
    for (const t of ticks(0, span, Math.max(2, Math.floor(W / 110)))) {
      el(svg, 'line', { class: 'axis-line', x1: x(t), x2: x(t), y1: 1, y2: 5 });
      el(svg, 'text', { class: 'live-label', x: x(t), y: 17, 'text-anchor': t ? 'middle' : 'start' }, fmtMs(t));
    }
    el(svg, 'text', { class: 'live-label', x: (L + W - R) / 2, y: 33, 'text-anchor': 'middle' }, 'time since the first call');
  }

  draw(call) {
    const { svg, li } = call;
    const { now, W, x } = this.scale();
    const stop = call.end ?? now; // an aborted call's wait stops with it
    svg.replaceChildren();
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    for (const d of this.downs)
      el(svg, 'rect', { class: 'span down', x: x(d.start), y: 0, width: Math.max(x(d.end) - x(d.start), 1), height: H });
    // Labels only where they fit (every one is in the lane's description and its bars' titles).
    let free = 0;
    for (const w of call.waits) {
      el(svg, 'line', { class: 'wait', x1: x(w.start), x2: x(Math.min(w.end, stop)), y1: 36, y2: 36 });
      const text = `wait ${fmtMs(w.delayMs)}${w.retryAfterMs !== undefined ? ` (server: ${fmtMs(w.retryAfterMs)})` : ''}`;
      if (x(w.start) + 3 >= free && x(w.start) + textWidth(text) <= W) {
        el(svg, 'text', { class: 'live-label', x: x(w.start) + 3, y: 52 }, text);
        free = x(w.start) + textWidth(text);
      }
    }
    free = 0;
    for (const a of call.attempts) {
      const end = a.end ?? now;
      const ok = a.status !== undefined && a.status < 400;
      const label = [...(a.via ? [a.via] : []), mark(call, a), ...(a.headers ?? [])].join(' · ');
      const bar = el(svg, 'rect', {
        class: `attempt ${a.end === undefined ? 'pending' : ok ? 'ok' : 'fail'}`,
        x: x(a.start),
        y: 26,
        width: Math.max(x(end) - x(a.start), 3),
        height: 20,
      });
      el(bar, 'title', {}, `${label} (${fmtMs(a.start)} to ${a.end === undefined ? 'now' : fmtMs(a.end)})`);
      const fits = x(a.start) >= free && x(a.start) + textWidth(label) <= W;
      const text = fits ? label : String(a.status ?? a.error ?? '…');
      if (x(a.start) >= free) {
        el(svg, 'text', { class: 'live-label', x: x(a.start), y: 18 }, text);
        free = x(a.start) + textWidth(text);
      }
    }
    const summary = call.attempts
      .map((a, i) => `${a.status ?? a.error ?? 'in flight'}${call.waits[i] ? `, wait ${fmtMs(call.waits[i].delayMs)}` : ''}`)
      .join(' → ');
    call.state.textContent = call.done ? call.outcome : `in flight, attempt ${call.attempts.length}`;
    svg.setAttribute('aria-label', `call ${call.n}: ${summary || 'starting'}${call.done ? `; ${call.outcome}` : ''}`);
    call.abortButton.disabled = call.done;
    Object.assign(li.dataset, {
      done: call.done ? '1' : '',
      outcome: call.outcome,
      attempts: JSON.stringify(
        call.attempts.map((a) => ({ status: a.status, error: a.error, start: a.start, end: a.end, headers: a.headers, via: a.via })),
      ),
      won: call.won ?? '',
      waits: JSON.stringify(call.waits),
    });
  }
}

/** A bar's status: with a hedge, which attempt won and which lost (aborted). */
function mark(call, a) {
  const s = a.status ?? a.error ?? '…';
  if (!call.done || call.steer !== 'hedge' || !call.hedges) return String(s);
  return call.attempts.indexOf(a) + 1 === call.won ? `${s} won` : `${s} lost`;
}

/** What a steered call's outcome adds: which attempt won the hedge, where the failover went. */
function steered(call) {
  if (call.steer === 'hedge') return call.hedges ? `; attempt ${call.won} won the hedge` : '; no hedge needed';
  if (call.steer === 'failover') return `; answered by the ${call.endpoint === BACKUP ? 'backup' : 'primary'}`;
  return '';
}
