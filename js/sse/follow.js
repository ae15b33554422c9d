// @ts-check
// A tab that does not hold a shared stream (js/sse/shared.js) follows the
// holders' messages across takeovers. A takeover's lock grant and the old
// holder's last messages travel on different pipes, so the tabs hear them
// in any order; the stream's own positions (event IDs) put them back in
// line:
// - a new holder says where its connection resumes (`resume`, with `id`:
//   its last event ID) and when it took over (`t`: Date.now(), the clock
//   all tabs share); its server sends what came after that ID again. Two
//   resumes from two tabs may arrive in either order: the later `t` is the
//   newer holder. One older than the holder followed is stale: its
//   messages are held, and followed only if more than HELD come (a clock
//   set back between two takeovers: a gap rather than a stall);
// - a tab that has passed that ID has dispatched those events already: it
//   skips them when the new holder relays them again (the same type, data
//   and ID, in order), and drops what the old holders still send. (A
//   server that does not send them again, whose first event equals the
//   first skipped, a heartbeat say, has it taken for the resend.)
// - a tab that has not got there yet holds the new holder's messages and
//   follows the old holders until it reaches that ID (each sender's
//   messages arrive in order), then drops theirs. A tab that opened after
//   that ID (it was told a later one) catches up when the new holder
//   relays the last event it dispatched. It holds at most HELD messages:
//   a server that does not resume may never send that ID again after two
//   takeovers in a row, and a gap is better than a stall;
// - a new holder that had heard no event resumes with no ID: its server
//   sends only what comes next, so the old holders' last messages are
//   applied too, as they come. Nothing is told twice, but their order
//   against the new holder's is the channel's, and a tab that takes over
//   before they reach it does not hear them (the limit of a stream that
//   cannot say where it was: tests/props/sse-shared.props.test.mjs).
// Each holder signs its messages (`h`): a tab opened while one held
// follows that one first; any other is announced by its resume.

/** The events a tab keeps, to find where a new holder resumes (a lag of the channel, not of the stream). */
const KEPT = 256;
/** The messages a tab holds for a holder it has not caught up with. */
const HELD = 64;
/** The holders a tab keeps (holders that resumed with no ID stay followed: a bound on their number). */
const RUNS = 16;

/**
 * @typedef {{ k: string, h: string, type?: string, data?: string, id?: string, t?: number }} Message
 * @typedef {{ h: string, t: number, live: boolean, held: Message[], skip: Message[], at?: string, stale?: boolean }} Run
 *   a holder's messages: applied as they come (`live`) or held; the events its server sends again that
 *   this tab has dispatched (`skip`); when it took over (`t`), and the ID its connection resumed after (`at`)
 */

/** Whether events `a` and `b` are the same (type, data, ID). @param {Message} a @param {Message} b */
const same = (a, b) => a.type === b.type && a.data === b.data && a.id === b.id;

export class Follower {
  /** The holders in the order they held (by `t`; stale ones last): the first is the one followed. @type {Run[]} */
  #runs = [];
  /** The last messages applied that moved the stream (events, IDs). @type {Message[]} */
  #hist = [];
  /** The last event ID applied. */
  #id = '';
  /** The last event dispatched. @type {Message | undefined} */
  #last;
  /** Applies a message to this tab. @type {(m: Message) => void} */
  #apply;

  /** @param {(m: Message) => void} apply */
  constructor(apply) {
    this.#apply = apply;
  }

  /** A holder's message. @param {Message} m */
  take(m) {
    if (m.k === 'resume') return this.#resume(m);
    let run = this.#runs.find((r) => r.h === m.h);
    // (the holder holding when this tab opened; after that an unknown one's messages are late ones)
    if (!run && this.#runs.length === 0) this.#runs.push((run = { h: m.h, t: -Infinity, live: true, held: [], skip: [] }));
    if (!run) return;
    if (run.live) return this.#take(run, m);
    // (this tab opened after where the holder resumed: its replay has reached what the tab heard last)
    const caught = m.k === 'event' && !run.stale && (this.#last ? same(m, this.#last) : !!this.#id && m.id === this.#id);
    if (caught) return this.#follow(run, [], true);
    run.held.push(m);
    if (run.held.length > HELD) this.#follow(run, []);
  }

  /** A new holder: followed now if this tab has passed where it resumed, else once it gets there. @param {Message} m */
  #resume(m) {
    const at = m.id ?? '';
    const t = Number.isFinite(m.t) ? /** @type {number} */ (m.t) : -Infinity;
    /** @type {Run} */
    const run = { h: m.h, t, live: !at, held: [], skip: [], at: at || undefined };
    if (this.#runs.length && t < this.#runs[0].t) {
      this.#runs.push(Object.assign(run, { live: false, stale: true, at: undefined }));
    } else {
      const i = this.#runs.findIndex((r) => r.stale || r.t > t);
      this.#runs.splice(i < 0 ? this.#runs.length : i, 0, run);
    }
    if (this.#runs.length > RUNS) this.#runs.splice(1, 1);
    if (!run.at) return;
    const p = this.#passed(run.at);
    if (p >= 0)
      this.#follow(
        run,
        this.#hist.slice(p + 1).filter((x) => x.k === 'event'),
      );
    else if (this.#runs.length === 1) {
      // (the first holder this tab hears of, which it follows from where it resumed: that is where it is)
      this.#follow(run, []);
      this.#take(run, { k: 'id', h: run.h, id: run.at });
    }
  }

  /** Where in #hist the last event ID became `id` (-1: not kept, or not there yet). @param {string} id */
  #passed(id) {
    for (let i = this.#hist.length - 1; i >= 0; i--) {
      if (this.#hist[i].id === id && (i === 0 || this.#hist[i - 1].id !== id)) return i;
    }
    return -1;
  }

  /**
   * Follows `run` from now, the holders before it dropped, skipping `skip`
   * first; `caught`: from after what it relayed last (what it held is dropped).
   * @param {Run} run @param {Message[]} skip @param {boolean} [caught]
   */
  #follow(run, skip, caught = false) {
    this.#runs.splice(0, this.#runs.indexOf(run));
    Object.assign(run, { live: true, skip, stale: false });
    const held = run.held.splice(0);
    if (caught) return;
    for (const m of held) {
      if (!this.#runs.includes(run)) return; // (a later holder was reached meanwhile)
      this.#take(run, m);
    }
  }

  /** Applies a message of a holder followed now. @param {Run} run @param {Message} m */
  #take(run, m) {
    if (m.k === 'event') {
      const s = run.skip.shift();
      if (s && same(s, m)) return;
      run.skip = [];
    } else if (run.skip.length && m.id !== undefined) return; // (an ID it sends again, while it catches up)
    this.#apply(m);
    if (m.k === 'event') this.#last = m;
    if (m.id === undefined || (m.k !== 'event' && m.id === this.#id)) return;
    this.#hist.push(m);
    if (this.#hist.length > KEPT) this.#hist.shift();
    const was = this.#id;
    this.#id = m.id;
    if (this.#id === was) return;
    // Reached where a later holder resumed: follow the last such one.
    for (let i = this.#runs.length - 1; i > 0; i--) {
      const r = this.#runs[i];
      if (r.at === this.#id && !r.live && !r.stale) return this.#follow(r, []);
    }
  }
}
