//! The calculator's exports (`Backoff` in js/backoff.js): the options record
//! decoded into a validated schedule, and the schedule behind a handle.

use crate::io::{Cell, answer, record, scratch_mut};
use crate::schema::{Error, Field, JITTER_RATIO, RECORD_LEN};
use crate::slab::{self, Pool};
use wasm_backoff_core::{
    AtCeiling, Backoff, Config, DefaultRng, Jitter, Preset, SlotMode, Strategy, seeded_rng,
};

/// Largest integer a JS number holds exactly.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// The record's field `f`, when given (not NaN). (`get`, not indexing: a
/// bounds-check panic would drag `core::fmt` into the module.)
pub fn given(r: &[f64; RECORD_LEN], f: Field) -> Option<f64> {
    r.get(f as usize).copied().filter(|x| !x.is_nan())
}

/// The entry of `list` that field `f` indexes, when given and in range (the
/// JS reader only writes valid indices; anything else counts as not given).
/// (Generic: measured, one copy per list is 64 B smaller than one shared
/// index function, which needs the bounds checks back at every use.)
fn pick<T: Copy>(r: &[f64; RECORD_LEN], f: Field, list: &[T]) -> Option<T> {
    let i = given(r, f)?;
    if i >= 0.0 && (i as usize) as f64 == i {
        list.get(i as usize).copied()
    } else {
        None
    }
}

/// A count: a whole number >= `min`, saturated to u32::MAX (so +Infinity
/// and anything past 2^32 − 1 mean "no limit" in practice), else `err`.
pub fn count(x: f64, min: f64, err: Error) -> Result<u32, Error> {
    // Every f64 from 2^53 on is a whole number; below, a cast round-trips exactly when whole.
    let whole = x == f64::INFINITY || x >= 9_007_199_254_740_992.0 || (x as u64) as f64 == x;
    if x >= min && whole {
        Ok(x as u32) // saturating
    } else {
        Err(err)
    }
}

/// The limits the record names: attempts (the fallback when neither the
/// options nor the preset name any), the elapsed time, the slot ceiling.
#[inline(always)]
fn limits(r: &[f64; RECORD_LEN], cfg: &mut Config) -> Result<(), Error> {
    let attempts = given(r, Field::MaxAttempts);
    if let Some(x) = attempts {
        cfg.max_attempts = match count(x, 1.0, Error::MaxAttempts)? {
            _ if x == f64::INFINITY => None,
            n => Some(n),
        };
    }
    if let (None, None, Some(x)) = (
        cfg.max_attempts,
        attempts,
        given(r, Field::FallbackAttempts),
    ) {
        cfg.max_attempts = Some(count(x, 1.0, Error::MaxAttempts)?);
    }
    if let Some(x) = given(r, Field::MaxElapsedMs) {
        cfg.max_elapsed_ms = if x == f64::INFINITY { None } else { Some(x) };
    }
    if let Some(x) = given(r, Field::Ceiling) {
        cfg.ceiling = match count(x, 1.0, Error::Ceiling)? {
            n @ 1..=1023 => n,
            _ => return Err(Error::Ceiling),
        };
    }
    Ok(())
}

/// The seed, always given: without one from the caller, the JS side draws
/// 53 bits from `crypto.getRandomValues`. One convention for every API: the
/// integer's two's complement.
#[inline(always)]
fn seed(r: &[f64; RECORD_LEN]) -> Result<u64, Error> {
    match given(r, Field::Seed) {
        Some(x) if x.abs() <= MAX_SAFE && (x as i64) as f64 == x => Ok(x as i64 as u64),
        _ => Err(Error::Seed),
    }
}

