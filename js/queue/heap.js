/** @typedef {{ at: number, seq: number, id: string }} Entry an index entry */

/**
 * A min-heap of index entries `{ at, seq, id }` (by time, then insertion
 * order). An entry is live while the store's `#entries` maps its id to it;
 * a record that changes gets a new entry and its old one is dropped when it
 * reaches the top.
 */
export class Heap {
  /** @type {Entry[]} */
  a = [];

  /**
   * @param {Entry} x
   * @param {Entry} y
   */
  static less(x, y) {
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }

  /** @param {Entry} e */
  push(e) {
    const a = this.a;
    let i = a.push(e) - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!Heap.less(e, a[p])) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = e;
  }

  pop() {
    const a = this.a;
    const top = a[0];
    const last = /** @type {Entry} */ (a.pop()); // (used only when `a` kept some)
    if (a.length) {
      let i = 0;
      for (;;) {
        let c = 2 * i + 1;
        if (c >= a.length) break;
        if (c + 1 < a.length && Heap.less(a[c + 1], a[c])) c++;
        if (!Heap.less(a[c], last)) break;
        a[i] = a[c];
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}
