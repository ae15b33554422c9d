//! The task queue's exports (js/queue/transitions.js, the queue module only): the
//! core's transitions (`wasm_backoff_core::queue`) on records that cross as
//! their numeric fields. A queue owns no wasm memory: its policy is its
//! options record, which js/queue/transitions.js writes before each call (a
//! dozen numbers, cheaper than the store I/O around every transition, and
//! nothing to free), and `maxRetentionMs`, passed to each call: a field of the
//! record would be copied by the small module's `Backoff` too, 8 B for every
//! fetch user.

use crate::calc::{count, decode, given};
use crate::io::{answer, record};
use crate::schema::{Error, Field};
use wasm_backoff_core::queue::{Queue, QueueConfig, QueueError, Task, TaskState};

/// The queue policy the options record and `retention` (maxRetentionMs) describe.
fn policy(retention: f64) -> Result<Queue, Error> {
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
        .max_retention_ms(retention)
        .backoff(backoff);
    Queue::new(cfg).map_err(|e| match e {
        QueueError::MaxFailures => Error::MaxFailures,
        QueueError::MaxRetentionMs => Error::MaxRetentionMs,
        _ => Error::LeaseMs, // (the backoff was validated above)
    })
}

/// 0 when the options record and `retention` describe a valid queue, else
/// minus the error code.
#[unsafe(no_mangle)]
pub extern "C" fn queue_check(retention: f64) -> f64 {
    policy(retention).map_or_else(|e| -(e.code() as f64), |_| 0.0)
}

/// Calls `f` with the policy, the record given as numbers and `now` (the seed as
/// the same two's complement of a safe integer as every seed; whole counts
/// from the core saturate); 0 when either is invalid.
#[allow(clippy::too_many_arguments)]
fn with(
    state: u8,
    failures: f64,
    next_attempt_at: f64,
    complete_by: f64,
    seed: f64,
    created_at: f64,
    retention: f64,
    now: f64,
    f: fn(&Queue, &Task, f64) -> u8,
) -> u8 {
    match (policy(retention), TaskState::from_u8(state)) {
        (Ok(q), Some(state)) => f(
            &q,
            &Task {
                state,
                failure_count: failures as u32,
                next_attempt_at,
                complete_by,
                seed: seed as i64 as u64,
                created_at,
            },
            now,
        ),
        _ => 0,
    }
}

/// 1 with the new record answered (`schema::TASK`), or 0 when the
/// transition is not allowed.
fn answered_task(n: Option<Task>) -> u8 {
    let Some(n) = n else {
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

/// The exports: each takes the record's numeric fields, `maxRetentionMs`
/// and the time.
macro_rules! calls {
    ($($(#[$doc:meta])* $name:ident => $f:expr;)*) => {$(
        $(#[$doc])*
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub extern "C" fn $name(state: u8, failures: f64, next: f64, complete_by: f64, seed: f64, created_at: f64, retention: f64, now: f64) -> u8 {
            with(state, failures, next, complete_by, seed, created_at, retention, now, $f)
        }
    )*};
}

calls! {
    /// What may be done with the record now: 0 wait, 1 claim, 2 sweep, 3 expire.
    queue_due => |q, t, now| q.due(t, now) as u8;
    /// pending (due) → processing.
    queue_claim => |q, t, now| answered_task(q.claim(t, now));
    /// processing → processed (within the lease).
    queue_complete => |q, t, now| answered_task(q.complete(t, now));
    /// processing → pending after the retry delay, or error at maxFailures.
    queue_fail => |q, t, now| answered_task(q.fail(t, now));
    /// processing → error at once.
    queue_fail_permanently => |q, t, _| answered_task(q.fail_permanently(t));
    /// The supervisor: processing past its lease → as a failure.
    queue_sweep => |q, t, now| answered_task(q.sweep(t, now));
    /// pending past its retention → error.
    queue_expire => |q, t, now| answered_task(q.expire(t, now));
    /// pending after a failure → due now (connectivity came back).
    queue_retry_now => |q, t, now| answered_task(q.retry_now(t, now));
}
