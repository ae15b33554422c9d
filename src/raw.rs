//! `RawBackoff`: the calculator behind `Backoff` in `pkg/backoff.js`.
//!
//! Every option arrives as an f64, NaN meaning "not given" (the JS side has
//! already turned NaN inputs into errors and strings into indices). The
//! constructor never fails: an invalid combination leaves `error` non-zero
//! and the JS side throws the matching `RangeError`.

use wasm_backoff_core::{
    seeded_rng, AtCeiling, Backoff, Config, ConfigError, DefaultRng, Jitter, Preset, SlotMode,
    Strategy,
};
use wasm_bindgen::prelude::*;

/// Error code for a seed that is not a safe integer (the core takes any u64,
/// so this rule is the boundary's own).
pub const ERROR_SEED: u8 = 32;

/// Largest integer a JS number holds exactly.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

const STRATEGIES: [Strategy; 6] = [
    Strategy::Exponential,
    Strategy::Constant,
    Strategy::Linear,
    Strategy::Fibonacci,
    Strategy::Decorrelated,
    Strategy::Slotted,
];

fn given(x: f64) -> Option<f64> {
    if x.is_nan() {
        None
    } else {
        Some(x)
    }
}

/// `x` as an index into a table of `len`, when given and in range.
fn index(x: f64, len: usize) -> Option<usize> {
    let i = given(x)?;
    if i >= 0.0 && i < len as f64 && (i as usize) as f64 == i {
        Some(i as usize)
    } else {
        None
    }
}

/// A whole number in `[lo, hi]`, else `err`.
fn whole(x: f64, lo: f64, hi: f64, err: ConfigError) -> Result<f64, u8> {
    if x >= lo && x <= hi && (x as u64) as f64 == x {
        Ok(x)
    } else {
        Err(err.code())
    }
}

/// The configuration and seed described by the f64 fields (see
/// [`RawBackoff::new`]), or an error code.
#[allow(clippy::too_many_arguments)]
#[inline(never)] // one copy of the struct moves instead of several inlined ones
pub fn decode(
    preset: f64,
    strategy: f64,
    base_ms: f64,
    factor: f64,
    max_delay_ms: f64,
    jitter: f64,
    jitter_amount: f64,
    max_attempts: f64,
    max_elapsed_ms: f64,
    ceiling: f64,
    at_ceiling: f64,
    slot_mode: f64,
    seed: f64,
    fallback_attempts: f64,
) -> Result<(Config, u64), u8> {
    let preset = index(preset, Preset::ALL.len()).and_then(|i| Preset::ALL.get(i).copied());
    let mut cfg = preset.map_or(Config::new(), Preset::config);
    if let Some(s) = index(strategy, 6).and_then(|i| STRATEGIES.get(i)) {
        cfg.strategy = *s;
        // Without a preset, the strategies that are random by themselves
        // default to no extra jitter, and decorrelated to Brooker's factor 3.
        if preset.is_none() {
            match cfg.strategy {
                Strategy::Decorrelated => cfg = cfg.jitter(Jitter::None).factor(3.0),
                Strategy::Slotted => cfg = cfg.jitter(Jitter::None),
                _ => {}
            }
        }
    }
    if let Some(x) = given(base_ms) {
        cfg.base_ms = x;
    }
    if let Some(x) = given(factor) {
        cfg.factor = x;
    }
    if let Some(x) = given(max_delay_ms) {
        cfg.max_delay_ms = x;
    }
    if let Some(i) = index(jitter, 5) {
        cfg.jitter = match i {
            0 => Jitter::None,
            1 => Jitter::Full,
            2 => Jitter::Equal,
            3 => Jitter::Ratio(jitter_amount),
            _ => Jitter::Add(jitter_amount),
        };
    }
    if let Some(x) = given(max_attempts) {
        cfg.max_attempts = if x == f64::INFINITY {
            None
        } else {
            let n = whole(x, 1.0, MAX_SAFE, ConfigError::MaxAttempts)?;
            Some(if n > u32::MAX as f64 {
                u32::MAX
            } else {
                n as u32
            })
        };
    }
    #[cfg(not(feature = "fetch"))]
    let _ = fallback_attempts; // only the fetch driver has a default limit
    #[cfg(feature = "fetch")]
    if cfg.max_attempts.is_none() && given(max_attempts).is_none() {
        // The caller's default when neither the options nor the preset limit
        // the attempts (fetchWithBackoff: 5).
        if let Some(x) = given(fallback_attempts) {
            cfg.max_attempts =
                Some(whole(x, 1.0, u32::MAX as f64, ConfigError::MaxAttempts)? as u32);
        }
    }
    if let Some(x) = given(max_elapsed_ms) {
        cfg.max_elapsed_ms = if x == f64::INFINITY { None } else { Some(x) };
    }
    if let Some(x) = given(ceiling) {
        cfg.ceiling = whole(x, 1.0, 1023.0, ConfigError::Ceiling)? as u32;
    }
    if let Some(i) = index(at_ceiling, 2) {
        cfg.at_ceiling = if i == 0 {
            AtCeiling::Stay
        } else {
            AtCeiling::Reset
        };
    }
    if let Some(i) = index(slot_mode, 2) {
        cfg.slot_mode = if i == 0 {
            SlotMode::Binary
        } else {
            SlotMode::Exponent
        };
    }
    cfg.validate().map_err(ConfigError::code)?;
    if let Some(p) = preset {
        p.check(&cfg).map_err(ConfigError::code)?;
    }
    // The seed is always given: without one from the caller, backoff.js draws
    // 53 bits from `crypto.getRandomValues` (see `entropy` there).
    let seed = match given(seed) {
        Some(x) if x.abs() <= MAX_SAFE && (x as i64) as f64 == x => x as i64 as u64,
        _ => return Err(ERROR_SEED),
    };
    Ok((cfg, seed))
}

