//! `RawQueue`: the task queue's transitions behind `TaskQueue` in
//! `js/queue.js` (the `wasm-backoff/queue` module only).
//!
//! Same plain-number boundary as `raw.rs`: a record crosses as its numeric
//! fields (state as `TaskState`'s discriminant, the seed as a safe integer),
//! and the new record comes back through a small static buffer rather than a
//! returned struct, so the glue stays a few calls with f64 arguments.

use crate::raw::RawBackoff;
use wasm_backoff_core::queue::{Queue, QueueConfig, QueueError, Task, TaskState};
use wasm_bindgen::prelude::*;

/// The record a transition produced: [state, failure_count, next_attempt_at,
/// complete_by] (in .bss: no bytes in the module).
struct Out(core::cell::UnsafeCell<[f64; 4]>);
// SAFETY: the module is single-threaded (wasm32 without atomics).
unsafe impl Sync for Out {}
static OUT: Out = Out(core::cell::UnsafeCell::new([0.0; 4]));

/// Where `RawQueue::step` writes the new record; the JS side reads it right
/// after each call.
#[wasm_bindgen]
pub fn queue_out() -> *const f64 {
    OUT.0.get() as *const f64
}

/// The queue's policy; `error` is non-zero when the options were rejected.
#[wasm_bindgen]
pub struct RawQueue {
    /// `None` exactly when `error != 0`; `step` then refuses everything.
    inner: Option<Queue>,
    error: u8,
}

#[wasm_bindgen]
impl RawQueue {
    /// The retry schedule of `backoff` (already validated; its seed is not
    /// used: each task carries its own), a lease of `lease_ms` and
    /// `max_failures` (a whole number >= 1, or +Infinity for never).
    #[wasm_bindgen(constructor)]
    pub fn new(backoff: &RawBackoff, lease_ms: f64, max_failures: f64) -> RawQueue {
        let max_failures = if max_failures == f64::INFINITY {
            Some(u32::MAX)
        } else if max_failures >= 1.0
            && max_failures <= u32::MAX as f64
            && (max_failures as u32) as f64 == max_failures
        {
            Some(max_failures as u32)
        } else {
            None
        };
        let made = match (backoff.config(), max_failures) {
            (_, None) => Err(QueueError::MaxFailures.code()),
            (None, _) => Err(backoff.error()),
            (Some(cfg), Some(n)) => Queue::new(
                QueueConfig::new()
                    .lease_ms(lease_ms)
                    .max_failures(n)
                    .backoff(*cfg),
            )
            .map_err(QueueError::code),
        };
        match made {
            Ok(q) => RawQueue {
                inner: Some(q),
                error: 0,
            },
            Err(error) => RawQueue { inner: None, error },
        }
    }

    /// 0, or the code of the rejected option (`QueueError::code`).
    #[wasm_bindgen(getter)]
    pub fn error(&self) -> u8 {
        self.error
    }

    /// One decision about the record given by its numeric fields, at `now`.
    /// `op` 0 asks `Queue::due` and returns its code (0 wait, 1 claim,
    /// 2 sweep); 1 claim, 2 complete, 3 fail, 4 fail permanently, 5 sweep
    /// return 1 with the new record written to `queue_out()`, or 0 when the
    /// transition is not allowed from that state.
    #[allow(clippy::too_many_arguments)]
    pub fn step(
        &self,
        op: u8,
        state: u8,
        failure_count: f64,
        next_attempt_at: f64,
        complete_by: f64,
        seed: f64,
        now: f64,
    ) -> u8 {
        let (Some(q), Some(state)) = (self.inner.as_ref(), TaskState::from_u8(state)) else {
            return 0;
        };
        let task = Task {
            state,
            // Saturating casts: the JS side stores whole numbers it got from here.
            failure_count: failure_count as u32,
            next_attempt_at,
            complete_by,
            seed: seed as u64,
        };
        let next = match op {
            0 => return q.due(&task, now) as u8,
            1 => q.claim(&task, now),
            2 => q.complete(&task, now),
            3 => q.fail(&task, now),
            4 => q.fail_permanently(&task),
            5 => q.sweep(&task, now),
            _ => None,
        };
        let Some(t) = next else {
            return 0;
        };
        // SAFETY: single-threaded; only this function writes OUT and the
        // caller reads it before calling in again.
        let out = unsafe { &mut *OUT.0.get() };
        *out = [
            t.state as u8 as f64,
            t.failure_count as f64,
            t.next_attempt_at,
            t.complete_by,
        ];
        1
    }
}
