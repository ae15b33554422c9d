//! The retry policy of the fetch drivers, written once: what is retried
//! (methods, statuses, statuses retried when the server names a wait), the
//! defaults, why a call ends, and the two rules every attempt meets — the
//! verdict (is this attempt worth another?) and the timing (may the call
//! wait that long?).
//!
//! Both drivers follow it: the web crate calls these functions; the npm
//! package gets the lists and names rendered into `js/gen/policy.js` (by
//! `xtask`) and runs the same two rules in JavaScript (a verdict per
//! attempt is no reason to cross into wasm), checked against the same
//! vectors, `core/tests/policy_vectors.json`.

/// The methods retried without `retryNonIdempotent`: those RFC 9110
/// §9.2.2 calls idempotent, and QUERY.
pub const IDEMPOTENT_METHODS: [&str; 7] =
    ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE", "QUERY"];

/// The statuses retried by default (`retryOn`): 408, 429, 500, 502, 503, 504.
pub const DEFAULT_RETRY_ON: [u16; 6] = [408, 429, 500, 502, 503, 504];

/// The statuses retried whenever the server names a wait (`Retry-After` or
/// a rate-limit header), whatever `retryOn` says: 413 Content Too Large,
/// 429 Too Many Requests, 503 Service Unavailable (ky's and got's rule).
pub const SERVER_WAIT_STATUSES: [u16; 3] = [413, 429, 503];

/// Tries in all (the first included) unless the options or a preset say otherwise.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;

/// The longest server-named wait waited for, in ms (`maxRetryAfterMs`): one
/// minute. A longer one ends the call with that response, at once.
pub const DEFAULT_MAX_RETRY_AFTER_MS: f64 = 60_000.0;

/// Why a call ends. The order is the wire order (`js/gen/policy.js`
/// `END_REASONS`); [`End::name`] is what `onDone` is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum End {
    /// An answer that is no failure (status < 400, not in `retryOn`).
    Success,
    /// A failure that is not retried: a status outside `retryOn`, an error that is no network failure.
    NotRetryable,
    /// A retryable failure of a request that may not be sent twice (POST without a key).
    NotIdempotent,
    /// The caller's `shouldRetry` said no.
    Vetoed,
    /// The request's body cannot be sent again (a stream).
    NotReplayable,
    /// The schedule ran out (`maxAttempts`).
    Exhausted,
    /// The server named a wait over `maxRetryAfterMs`: its answer is returned at once.
    RetryAfter,
    /// `maxElapsedMs`: the next wait would end past it, or it passed.
    Deadline,
    /// The retry budget had no retry left.
    Budget,
    /// The caller's signal aborted.
    Aborted,
    /// A decision hook threw.
    HookError,
    /// With a gate: dropped from the target's full queue.
    Evicted,
    /// With a gate: the gate was freed.
    Freed,
    /// With a gate in fail-fast mode: the circuit is open.
    CircuitOpen,
}

impl End {
    /// Every reason, in wire order.
    pub const ALL: [End; 14] = [
        End::Success,
        End::NotRetryable,
        End::NotIdempotent,
        End::Vetoed,
        End::NotReplayable,
        End::Exhausted,
        End::RetryAfter,
        End::Deadline,
        End::Budget,
        End::Aborted,
        End::HookError,
        End::Evicted,
        End::Freed,
        End::CircuitOpen,
    ];

    /// The name `onDone` is told (`'not-retryable'`, …).
    ///
    /// ```
    /// use wasm_backoff_core::policy::End;
    /// assert_eq!(End::RetryAfter.name(), "retry-after");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            End::Success => "success",
            End::NotRetryable => "not-retryable",
            End::NotIdempotent => "not-idempotent",
            End::Vetoed => "vetoed",
            End::NotReplayable => "not-replayable",
            End::Exhausted => "exhausted",
            End::RetryAfter => "retry-after",
            End::Deadline => "deadline",
            End::Budget => "budget",
            End::Aborted => "aborted",
            End::HookError => "hook-error",
            End::Evicted => "evicted",
            End::Freed => "freed",
            End::CircuitOpen => "circuit-open",
        }
    }
}

