// @ts-check
// Stand-ins for what works in Cloudflare Workers only (the Durable Object
// classes of `wasm-backoff/queue` and `/gate`): in every other build the
// same names are exported (the .d.ts holds everywhere, browsers download
// none of that code), and each throws, saying where it works.

/**
 * Throws: `what` works in Workers only, from subpath `sub`.
 * @param {string} what
 * @param {string} sub
 * @returns {never}
 */
export function only(what, sub) {
  throw new TypeError(
    `${what} works in Cloudflare Workers only: import 'wasm-backoff/${sub}' there (the package's workerd export condition)`,
  );
}

/**
 * A class whose constructor throws (see `only`).
 * @param {string} what
 * @param {string} sub
 */
export const stub = (what, sub) =>
  class {
    constructor() {
      only(what, sub);
    }
  };
