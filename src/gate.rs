//! The per-target gate's exports (js/gate.js, full module only). The state
//! machine is `wasm_backoff_core::gate`; JavaScript holds the promises of
//! the held calls, their timers and one wake-up timer per target.
//!
//! Every operation answers the target's whole status in the result record
//! (`schema::GATE_STATUS`), so the JS side never asks a second question:
//! a healthy call through the gate is two calls into wasm (admit, then
//! succeeded), and nothing is counted on both sides.

use crate::calc::{count, decode, given, handle};
use crate::io::{answer, record, Cell};
use crate::schema::{Error, Field, EVICT_HEAD, EVICT_TAIL, HELD, WAKE_IDLE, WAKE_NONE};
use crate::slab::{self, Pool};
use wasm_backoff_core::gate::{Admit, Gate, Hold, Limits, Overflow};
use wasm_backoff_core::{seeded_rng, Backoff, DefaultRng};
use wasm_bindgen::prelude::*;

static GATES: Cell<Pool> = Pool::new();

/// The gate behind a handle of [`gate_new`].
fn gate<'a>(h: usize) -> &'a mut Gate<DefaultRng> {
    // SAFETY: js/gate.js passes only live handles of this pool (see slab::get).
    unsafe { slab::get(h) }
}

/// Writes the status of the gate of `h` to the result record: phase, held,
/// in flight, rounds, wake time (-1 none, -2 idle: the gate may be
/// dropped), probes, evictions, timeouts.
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

/// A gate from the options record (the schedule's fields and the gate's):
/// its handle, or minus the error code. The rounds' schedule has no limits
/// of its own: a target is never given up on (its callers are, by theirs).
#[wasm_bindgen]
pub fn gate_new() -> f64 {
    let r = record();
    let limits = || -> Result<Limits, Error> {
        let or = |f, d| given(&r, f).unwrap_or(d);
        let probe_timeout_ms = or(Field::ProbeTimeoutMs, 30_000.0);
        if probe_timeout_ms.is_nan() || probe_timeout_ms <= 0.0 {
            return Err(Error::ProbeTimeoutMs);
        }
        Ok(Limits {
            max_queued: count(or(Field::MaxQueued, 1000.0), 0.0, Error::MaxQueued)?,
            overflow: if or(Field::Overflow, 0.0) == 1.0 {
                Overflow::RejectNewest
            } else {
                Overflow::EvictOldest
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
        let cfg = cfg.max_attempts(None).max_elapsed_ms(None);
        let b = Backoff::new(cfg, seeded_rng(seed)).map_err(Error::from_config)?;
        Ok(slab::alloc(&GATES, Gate::new(b, limits)))
    });
    handle(made)
}

/// Frees the gate of `h`.
#[wasm_bindgen]
pub fn gate_free(h: usize) {
    // SAFETY: as in `gate`; JS forgets the handle first.
    unsafe { slab::free(&GATES, h) }
}

/// A new call at `now`: its tag (>= 0) to send with, or a hold code.
#[wasm_bindgen]
pub fn gate_admit(h: usize, now: f64) -> f64 {
    let r = match gate(h).admit(now) {
        Admit::Send(t) => t as f64,
        Admit::Hold(x) => hold_code(x),
    };
    status(h);
    r
}

/// The call sent with `tag` failed (the target is down); `hint` is a
/// server-named wait or -1.
#[wasm_bindgen]
pub fn gate_failed(h: usize, tag: u32, hint: f64, now: f64) {
    gate(h).failed(tag, hint, now);
    status(h);
}

/// The call sent with `tag` reached the target.
#[wasm_bindgen]
pub fn gate_succeeded(h: usize, tag: u32) {
    gate(h).succeeded(tag);
    status(h);
}

/// The call sent with `tag` ended without an outcome (aborted).
#[wasm_bindgen]
pub fn gate_cancelled(h: usize, tag: u32) {
    gate(h).cancelled(tag);
    status(h);
}

/// One more call is held (a failed one waiting for the target): a hold code.
#[wasm_bindgen]
pub fn gate_hold(h: usize) -> f64 {
    let r = hold_code(gate(h).hold());
    status(h);
    r
}

/// A held call left: aborted, or (`timed_out`) out of time or attempts.
#[wasm_bindgen]
pub fn gate_left(h: usize, timed_out: bool) {
    gate(h).left(timed_out);
    status(h);
}

/// The tag to send the head of the held list with, or -1 for none.
#[wasm_bindgen]
pub fn gate_take(h: usize, now: f64) -> f64 {
    let r = gate(h).take(now).map_or(-1.0, |t| t as f64);
    status(h);
    r
}

/// Answers the status of the gate of `h` (see `status`), changing nothing.
#[wasm_bindgen]
pub fn gate_status(h: usize) {
    status(h);
}

/// Whether a call whose deadline is `deadline` can still wait for the target.
#[wasm_bindgen]
pub fn gate_can_wait(h: usize, deadline: f64) -> bool {
    gate(h).can_wait(deadline)
}
