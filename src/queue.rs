//! The task queue's exports (js/queue.js, full module only): the core's
//! transitions (`wasm_backoff_core::queue`) on records that cross as their
//! numeric fields. A queue owns no wasm memory: its policy is its options
//! record, which js/queue.js writes before each call (a dozen numbers,
//! cheaper than the store I/O around every transition, and nothing to free).

use crate::calc::{count, decode, given};
use crate::io::{answer, record};
use crate::schema::{Error, Field};
use wasm_backoff_core::queue::{Queue, QueueConfig, QueueError, Task, TaskState};
use wasm_bindgen::prelude::*;

/// The queue policy the options record describes.
fn policy() -> Result<Queue, Error> {
    let r = record();
    let (backoff, _) = decode(&r)?;
    let lease_ms = given(&r, Field::LeaseMs).unwrap_or(30_000.0);
    let max_failures = count(
        given(&r, Field::MaxFailures).unwrap_or(5.0),
        1.0,
        Error::MaxFailures,
    )?;
    let cfg = QueueConfig::new()
        .lease_ms(lease_ms)
        .max_failures(max_failures)
        .backoff(backoff);
    Queue::new(cfg).map_err(|e| match e {
        QueueError::MaxFailures => Error::MaxFailures,
        _ => Error::LeaseMs, // (the backoff was validated above)
    })
}

/// 0 when the options record describes a valid queue, else minus the error code.
#[wasm_bindgen]
pub fn queue_check() -> f64 {
    policy().map_or_else(|e| -(e.code() as f64), |_| 0.0)
}

/// A record from its numeric fields (the seed as the same two's complement
/// of a safe integer as every seed; whole counts from the core saturate).
fn task(
    state: u8,
    failures: f64,
    next_attempt_at: f64,
    complete_by: f64,
    seed: f64,
) -> Option<Task> {
    Some(Task {
        state: TaskState::from_u8(state)?,
        failure_count: failures as u32,
        next_attempt_at,
        complete_by,
        seed: seed as i64 as u64,
    })
}

/// What may be done with the record now: 0 wait, 1 claim, 2 sweep.
#[wasm_bindgen]
pub fn queue_due(state: u8, failures: f64, next: f64, complete_by: f64, seed: f64, now: f64) -> u8 {
    match (policy(), task(state, failures, next, complete_by, seed)) {
        (Ok(q), Some(t)) => q.due(&t, now) as u8,
        _ => 0,
    }
}

/// Applies `step` to the record; 1 with the new record answered
/// (`schema::TASK`), or 0 when the transition is not allowed.
fn apply(
    step: fn(&Queue, &Task, f64) -> Option<Task>,
    state: u8,
    failures: f64,
    next: f64,
    complete_by: f64,
    seed: f64,
    now: f64,
) -> u8 {
    let (Ok(q), Some(t)) = (policy(), task(state, failures, next, complete_by, seed)) else {
        return 0;
    };
    let Some(n) = step(&q, &t, now) else {
        return 0;
    };
    answer(&[
        n.state as u8 as f64,
        n.failure_count as f64,
        n.next_attempt_at,
        n.complete_by,
    ]);
    1
}

/// The exported transitions: each takes the record's numeric fields and the
/// time, and answers as [`apply`] does.
macro_rules! transitions {
    ($($(#[$doc:meta])* $name:ident => $step:expr;)*) => {$(
        $(#[$doc])*
        #[wasm_bindgen]
        pub fn $name(state: u8, failures: f64, next: f64, complete_by: f64, seed: f64, now: f64) -> u8 {
            apply($step, state, failures, next, complete_by, seed, now)
        }
    )*};
}

transitions! {
    /// pending (due) → processing.
    queue_claim => Queue::claim;
    /// processing → processed (within the lease).
    queue_complete => Queue::complete;
    /// processing → pending after the retry delay, or error at maxFailures.
    queue_fail => Queue::fail;
    /// processing → error at once.
    queue_fail_permanently => |q, t, _| q.fail_permanently(t);
    /// The supervisor: processing past its lease → as a failure.
    queue_sweep => Queue::sweep;
}
