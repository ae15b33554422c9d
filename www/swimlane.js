// The retry storm as something you watch: one seeded run of Brooker's model
// (the traces come from storm-worker.js, with the seeds of the curves), one
// canvas per policy, one row per client, one tick per write coloured by its
// outcome, on a shared virtual clock that plays at a chosen speed, pauses,
// steps from event to event and scrubs. Time runs on a log scale (the waits
// grow exponentially: a linear one would squeeze the first second, where
// most collisions happen, into a few pixels); so does the scrubber.
import { fmtMs, fmtCount, logTicks } from './chart.js';
import { CONFLICT, SUCCESS, GAVE_UP } from './storm.js';

const L = 8,
  R = 8,
  AXIS = 22, // px under the rows for the time axis
  SCRUB = 1000; // scrubber steps

/** The height of a client's row (px): 320 px for them all, within [3, 14]. @param {number} clients */
const rowOf = (clients) => Math.max(3, Math.min(14, Math.floor(320 / clients)));
/** A lane's height (px) for `clients` rows and the time axis. @param {number} clients */
const heightOf = (clients) => rowOf(clients) * clients + AXIS;

/** The index of the first event after `now` in a trace's (non-decreasing) times: how many have happened. */
export function happened(times, now) {
  let lo = 0,
    hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid] <= now) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Totals of a trace at virtual time `now`: writes, conflicts, clients done, clients that gave up. */
export function totals(tr, now) {
  const n = happened(tr.t, now);
  let ok = 0,
    gave = 0;
  for (let i = 0; i < n; i++) (tr.k[i] === SUCCESS && ok++) || (tr.k[i] === GAVE_UP && gave++);
  return { writes: n, conflicts: n - ok, done: ok, gaveUp: gave };
}

/** The next event time after `now` over all traces (Infinity when none). */
export function nextEvent(traces, now) {
  let t = Infinity;
  for (const tr of traces) {
    const i = happened(tr.t, now);
    if (i < tr.t.length) t = Math.min(t, tr.t[i]);
  }
  return t;
}