/// What one finished attempt was, for [`verdict`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Facts {
    /// It threw rather than answered.
    pub failed: bool,
    /// Its failure is worth a retry: a network failure or its own timeout.
    pub network: bool,
    /// Its answer's status.
    pub status: Option<u16>,
    /// The server named a wait (ms).
    pub hint_ms: Option<f64>,
    /// The status is one of the call's `retryOn`.
    pub in_retry_on: bool,
    /// The request may be sent twice (an idempotent method, a key, or `retryNonIdempotent`).
    pub idempotent: bool,
    /// Its body can be sent again.
    pub replayable: bool,
    /// The caller's `shouldRetry` answer: `Some(true)` forces a retry, `Some(false)` vetoes one.
    pub wants: Option<bool>,
}

/// Whether an attempt is tried again: `None` when it is, else why the call
/// ends. In this order: what failed (a network failure or own timeout, a
/// status of `retryOn`, or 413/429/503 with a server-named wait), the
/// method, the caller's `shouldRetry` (true forces a retry, even of a POST;
/// false vetoes one; a success stays one), and last the body.
///
/// ```
/// use wasm_backoff_core::policy::{verdict, End, Facts};
/// let f = Facts { status: Some(503), in_retry_on: true, idempotent: true, replayable: true, ..Facts::default() };
/// assert_eq!(verdict(&f), None);
/// assert_eq!(verdict(&Facts { idempotent: false, ..f }), Some(End::NotIdempotent));
/// ```
pub fn verdict(f: &Facts) -> Option<End> {
    let s = f.status.unwrap_or(0);
    let mut why = if f.failed {
        (!f.network).then_some(End::NotRetryable)
    } else if f.in_retry_on || (f.hint_ms.is_some() && SERVER_WAIT_STATUSES.contains(&s)) {
        None
    } else if s >= 400 {
        Some(End::NotRetryable)
    } else {
        Some(End::Success)
    };
    if why.is_none() && !f.idempotent {
        why = Some(End::NotIdempotent);
    }
    match f.wants {
        Some(true) => why = None,
        Some(false) if why != Some(End::Success) => why = Some(End::Vetoed),
        _ => {}
    }
    why.or((!f.replayable).then_some(End::NotReplayable))
}

/// What a wanted retry would wait, for [`timing`].
#[derive(Clone, Copy, Debug)]
pub struct Wait {
    /// The schedule's delay (ms), `None` when it is exhausted.
    pub delay_ms: Option<f64>,
    /// The server-named wait (ms).
    pub hint_ms: Option<f64>,
    /// `maxRetryAfterMs`.
    pub max_retry_after_ms: f64,
    /// Time since the call started (ms).
    pub elapsed_ms: f64,
    /// `maxElapsedMs` (infinite: none).
    pub max_elapsed_ms: f64,
}

/// Whether a wanted retry may wait: `None` when it may, else why not — the
/// schedule is exhausted, the server's wait is over `maxRetryAfterMs`, or
/// the wait would end past `maxElapsedMs`, in that order.
///
/// ```
/// use wasm_backoff_core::policy::{timing, End, Wait};
/// let w = Wait { delay_ms: Some(100.0), hint_ms: None, max_retry_after_ms: 60_000.0, elapsed_ms: 0.0, max_elapsed_ms: 50.0 };
/// assert_eq!(timing(&w), Some(End::Deadline));
/// ```
pub fn timing(w: &Wait) -> Option<End> {
    let Some(delay) = w.delay_ms else {
        return Some(End::Exhausted);
    };
    if w.hint_ms.is_some_and(|h| h > w.max_retry_after_ms) {
        Some(End::RetryAfter)
    } else if w.elapsed_ms + delay > w.max_elapsed_ms {
        Some(End::Deadline)
    } else {
        None
    }
}