/// The schedule and seed the record describes, or the error of the first
/// rejected field. Ranges are checked here (the JS reader checked types).
#[inline(never)] // one copy of the struct moves instead of several inlined ones
pub fn decode(r: &[f64; RECORD_LEN]) -> Result<(Config, u64), Error> {
    let preset = pick(r, Field::Preset, &Preset::ALL);
    let mut cfg = preset.map_or(Config::new(), Preset::config);
    if let Some(s) = pick(r, Field::Strategy, &Strategy::ALL) {
        cfg.strategy = s;
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
    if let Some(x) = given(r, Field::BaseMs) {
        cfg.base_ms = x;
    }
    if let Some(x) = given(r, Field::Factor) {
        cfg.factor = x;
    }
    if let Some(x) = given(r, Field::MaxDelayMs) {
        cfg.max_delay_ms = x;
    }
    if let Some(i) = pick(r, Field::Jitter, &[0, 1, 2, 3, 4]) {
        let amount = given(r, Field::JitterAmount).unwrap_or(f64::NAN);
        cfg.jitter = match i {
            0 => Jitter::None,
            1 => Jitter::Full,
            2 => Jitter::Equal,
            JITTER_RATIO => Jitter::Ratio(amount),
            _ => Jitter::Add(amount), // JITTER_ADD_MAX_MS
        };
    }
    limits(r, &mut cfg)?;
    if let Some(a) = pick(r, Field::AtCeiling, &[AtCeiling::Stay, AtCeiling::Reset]) {
        cfg.at_ceiling = a;
    }
    if let Some(m) = pick(r, Field::SlotMode, &[SlotMode::Binary, SlotMode::Exponent]) {
        cfg.slot_mode = m;
    }
    cfg.validate().map_err(Error::from_config)?;
    if let Some(p) = preset {
        p.check(&cfg).map_err(Error::from_config)?;
    }
    Ok((cfg, seed(r)?))
}

/// The schedule the record describes, seeded.
pub(crate) fn schedule(r: &[f64; RECORD_LEN]) -> Result<Backoff<DefaultRng>, Error> {
    let (cfg, seed) = decode(r)?;
    Backoff::new(cfg, seeded_rng(seed)).map_err(Error::from_config)
}

/// A handle as the f64 JS receives: the slot's address, or minus the error code.
pub(crate) fn handle(made: Result<usize, Error>) -> f64 {
    match made {
        Ok(0) => -(Error::OutOfMemory.code() as f64),
        Ok(h) => h as f64,
        Err(e) => -(e.code() as f64),
    }
}

static BACKOFFS: Cell<Pool> = Pool::new();

/// The schedule behind a handle of [`backoff_new`].
fn backoff<'a>(h: usize) -> &'a mut Backoff<DefaultRng> {
    // SAFETY: js/backoff.js passes only live handles of this pool (see slab::get).
    unsafe { slab::get(h) }
}

/// A schedule from the options record: its handle, or minus the error code.
#[unsafe(no_mangle)]
pub extern "C" fn backoff_new() -> f64 {
    handle(schedule(&record()).map(|b| slab::alloc(&BACKOFFS, b)))
}

/// Frees the schedule of `h`.
#[unsafe(no_mangle)]
pub extern "C" fn backoff_free(h: usize) {
    // SAFETY: as in `backoff`; JS forgets the handle first.
    unsafe { slab::free(&BACKOFFS, h) }
}

/// The delay before the next retry, or -1 to give up. With `hint` >= 0 (a
/// server-named wait in ms, e.g. Retry-After) the delay is at least the
/// hint, with a little jitter above it (see `Backoff::with_hint`); NaN (or
/// anything negative) = none. With `base` >= 0 the delay is drawn on that
/// base instead of the schedule's (`throttleBaseMs` for a throttled
/// attempt, `Backoff::next_delay_on`); below 0, on -`base` times the
/// schedule's own (the default throttling base, 10×); NaN = the schedule's own.
/// (One export for all: each export costs every user its shim.)
#[unsafe(no_mangle)]
pub extern "C" fn backoff_next(h: usize, hint: f64, base: f64) -> f64 {
    let b = backoff(h);
    // (one call: on the schedule's own base, `next_delay_on` is `next_delay`;
    // gzip, small module 38 B less, gate 7 more; the order of the tests too)
    let own = b.config().base_ms;
    let on = if base >= 0.0 {
        base
    } else if base < 0.0 {
        -base * own
    } else {
        own
    };
    match b.next_delay_on(on) {
        Some(d) if hint >= 0.0 => b.with_hint(d, hint),
        Some(d) => d,
        None => -1.0,
    }
}

/// Back to the first retry (what a success does).
#[unsafe(no_mangle)]
pub extern "C" fn backoff_reset(h: usize) {
    backoff(h).reset()
}

/// Answers `schema::COUNTERS`: attempt, total retries, resets, elapsed ms, max attempts.
#[unsafe(no_mangle)]
pub extern "C" fn backoff_counters(h: usize) {
    let b = backoff(h);
    answer(&[
        b.attempt() as f64,
        b.total_retries() as f64,
        b.resets() as f64,
        b.elapsed_ms(),
        b.config().max_attempts.map_or(f64::INFINITY, |n| n as f64),
    ]);
}

/// Fills the scratch buffer with `min(n, CHUNK)` independent draws of the
/// delay before retry `attempt` (JS copies them out at once).
#[unsafe(no_mangle)]
pub extern "C" fn backoff_draws(h: usize, attempt: u32, n: u32) {
    let b = backoff(h);
    for d in scratch_mut().iter_mut().take(n as usize) {
        *d = b.sample_at(attempt);
    }
}