export class Swimlanes {
  /**
   * @param {{ lanes: {name: string, canvas: HTMLCanvasElement, totals: HTMLElement}[], scrub: HTMLInputElement,
   *   play: HTMLButtonElement, step: HTMLButtonElement, clock: HTMLElement, status: HTMLElement, root: HTMLElement }} ui
   */
  constructor(ui) {
    this.ui = ui;
    this.traces = null;
    this.now = 0;
    this.end = 0;
    this.speed = 1;
    this.playing = false;
    this.frame = 0;
    ui.play.addEventListener('click', () => (this.playing ? this.pause() : this.play()));
    ui.step.addEventListener('click', () => this.step());
    ui.scrub.max = String(SCRUB);
    ui.scrub.step = '1';
    ui.scrub.addEventListener('input', () => this.seek(this.fromScrub(Number(ui.scrub.value))));
    new ResizeObserver(() => this.draw()).observe(ui.lanes[0].canvas);
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => this.draw());
  }

  /** New traces ({name: {t, c, k, calls, timeMs, gaveUp}}) for `clients` clients: back to t = 0, paused. */
  show(traces, clients) {
    this.pause();
    this.traces = traces;
    this.clients = clients;
    this.end = Math.max(...Object.values(traces).map((tr) => tr.timeMs));
    // the log axis starts at the decade below the first write
    const first = Math.min(...Object.values(traces).map((tr) => tr.t[0] ?? this.end));
    this.t0 = Math.min(10 ** Math.floor(Math.log10(Math.max(first, 1e-3))), this.end / 10);
    this.seek(0);
    this.ui.root.dataset.ready = '1';
  }

  setSpeed(x) {
    this.speed = x;
  }

  play() {
    if (!this.traces) return;
    if (this.now >= this.end) this.seek(0);
    this.playing = true;
    this.ui.play.textContent = 'Pause';
    let last = performance.now();
    const tick = (t) => {
      this.now = Math.min(this.end, this.now + (t - last) * this.speed);
      last = t;
      this.update();
      if (this.now >= this.end) return this.pause();
      this.frame = requestAnimationFrame(tick);
    };
    this.frame = requestAnimationFrame(tick);
  }

  pause() {
    cancelAnimationFrame(this.frame);
    const was = this.playing;
    this.playing = false;
    this.ui.play.textContent = 'Play';
    if (was) this.announce();
  }

  /** To the next write of either policy. */
  step() {
    if (!this.traces) return;
    this.pause();
    const t = nextEvent(Object.values(this.traces), this.now);
    this.seek(Number.isFinite(t) ? t : this.end);
    this.announce();
  }

  seek(t) {
    this.now = Math.min(Math.max(0, t), this.end);
    this.update();
  }

  /** Where time `t` is along the axis, in [0, 1] (log scale from t0 to the end). */
  at(t) {
    return t <= this.t0 ? 0 : Math.log(t / this.t0) / Math.log(this.end / this.t0);
  }

  /** The time at scrubber value `v` (0 = the start). */
  fromScrub(v) {
    return v <= 0 ? 0 : this.t0 * (this.end / this.t0) ** (v / SCRUB);
  }

  /** The clock, the scrubber, the totals (counting up) and the canvases at `now`. */
  update() {
    const { ui } = this;
    ui.scrub.value = String(Math.round(this.at(this.now) * SCRUB));
    ui.scrub.setAttribute('aria-valuetext', `${fmtMs(this.now)} of ${fmtMs(this.end)}`);
    ui.clock.textContent = `t = ${fmtMs(this.now)} of ${fmtMs(this.end)}`;
    const all = {};
    for (const lane of ui.lanes) {
      const tot = (all[lane.name] = totals(this.traces[lane.name], this.now));
      lane.totals.textContent = `${fmtCount(tot.writes)} writes · ${fmtCount(tot.conflicts)} conflicts · ${tot.done}/${this.clients} done${tot.gaveUp ? ` · ${tot.gaveUp} gave up` : ''}`;
    }
    ui.root.dataset.now = String(this.now);
    ui.root.dataset.totals = JSON.stringify(all);
    this.draw();
  }

  /** Says where the run stands, for screen readers (after a pause or a step, never during play). */
  announce() {
    if (!this.traces) return;
    this.ui.status.textContent = `${this.ui.clock.textContent}. ${this.ui.lanes.map((l) => `${l.name}: ${l.totals.textContent}`).join('. ')}.`;
  }

  /**
   * Gives the lanes the height `clients` rows will take, while their run is still to come (it is
   * simulated once the section is near the screen): the page below does not move when it is drawn.
   */
  reserve(clients) {
    for (const lane of this.ui.lanes) lane.canvas.style.height = `${heightOf(clients)}px`;
  }

  draw() {
    if (!this.traces) return;
    const css = getComputedStyle(document.documentElement);
    const color = (v) => css.getPropertyValue(v).trim();
    const colors = { [CONFLICT]: color('--fail'), [SUCCESS]: color('--ok'), [GAVE_UP]: color('--gaveup') };
    const dpr = window.devicePixelRatio || 1;
    const rowH = rowOf(this.clients);
    for (const lane of this.ui.lanes) {
      const cv = lane.canvas;
      const w = cv.clientWidth || 600;
      const h = heightOf(this.clients);
      cv.style.height = `${h}px`;
      if (cv.width !== Math.round(w * dpr) || cv.height !== Math.round(h * dpr)) {
        cv.width = Math.round(w * dpr);
        cv.height = Math.round(h * dpr);
      }
      const g = cv.getContext('2d');
      g.setTransform(dpr, 0, 0, dpr, 0, 0);
      g.clearRect(0, 0, w, h);
      const x = (t) => L + this.at(t) * (w - L - R);
      // rows
      g.fillStyle = color('--grid');
      for (let c = 1; c < this.clients; c += 2) g.fillRect(L, c * rowH, w - L - R, rowH);
      // ticks up to now
      const tr = this.traces[lane.name];
      const n = happened(tr.t, this.now);
      const tw = Math.max(2, Math.min(4, rowH / 2));
      for (let i = 0; i < n; i++) {
        g.fillStyle = colors[tr.k[i]];
        g.fillRect(x(tr.t[i]) - tw / 2, tr.c[i] * rowH + 0.5, tw, Math.max(rowH - 1, 2));
      }
      // time axis and the playhead
      const top = rowH * this.clients;
      g.strokeStyle = color('--axis');
      g.fillStyle = color('--muted');
      g.font = '11px system-ui, sans-serif';
      g.textAlign = 'center';
      g.beginPath();
      g.moveTo(L, top + 0.5);
      g.lineTo(w - R, top + 0.5);
      g.stroke();
      for (const t of logTicks(this.t0, this.end).ticks.filter((t) => t >= this.t0 && t <= this.end)) {
        g.textAlign = t === this.t0 ? 'left' : x(t) > w - R - 20 ? 'right' : 'center';
        g.fillText(fmtMs(t), x(t), top + 15);
        g.fillRect(x(t), top, 1, 4);
      }
      g.strokeStyle = color('--fg');
      g.beginPath();
      g.moveTo(x(this.now) + 0.5, 0);
      g.lineTo(x(this.now) + 0.5, top);
      g.stroke();
    }
  }
}
