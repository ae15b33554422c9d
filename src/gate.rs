//! `RawGate`: the per-target backoff gate behind `createGate` in js/gate.js.
//! The decisions (phases, which request probes, when to release, eviction)
//! are `wasm_backoff_core::gate`; JavaScript holds the promises, the timers
//! and the held list, and does what the answers say. Plain numbers only:
//! one `op` entry point instead of a method per event, because each exported
//! method costs every user its shim and glue.

use crate::RawBackoff;
use wasm_backoff_core::gate::{Admit, Gate, Hold, Limits, Overflow};
use wasm_backoff_core::DefaultRng;
use wasm_bindgen::prelude::*;

/// One target's gate.
#[wasm_bindgen]
pub struct RawGate {
    /// `None` only if handed a rejected schedule (js/gate.js never does).
    inner: Option<Gate<DefaultRng>>,
}

/// A count option as u32: `as` saturates, so anything past u32::MAX
/// (Infinity included) is "no limit" (js/gate.js has validated them).
fn count(x: f64) -> u32 {
    x as u32
}

/// Answers to holding, as numbers: -1 held, -2 evict the head, -3 the tail
/// (the declaration order of `Hold`).
fn hold_code(h: Hold) -> f64 {
    -1.0 - h as u8 as f64
}

#[wasm_bindgen]
impl RawGate {
    /// Takes the schedule out of `schedule`, which times the rounds (give
    /// it no limits); the caller frees the emptied object. Borrowed, not
    /// moved: a Rust object passed by value costs wasm-bindgen's ownership
    /// glue, and a copy of the schedule costs code.
    #[wasm_bindgen(constructor)]
    pub fn new(
        schedule: &mut RawBackoff,
        max_queued: f64,
        reject_newest: bool,
        concurrency: f64,
        probe_timeout_ms: f64,
    ) -> RawGate {
        let limits = Limits {
            max_queued: count(max_queued),
            overflow: if reject_newest {
                Overflow::RejectNewest
            } else {
                Overflow::EvictOldest
            },
            concurrency: count(concurrency),
            probe_timeout_ms,
        };
        RawGate {
            inner: schedule.take_inner().map(|b| Gate::new(b, limits)),
        }
    }

    /// One event or question (`a` = a tag or a deadline, `b` = a hint):
    /// 0 admit → tag to send with, or a hold code (-1 held, -2 evict head,
    /// -3 evict tail); 1 failed(tag a, Retry-After b or -1) → 1 if a round
    /// started; 2 succeeded(a); 3 cancelled(a); 4 hold → a hold code;
    /// 5 left; 6 take → tag for the head, or -1; 7 wake time, or -1 (-2
    /// when idle: the caller may drop the gate); 8 can wait until deadline
    /// a → 1/0; 9 phase (healthy, waiting, open, probing); 10 held;
    /// 11 in flight; 12 rounds. (Probes and evictions are counted by the
    /// caller, which sees both.)
    pub fn op(&mut self, op: u32, a: f64, b: f64, now_ms: f64) -> f64 {
        let Some(g) = self.inner.as_mut() else {
            return -1.0;
        };
        let tag = a as u32;
        match op {
            0 => match g.admit(now_ms) {
                Admit::Send(t) => t as f64,
                Admit::Hold(h) => hold_code(h),
            },
            1 => g.failed(tag, b, now_ms) as u8 as f64,
            2 => {
                g.succeeded(tag);
                0.0
            }
            3 => {
                g.cancelled(tag);
                0.0
            }
            4 => hold_code(g.hold()),
            5 => {
                g.left();
                0.0
            }
            6 => g.take(now_ms).map_or(-1.0, |t| t as f64),
            7 if g.idle() => -2.0,
            7 => g.wake_at().unwrap_or(-1.0),
            8 => g.can_wait(a) as u8 as f64,
            9 => g.phase() as u8 as f64, // in declaration order
            10 => g.held() as f64,
            11 => g.in_flight() as f64,
            12 => g.rounds() as f64,
            _ => -1.0,
        }
    }
}