/// Draws per `draws` call (32 KB of scratch space, in .bss: no bytes in the module).
pub const CHUNK: usize = 4096;

struct Scratch(core::cell::UnsafeCell<[f64; CHUNK]>);
// SAFETY: the module is single-threaded (wasm32 without atomics).
unsafe impl Sync for Scratch {}
static SCRATCH: Scratch = Scratch(core::cell::UnsafeCell::new([0.0; CHUNK]));

/// A backoff schedule; `error` is non-zero when the options were rejected.
#[wasm_bindgen]
pub struct RawBackoff {
    /// `None` exactly when `error != 0`; every method is then inert.
    inner: Option<Backoff<DefaultRng>>,
    error: u8,
}

#[wasm_bindgen]
impl RawBackoff {
    /// Fields as f64, NaN = not given; `fallback_attempts` applies when
    /// neither `max_attempts` nor the preset sets a limit. Enumerations are indices:
    /// preset in `Preset::ALL` order; strategy exponential, constant, linear,
    /// fibonacci, decorrelated, slotted; jitter none, full, equal, ratio
    /// (`jitter_amount` = r), add (`jitter_amount` = ms); at_ceiling stay,
    /// reset; slot_mode binary, exponent.
    #[wasm_bindgen(constructor)]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        preset: f64,
        strategy: f64,
        base_ms: f64,
        factor: f64,
        max_delay_ms: f64,
        jitter: f64,
        jitter_amount: f64,
        max_attempts: f64,
        max_elapsed_ms: f64,
        ceiling: f64,
        at_ceiling: f64,
        slot_mode: f64,
        seed: f64,
        fallback_attempts: f64,
    ) -> RawBackoff {
        let decoded = decode(
            preset,
            strategy,
            base_ms,
            factor,
            max_delay_ms,
            jitter,
            jitter_amount,
            max_attempts,
            max_elapsed_ms,
            ceiling,
            at_ceiling,
            slot_mode,
            seed,
            fallback_attempts,
        );
        match decoded
            .and_then(|(cfg, seed)| Backoff::new(cfg, seeded_rng(seed)).map_err(ConfigError::code))
        {
            Ok(b) => RawBackoff {
                inner: Some(b),
                error: 0,
            },
            Err(error) => RawBackoff { inner: None, error },
        }
    }

    /// 0, or the code of the rejected option (`ConfigError::code`, or `ERROR_SEED`).
    #[wasm_bindgen(getter)]
    pub fn error(&self) -> u8 {
        self.error
    }

    /// The delay before the next retry, or -1 to give up (backoff.js turns
    /// it into `undefined`; a plain f64 return needs no Option shim).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> f64 {
        self.inner
            .as_mut()
            .and_then(Backoff::next_delay)
            .unwrap_or(-1.0)
    }

    /// The wait for a `Retry-After` of `hint_ms` when the schedule offered
    /// `delay` (see `Backoff::with_hint`).
    #[cfg(feature = "fetch")]
    pub fn hint(&mut self, delay: f64, hint_ms: f64) -> f64 {
        match self.inner.as_mut() {
            Some(b) => b.with_hint(delay, hint_ms),
            None => delay,
        }
    }

    /// Exact statistics of the delay before retry `attempt`, written to the
    /// scratch buffer as [exact, min, max, p50, p90, mean]; `exact` is 0
    /// when the law has no closed form (the caller samples instead).
    #[cfg(feature = "stats")]
    pub fn stats(&self, attempt: u32) -> *const f64 {
        let buf = SCRATCH.0.get();
        // SAFETY: as in `draws`.
        let out = unsafe { &mut *buf };
        let s = self
            .inner
            .as_ref()
            .and_then(|b| wasm_backoff_core::delay_stats(b.config(), attempt));
        if let (Some(s), [e, a, b, c, d, m, ..]) = (s, &mut out[..]) {
            (*e, *a, *b, *c, *d, *m) = (1.0, s.min, s.max, s.p50, s.p90, s.mean);
        } else {
            out[0] = 0.0;
        }
        buf as *const f64
    }

    /// Back to the first retry (what a success does).
    pub fn reset(&mut self) {
        if let Some(b) = self.inner.as_mut() {
            b.reset()
        }
    }

    /// Retries handed out since the last reset.
    #[wasm_bindgen(getter)]
    pub fn attempt(&self) -> u32 {
        self.inner.as_ref().map_or(0, Backoff::attempt)
    }

    /// Retries handed out since construction.
    #[wasm_bindgen(getter, js_name = totalRetries)]
    pub fn total_retries(&self) -> f64 {
        self.inner.as_ref().map_or(0, Backoff::total_retries) as f64
    }

    /// Resets so far (`reset()` after a retry, and slotted wraps past the ceiling).
    #[wasm_bindgen(getter)]
    pub fn resets(&self) -> f64 {
        self.inner.as_ref().map_or(0, Backoff::resets) as f64
    }

    /// Sum of the delays handed out since the last reset, in ms.
    #[wasm_bindgen(getter, js_name = elapsedMs)]
    pub fn elapsed_ms(&self) -> f64 {
        self.inner.as_ref().map_or(0.0, Backoff::elapsed_ms)
    }

    /// Writes `min(n, CHUNK)` independent draws of the delay before retry
    /// `attempt` into the shared scratch buffer and returns its address;
    /// backoff.js copies them out of wasm memory at once. (A `Vec` return or
    /// a `&mut [f64]` parameter would do the same with more glue: growth and
    /// externref code that every user would download.)
    pub fn draws(&mut self, attempt: u32, n: u32) -> *const f64 {
        let buf = SCRATCH.0.get();
        if let Some(b) = self.inner.as_mut() {
            // SAFETY: wasm32 without threads; this is the only code that
            // touches SCRATCH, and the caller reads it before calling in again.
            for d in unsafe { &mut *buf }.iter_mut().take(n as usize) {
                *d = b.sample_at(attempt);
            }
        }
        buf as *const f64
    }
}

#[cfg(feature = "queue")]
impl RawBackoff {
    /// The validated configuration (`None` when the options were rejected),
    /// for `RawQueue`, which takes its retry schedule from a `RawBackoff`.
    pub(crate) fn config(&self) -> Option<&Config> {
        self.inner.as_ref().map(Backoff::config)
    }
}

#[cfg(feature = "gate")]
impl RawBackoff {
    /// Takes the schedule out (`None` when the options were rejected, or
    /// once taken), for `RawGate`, whose backoff rounds it times.
    pub(crate) fn take_inner(&mut self) -> Option<Backoff<DefaultRng>> {
        self.inner.take()
    }
}
