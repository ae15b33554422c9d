//! The per-target gate's exports (js/gate/, the gate module only). The state
//! machine is `wasm_backoff_core::gate`; JavaScript holds the promises of
//! the held calls, their timers and one wake-up timer per target.
//!
//! Every operation answers the target's whole status in the result record
//! (`schema::GATE_STATUS`), so the JS side never asks a second question:
//! a healthy call through the gate is two calls into wasm (admit, then
//! succeeded), and nothing is counted on both sides.

use crate::calc::{count, decode, given, handle};
use crate::io::{Cell, answer, record, scratch_mut};
use crate::schema::{
    CANCELLED, ENDED, EVICT_HEAD, EVICT_TAIL, Error, FAILED, FROM_THE_FUTURE, Field, HELD,
    MALFORMED, OWN_VETOED, REACHED, WAKE_IDLE, WAKE_NONE,
};
use crate::slab::{self, Pool};
use wasm_backoff_core::breaker::Trip;
use wasm_backoff_core::gate::{
    Admit, Decision, Gate, Hold, Limits, Next, Outcome, Overflow, RestoreError, SAVED_LEN,
};
use wasm_backoff_core::limiter::Limiter;
use wasm_backoff_core::policy::End;
use wasm_backoff_core::{Backoff, DefaultRng, MAX_DELAY_MS, seeded_rng};

static GATES: Cell<Pool> = Pool::new();

/// The gate behind a handle of [`gate_new`].
fn gate<'a>(h: usize) -> &'a mut Gate<DefaultRng> {
    // SAFETY: js/gate.js passes only live handles of this pool (see slab::get).
    unsafe { slab::get(h) }
}

/// Writes the status of the gate of `h` to the result record: phase, held,
/// in flight, rounds, wake time (-1 none, -2 idle: the gate may be
/// dropped), probes, evictions, timeouts, cause, the round's end (-1 when
/// not backing off).
fn status(h: usize) {
    let g = gate(h);
    let wake = if g.idle() {
        WAKE_IDLE
    } else {
        g.wake_at().unwrap_or(WAKE_NONE)
    };
    answer(&[
        g.phase() as u8 as f64,
        g.held() as f64,
        g.in_flight() as f64,
        g.rounds() as f64,
        wake,
        g.probes() as f64,
        g.evictions() as f64,
        g.timeouts() as f64,
        g.cause() as u8 as f64,
        g.until().unwrap_or(WAKE_NONE),
    ]);
}

/// A hold answer as a number (`schema::CODES`).
fn hold_code(h: Hold) -> f64 {
    match h {
        Hold::Held => HELD,
        Hold::EvictHead => EVICT_HEAD,
        Hold::EvictTail => EVICT_TAIL,
    }
}

/// An end as a number: `ENDED` minus the reason's wire order (`schema::CODES`).
fn end_code(e: End) -> f64 {
    ENDED - e as u8 as f64
}

/// A call's own next delay as `Call.next` (js/engine/call.js) answers it:
/// ms (>= 0), `OWN_VETOED` (its `delay` hook gave up), or another negative
/// (its schedule is exhausted).
fn own(ms: f64) -> Result<f64, End> {
    if ms >= 0.0 {
        Ok(ms)
    } else if ms == OWN_VETOED {
        Err(End::Vetoed)
    } else {
        Err(End::Exhausted)
    }
}

/// The threshold the record describes: `failureRatio` (with `windowMs` and
/// `minCalls`, the core's defaults unless given) or `consecutive` (the
/// core's default threshold unless given).
fn trip(r: &[f64; crate::schema::RECORD_LEN]) -> Result<Trip, Error> {
    let consecutive = given(r, Field::Consecutive);
    let Some(ratio) = given(r, Field::FailureRatio) else {
        return match consecutive {
            Some(n) => Ok(Trip::Consecutive(count(n, 1.0, Error::Consecutive)?)),
            None => Ok(Trip::DEFAULT),
        };
    };
    if consecutive.is_some() {
        return Err(Error::Consecutive);
    }
    if !(ratio > 0.0 && ratio <= 1.0) {
        return Err(Error::FailureRatio);
    }
    let window_ms = given(r, Field::WindowMs).unwrap_or(Trip::DEFAULT_WINDOW_MS);
    if !(window_ms > 0.0 && window_ms <= MAX_DELAY_MS) {
        return Err(Error::WindowMs);
    }
    Ok(Trip::Ratio {
        ratio,
        window_ms,
        min_calls: match given(r, Field::MinCalls) {
            Some(n) => count(n, 1.0, Error::MinCalls)?,
            None => Trip::DEFAULT_MIN_CALLS,
        },
    })
}

