// @ts-check
// The PRNG of chaos and of the project's scripted server's `failRate`
// (tests/server/scripted.mjs imports it): the same seed draws the same
// numbers in every runtime, so chaos and the server fault the same calls.

/**
 * mulberry32 (Tommy Ettinger's): a seeded PRNG, uniform in [0, 1).
 * @param {number} seed
 */
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
