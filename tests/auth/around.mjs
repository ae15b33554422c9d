// What the runtime smokes of the four features around the retry share
// (tests/{auth,dedupe,cache,quota}/*-checks.mjs, run by Node, the Chromium
// page tests/browser/around.js and the Worker tests/workerd/around.mjs):
// plain JavaScript, no Node module.

/** Throws `msg` unless `cond`. */
export function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

let unique = 0;
/** A path no other smoke uses (the scripted server keeps one script per path). */
export const path = (name) => `/${name}-${Date.now().toString(36)}-${unique++}`;

/**
 * Runs the smokes of `smokes` (name -> async (lib, a) => void) named in
 * `only` (every one without it) against control API `a`; resolves with the
 * failures, as strings.
 */
export async function runSmokes(smokes, lib, a, only) {
  const failures = [];
  for (const [name, fn] of Object.entries(smokes)) {
    if (only && !only.includes(name)) continue;
    try {
      await fn(lib, a);
    } catch (e) {
      failures.push(`${name}: ${e?.stack ?? e}`);
    }
  }
  return failures;
}