/// A gate from the options record (the schedule's fields and the gate's)
/// at `now`: its handle, or minus the error code. The rounds' schedule has
/// no limits of its own: a target is never given up on (its callers are,
/// by theirs).
#[unsafe(no_mangle)]
pub extern "C" fn gate_new(now: f64) -> f64 {
    let r = record();
    let limits = || -> Result<Limits, Error> {
        // (the defaults are the core's: Limits::DEFAULT)
        let d = Limits::DEFAULT;
        let or = |f, d| given(&r, f).unwrap_or(d);
        let probe_timeout_ms = or(Field::ProbeTimeoutMs, d.probe_timeout_ms);
        if probe_timeout_ms.is_nan() || probe_timeout_ms <= 0.0 {
            return Err(Error::ProbeTimeoutMs);
        }
        Ok(Limits {
            max_queued: count(
                or(Field::MaxQueued, d.max_queued as f64),
                0.0,
                Error::MaxQueued,
            )?,
            overflow: match given(&r, Field::Overflow) {
                Some(1.0) => Overflow::RejectNewest,
                Some(_) => Overflow::EvictOldest,
                None => d.overflow,
            },
            concurrency: count(
                or(Field::Concurrency, f64::INFINITY),
                1.0,
                Error::Concurrency,
            )?,
            probe_timeout_ms,
        })
    };
    let made = decode(&r).and_then(|(cfg, seed)| {
        let limits = limits()?;
        let trip = trip(&r)?;
        let cfg = cfg.max_attempts(None).max_elapsed_ms(None);
        let b = Backoff::new(cfg, seeded_rng(seed)).map_err(Error::from_config)?;
        let mut g = Gate::new(b, limits)
            .with_trip(trip)
            .fail_fast(given(&r, Field::Mode) == Some(1.0));
        if given(&r, Field::Limit) == Some(1.0) {
            g = g.with_limiter(Limiter::new(now));
        }
        Ok(slab::alloc(&GATES, g))
    });
    handle(made)
}

/// Records `ok` successes, then `failed` failures, of calls sent elsewhere
/// (a fleet's isolates report them in batches) at `now`; answers the status.
#[unsafe(no_mangle)]
pub extern "C" fn gate_record(h: usize, ok: u32, failed: u32, now: f64) {
    gate(h).record(ok, failed, now);
    status(h);
}

/// Frees the gate of `h`.
#[unsafe(no_mangle)]
pub extern "C" fn gate_free(h: usize) {
    // SAFETY: as in `gate`; JS forgets the handle first.
    unsafe { slab::free(&GATES, h) }
}

/// A new call at `now`: its tag (>= 0) to send with, a hold code, or an
/// end (`circuit-open`: failing fast).
#[unsafe(no_mangle)]
pub extern "C" fn gate_admit(h: usize, now: f64) -> f64 {
    let r = match gate(h).admit(now) {
        Admit::Send(t) => t as f64,
        Admit::Hold(x) => hold_code(x),
        Admit::Reject => end_code(End::CircuitOpen),
    };
    status(h);
    r
}

/// The outcome of the call sent with `tag` at `now` (`REACHED`, `FAILED`
/// with `hint`, a server-named wait or NaN, `CANCELLED` or `TIMED_OUT`) and
/// the gate's decision (`Gate::settle`) on its call, which wants another
/// attempt when `own` (see `own`) is not NaN: a retry after that many ms
/// (>= 0), a hold code, or an end; NaN when nothing was asked.
#[unsafe(no_mangle)]
pub extern "C" fn gate_settle(
    h: usize,
    tag: u32,
    outcome: f64,
    hint: f64,
    own_ms: f64,
    deadline: f64,
    now: f64,
) -> f64 {
    let o = if outcome == REACHED {
        Outcome::Reached
    } else if outcome == FAILED {
        Outcome::Failed(hint)
    } else if outcome == CANCELLED {
        Outcome::Cancelled
    } else {
        Outcome::TimedOut
    };
    let next = (!own_ms.is_nan()).then(|| Next {
        own: own(own_ms),
        deadline_ms: deadline,
    });
    let r = match gate(h).settle(tag, o, next, now) {
        Some(Decision::Retry(ms)) => ms,
        Some(Decision::Hold(x)) => hold_code(x),
        Some(Decision::End(e)) => end_code(e),
        None => f64::NAN,
    };
    status(h);
    r
}

/// Whether an outcome of the call sent with `tag` is news (`Gate::news`).
#[unsafe(no_mangle)]
pub extern "C" fn gate_news(h: usize, tag: u32) -> bool {
    gate(h).news(tag)
}

/// Isolates the target by hand (`on`), or ends an isolation (or a backoff).
#[unsafe(no_mangle)]
pub extern "C" fn gate_isolate(h: usize, on: bool) {
    let g = gate(h);
    if on {
        g.isolate()
    } else {
        g.release()
    }
    status(h);
}

/// Answers the state worth carrying elsewhere (`gate::SAVED_*` offsets).
#[unsafe(no_mangle)]
pub extern "C" fn gate_save(h: usize, now: f64) {
    answer(&gate(h).save(now));
}

/// Takes up the saved state in the scratch buffer at `now`: 0, or
/// `MALFORMED` or `FROM_THE_FUTURE`, then the target is closed. Answers
/// the status.
#[unsafe(no_mangle)]
pub extern "C" fn gate_restore(h: usize, now: f64) -> f64 {
    // (the buffer is longer: never None; no copy, no length check)
    let Some(saved) = scratch_mut().first_chunk::<SAVED_LEN>() else {
        return MALFORMED;
    };
    let r = match gate(h).restore(saved, now) {
        Ok(()) => 0.0,
        Err(RestoreError::Malformed) => MALFORMED,
        Err(RestoreError::Future) => FROM_THE_FUTURE,
    };
    status(h);
    r
}

