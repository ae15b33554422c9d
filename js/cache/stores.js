// @ts-check
// Where staleIfError (js/cache/index.js) keeps its copies: the Cache API
// where the runtime has one (pages and workers in a secure context, Service
// Workers, Cloudflare Workers, Deno), memory elsewhere (Node, Bun; a page
// over plain http). Both keep at most `max` copies, the least recently
// stored forgotten first; each copy is a body of at most `maxBodyBytes`
// with its status, headers and the time it was stored. A failure of the
// Cache API (its quota, a runtime that lacks `keys()`) loses a copy, never
// an answer: caching is best effort.

/**
 * A copy of an answer, as stored.
 * @typedef {object} Copy
 * @property {number} status
 * @property {string} statusText
 * @property {[string, string][]} headers
 * @property {Uint8Array} body
 * @property {number} at when it was stored (epoch ms)
 */

/**
 * @typedef {object} Store
 * @property {(key: string, copy: Copy) => Promise<void>} put
 * @property {(key: string) => Promise<Copy | undefined>} get
 * @property {(key: string) => Promise<void>} delete
 * @property {() => Promise<void>} clear
 */

/**
 * Copies in memory, the least recently stored dropped past `max`.
 * @param {number} max
 * @returns {Store}
 */
export function memoryStore(max) {
  /** @type {Map<string, Copy>} */
  const m = new Map();
  return {
    async put(key, copy) {
      m.delete(key);
      m.set(key, copy);
      while (m.size > max) m.delete(/** @type {string} */ (m.keys().next().value));
    },
    async get(key) {
      return m.get(key);
    },
    async delete(key) {
      m.delete(key);
    },
    async clear() {
      m.clear();
    },
  };
}

/**
 * The name-value pairs of `h`, in its order (lower-case names).
 * @param {Headers} h
 * @returns {[string, string][]}
 */
export function pairs(h) {
  /** @type {[string, string][]} */
  const out = [];
  h.forEach((v, k) => {
    out.push([k, v]);
  });
  return out;
}

/** Bytes as a body (TypeScript's lib types a Uint8Array's buffer too loosely for BodyInit). @param {Uint8Array} b */
export const bodyOf = (b) => /** @type {BodyInit} */ (/** @type {unknown} */ (b));

/** The header a stored copy keeps its storing time in (ms), and its own Cache-Control under. */
const AT = 'x-wasm-backoff-stored';
const CC = 'x-wasm-backoff-cache-control';

/**
 * The URL a key is stored under in the Cache API (a name of its own: no
 * entry of the app's under the same cache name is ever read or replaced).
 * @param {string} key
 */
const urlOf = (key) => `https://wasm-backoff.invalid/stale?key=${encodeURIComponent(key)}`;

/**
 * Copies in the Cache API's cache `name`. Each is stored with a
 * `Cache-Control: max-age` of `maxStaleMs` (Cloudflare's cache then lets
 * it go by itself; its own Cache-Control is kept aside and given back).
 * Past `max` copies, the first the cache lists are deleted; where it
 * cannot list its keys (Cloudflare Workers: neither `keys()` nor
 * `caches.delete()`), the least recently stored of those this realm
 * stored, which `clear()` deletes one by one there.
 * @param {string} name
 * @param {number} max
 * @param {number} maxStaleMs
 * @returns {Store}
 */
export function cacheStore(name, max, maxStaleMs) {
  /** @type {Promise<Cache> | undefined} */
  let opened;
  const cache = () => (opened ??= caches.open(name));
  /** The keys this realm stored, least recently stored first. @type {Set<string>} */
  const known = new Set();
  return {
    async put(key, copy) {
      known.delete(key);
      known.add(key);
      const h = new Headers(copy.headers);
      const cc = h.get('cache-control');
      if (cc !== null) h.set(CC, cc);
      h.set('cache-control', `max-age=${Math.ceil(maxStaleMs / 1000)}`);
      h.set(AT, String(copy.at));
      const c = await cache();
      await c.put(urlOf(key), new Response(bodyOf(copy.body), { status: copy.status, statusText: copy.statusText, headers: h }));
      /** @type {readonly Request[] | undefined} */
      let keys;
      try {
        keys = await c.keys();
      } catch {
        for (const k of known) {
          if (known.size <= max) break;
          known.delete(k);
          await c.delete(urlOf(k));
        }
        return;
      }
      for (const r of keys.slice(0, Math.max(0, keys.length - max))) await c.delete(r);
      while (known.size > max) known.delete(/** @type {string} */ (known.keys().next().value));
    },
    async get(key) {
      const res = await (await cache()).match(urlOf(key));
      if (!res) return undefined;
      const h = new Headers(res.headers);
      const at = Number(h.get(AT));
      h.delete(AT);
      h.delete('cache-control');
      const cc = h.get(CC);
      if (cc !== null) h.set('cache-control', cc);
      h.delete(CC);
      return { status: res.status, statusText: res.statusText, headers: pairs(h), body: new Uint8Array(await res.arrayBuffer()), at };
    },
    async delete(key) {
      known.delete(key);
      await (await cache()).delete(urlOf(key));
    },
    async clear() {
      const c = await cache();
      for (const k of known) await c.delete(urlOf(k));
      known.clear();
      try {
        await caches.delete(name);
        opened = undefined;
      } catch {}
    },
  };
}
