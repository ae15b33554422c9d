// @ts-check
// A tab that does not hold a shared stream (js/sse/shared.js) follows the
// holders' messages in the order the holders held, across takeovers. A
// takeover's lock grant and the old holder's last messages travel on
// different pipes, so a tab can hear them in either order:
// - the new holder resumes after the last message it heard from the old
//   one (it says which: `resume`, with `after: {h, n}`); the server sends
//   again what came after it;
// - a follower that heard more of the old holder than that has dispatched
//   those events already: it skips them when the new holder relays them
//   again (the same type, data and ID, in order);
// - a follower that heard less holds the new holder's messages until the
//   old holder's have reached that point (one sender's messages arrive in
//   order), and drops any later ones: the new holder sends them again.
// Each holder numbers its messages (`h` names the holder, `n` counts).

/** How many events of the current holder a follower keeps, to skip their resend (a lag of the channel, not of the stream). */
const KEPT = 256;

/**
 * @typedef {{ k: string, h: string, n: number, type?: string, data?: string, id?: string, after?: { h: string, n: number } }} Message
 * @typedef {{ h: string, cut?: number, last: number, held: Message[], sent: Message[] }} Run one holder's messages, as heard
 */

export class Follower {
  /** The holders in the order they held; the first is the one whose messages are applied now. @type {Run[]} */
  #runs = [];
  /** Events the current holder will send again, which this tab has dispatched. @type {Message[]} */
  #skip = [];
  /** Applies a message to this tab. @type {(m: Message) => void} */
  #apply;
  /** The last message applied ({h, n}): where this tab's stream resumes if it becomes the holder. @type {{ h: string, n: number } | undefined} */
  last;

  /** @param {(m: Message) => void} apply */
  constructor(apply) {
    this.#apply = apply;
  }

  /** A holder's message. @param {Message} m */
  take(m) {
    if (m.k === 'resume') return this.#resume(m);
    let run = this.#runs.find((r) => r.h === m.h);
    if (!run) {
      // (a holder that held before this tab heard of it: the one holding when the tab opened; after
      // that every holder is announced by its resume, and an unknown one's messages are late ones)
      if (this.#runs.length) return;
      run = this.#open(m.h);
    }
    if (run === this.#runs[0]) this.#take(run, m);
    else run.held.push(m);
    this.#next();
  }

  /** @param {Message} m */
  #resume(m) {
    const old = this.#runs.find((r) => r.h === m.after?.h);
    if (old && m.after) old.cut = m.after.n;
    // (it heard none of the holders this tab heard: their messages end where this tab's do)
    else for (const r of this.#runs) r.cut ??= r.last;
    this.#open(m.h);
    this.#next();
  }

  /** @param {string} h */
  #open(h) {
    const run = { h, last: 0, held: [], sent: [] };
    this.#runs.push(run);
    return run;
  }

  /** @param {Run} run @param {Message} m */
  #take(run, m) {
    run.last = m.n;
    if (run.cut !== undefined && m.n > run.cut) return;
    this.last = { h: m.h, n: m.n };
    if (m.k === 'event') {
      const s = this.#skip.shift();
      if (s && s.type === m.type && s.data === m.data && s.id === m.id) return;
      this.#skip = [];
      run.sent.push(m);
      if (run.sent.length > KEPT) run.sent.shift();
    }
    this.#apply(m);
  }

  /** Ends the runs that have reached their cut, and applies what their successors held. */
  #next() {
    for (let run = this.#runs[0]; run?.cut !== undefined && run.last >= run.cut; run = this.#runs[0]) {
      const cut = run.cut;
      this.#skip = run.sent.filter((m) => m.n > cut);
      this.#runs.shift();
      const next = this.#runs[0];
      if (next) for (const m of next.held.splice(0)) this.#take(next, m);
    }
  }
}