/// The limiter's wait in ms for one more send at `now` by a call due by
/// `deadline` (0 without a limiter; negative: it cannot make it, no token).
#[unsafe(no_mangle)]
pub extern "C" fn gate_acquire(h: usize, now: f64, deadline: f64) -> f64 {
    gate(h).acquire(now, deadline)
}

/// Gives back the token of `gate_acquire` (the call did not go).
#[unsafe(no_mangle)]
pub extern "C" fn gate_unacquire(h: usize) {
    gate(h).unacquire();
}

/// An answer for the limiter: `throttled`, of a call that took its token at
/// `paced` and was sent at `sent` (NaN unknown). Answers the limiter's rate
/// (req/s; Infinity while not enabled).
#[unsafe(no_mangle)]
pub extern "C" fn gate_throttled(
    h: usize,
    throttled: bool,
    paced: f64,
    sent: f64,
    now: f64,
) -> f64 {
    let g = gate(h);
    g.throttled(throttled, paced, sent, now);
    g.limiter().map_or(f64::INFINITY, Limiter::rate)
}

/// Whether a held call stays held once a round begins (`Gate::keep`): its
/// own next delay `own` (see `own`; NaN: none spent) and `deadline`. A
/// hold code, or an end (then `gate_left`).
#[unsafe(no_mangle)]
pub extern "C" fn gate_keep(h: usize, own_ms: f64, deadline: f64) -> f64 {
    let spent = if own_ms.is_nan() {
        Ok(0.0)
    } else {
        own(own_ms)
    };
    gate(h).keep(spent, deadline).map_or(HELD, end_code)
}

/// A held call left: aborted, or (`timed_out`) out of time or attempts.
#[unsafe(no_mangle)]
pub extern "C" fn gate_left(h: usize, timed_out: bool) {
    gate(h).left(timed_out);
    status(h);
}

/// The tag to send the head of the held list with, or -1 for none.
#[unsafe(no_mangle)]
pub extern "C" fn gate_take(h: usize, now: f64) -> f64 {
    let r = gate(h).take(now).map_or(-1.0, |t| t as f64);
    status(h);
    r
}

/// Answers the status of the gate of `h` (see `status`), changing nothing.
#[unsafe(no_mangle)]
pub extern "C" fn gate_status(h: usize) {
    status(h);
}

static LIMITERS: Cell<Pool> = Pool::new();

/// The limiter behind a handle of [`limiter_new`].
fn limiter<'a>(h: usize) -> &'a mut Limiter {
    // SAFETY: js/gate.js passes only live handles of this pool (see slab::get).
    unsafe { slab::get(h) }
}

/// A stand-alone adaptive limiter at `now`: its handle, or minus the error code.
#[unsafe(no_mangle)]
pub extern "C" fn limiter_new(now: f64) -> f64 {
    handle(Ok(slab::alloc(&LIMITERS, Limiter::new(now))))
}

/// Frees the limiter of `h`.
#[unsafe(no_mangle)]
pub extern "C" fn limiter_free(h: usize) {
    // SAFETY: as in `limiter`; JS forgets the handle first.
    unsafe { slab::free(&LIMITERS, h) }
}

/// See `gate_acquire`.
#[unsafe(no_mangle)]
pub extern "C" fn limiter_acquire(h: usize, now: f64) -> f64 {
    limiter(h).acquire(now)
}

/// See `gate_unacquire`.
#[unsafe(no_mangle)]
pub extern "C" fn limiter_cancel(h: usize) {
    limiter(h).cancel();
}

/// See `gate_throttled`.
#[unsafe(no_mangle)]
pub extern "C" fn limiter_record(
    h: usize,
    throttled: bool,
    paced: f64,
    sent: f64,
    now: f64,
) -> f64 {
    let l = limiter(h);
    l.record(throttled, paced, sent, now);
    l.rate()
}

/// The limiter's rate (req/s; Infinity while not enabled).
#[unsafe(no_mangle)]
pub extern "C" fn limiter_rate(h: usize) -> f64 {
    limiter(h).rate()
}

/// `Limiter::record_rate` (a fleet's object: the send rate its isolates
/// report); answers the new rate.
#[unsafe(no_mangle)]
pub extern "C" fn limiter_record_rate(h: usize, throttled: bool, rate: f64, now: f64) -> f64 {
    let l = limiter(h);
    l.record_rate(throttled, rate, now);
    l.rate()
}

/// `Limiter::grow`: an isolate that was not counted joins the throttled
/// fleet; answers the new rate.
#[unsafe(no_mangle)]
pub extern "C" fn limiter_grow(h: usize, rate: f64) -> f64 {
    let l = limiter(h);
    l.grow(rate);
    l.rate()
}

/// The send rate the limiter measured (req/s, smoothed).
#[unsafe(no_mangle)]
pub extern "C" fn limiter_measured(h: usize) -> f64 {
    limiter(h).measured()
}
