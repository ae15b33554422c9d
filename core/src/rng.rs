//! Randomness behind a trait: any [`Rng`] (rand_core's trait) drives the
//! calculator, so a caller can bring their own generator.
//!
//! The default is xoshiro256++ (Blackman and Vigna), seeded through SplitMix64
//! as its authors recommend: small, fast, well studied, and defined entirely by
//! integer arithmetic, hence bit-identical on every platform. It is written out
//! here (twenty lines) rather than taken from `rand_xoshiro` because that
//! crate's seeding path carries slice-length panics whose messages cost the
//! wasm module about 1 KB; a test checks both produce the same stream.

use core::convert::Infallible;
pub use rand_core::Rng;
use rand_core::TryRng;

/// xoshiro256++ 1.0, seeded from a `u64` with SplitMix64 (the same stream as
/// `rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64`).
///
/// ```
/// use wasm_backoff_core::{Rng, Xoshiro256pp};
/// let mut a = Xoshiro256pp::seed_from_u64(9);
/// let mut b = Xoshiro256pp::seed_from_u64(9);
/// assert_eq!(a.next_u64(), b.next_u64());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Xoshiro256pp {
    s: [u64; 4],
}

/// The generator used when the caller does not bring one.
///
/// ```
/// use wasm_backoff_core::{seeded_rng, DefaultRng};
/// let _rng: DefaultRng = seeded_rng(1);
/// ```
pub type DefaultRng = Xoshiro256pp;

impl Xoshiro256pp {
    /// Expands `seed` into the 256-bit state with SplitMix64.
    ///
    /// ```
    /// use wasm_backoff_core::Xoshiro256pp;
    /// assert_ne!(Xoshiro256pp::seed_from_u64(1), Xoshiro256pp::seed_from_u64(2));
    /// ```
    pub const fn seed_from_u64(seed: u64) -> Self {
        let mut x = seed;
        let mut s = [0u64; 4];
        let mut i = 0;
        while i < 4 {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            s[i] = z ^ (z >> 31);
            i += 1;
        }
        Xoshiro256pp { s }
    }

    /// The next 64 random bits.
    ///
    /// ```
    /// use wasm_backoff_core::Xoshiro256pp;
    /// let mut r = Xoshiro256pp::seed_from_u64(1);
    /// assert_ne!(r.next_word(), r.next_word());
    /// ```
    #[inline]
    pub fn next_word(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
}

impl TryRng for Xoshiro256pp {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok((self.next_word() >> 32) as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.next_word())
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            for (d, b) in chunk.iter_mut().zip(self.next_word().to_le_bytes()) {
                *d = b;
            }
        }
        Ok(())
    }
}

/// The default generator, seeded: the same seed gives the same stream on
/// every platform and in every runtime.
///
/// ```
/// use wasm_backoff_core::{seeded_rng, Rng};
/// assert_eq!(seeded_rng(42).next_u64(), seeded_rng(42).next_u64());
/// ```
pub const fn seeded_rng(seed: u64) -> DefaultRng {
    Xoshiro256pp::seed_from_u64(seed)
}

/// A uniform draw in [0, 1) with 53 random bits (the top bits of one `u64`):
/// every multiple of 2^-53 in the range is equally likely.
///
/// ```
/// use wasm_backoff_core::{seeded_rng, unit_f64};
/// let u = unit_f64(&mut seeded_rng(3));
/// assert!((0.0..1.0).contains(&u));
/// ```
pub fn unit_f64<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
}

/// The default generator seeded from the platform's entropy (feature
/// `getrandom`): the OS natively, `crypto.getRandomValues` on
/// wasm32-unknown-unknown. A schedule without an explicit seed should use
/// this, never a constant, so that clients do not retry in lockstep.
///
/// ```
/// # #[cfg(feature = "getrandom")] {
/// use wasm_backoff_core::{entropy_rng, Backoff, Config};
/// let mut b = Backoff::new(Config::new(), entropy_rng().unwrap()).unwrap();
/// let d = b.next_delay().unwrap();
/// assert!((0.0..100.0).contains(&d)); // full jitter on the first 100 ms
/// # }
/// ```
#[cfg(feature = "getrandom")]
pub fn entropy_rng() -> Result<DefaultRng, getrandom::Error> {
    entropy_seed().map(seeded_rng)
}

/// The seed of [`entropy_rng`] itself (feature `getrandom`): 8 bytes of the
/// platform's entropy, for an API that takes a seed rather than a
/// generator (`retry`'s `seed_with`, made at the first retry only).
/// `seeded_rng(entropy_seed()?)` is `entropy_rng()`.
///
/// ```
/// # #[cfg(feature = "getrandom")] {
/// use wasm_backoff_core::entropy_seed;
/// assert_ne!(entropy_seed().unwrap(), entropy_seed().unwrap()); // (2^-64 odds)
/// # }
/// ```
#[cfg(feature = "getrandom")]
pub fn entropy_seed() -> Result<u64, getrandom::Error> {
    let mut seed = [0u8; 8];
    getrandom::fill(&mut seed)?;
    Ok(u64::from_le_bytes(seed))
}
