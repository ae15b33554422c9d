//! The retry policy of the fetch drivers, written once: what is retried
//! (methods, statuses, statuses retried when the server names a wait), the
//! defaults, why a call ends, and the two rules every attempt meets — the
//! verdict (is this attempt worth another?) and the timing (may the call
//! wait that long?).
//!
//! Every driver follows it: the web crate calls these functions; the npm
//! package gets the lists and names rendered into `js/gen/policy.js` (by
//! `xtask`) and runs the same two rules in JavaScript (a verdict per
//! attempt is no reason to cross into wasm), checked against the same
//! vectors, `core/tests/policy_vectors.json`.

/// The methods retried without `retryNonIdempotent`: those RFC 9110
/// §9.2.2 calls idempotent, and QUERY.
pub const IDEMPOTENT_METHODS: [&str; 7] =
    ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE", "QUERY"];

/// The statuses retried by default (`retryOn`): 408, 429, 500, 502, 503,
/// 504, Cloudflare's 521 (the origin refused the connection) and 522
/// (the connection to the origin timed out): neither reached the origin, so
/// they are as safe to retry as a connection failure, which is always
/// retried (got and superagent retry them too); and 529, "overloaded"
/// (Anthropic's API, which documents it as transient, and every other use
/// of the code we know means the same): a 503 by another number, retried
/// as the SDKs of that API retry it, on the throttling base
/// ([`THROTTLE_STATUSES`]). Not 524: the origin took the request and worked
/// on it for 100 s; another attempt costs it as much again (add it to
/// `retryOn` where that is wanted).
pub const DEFAULT_RETRY_ON: [u16; 9] = [408, 429, 500, 502, 503, 504, 521, 522, 529];

/// The statuses retried whenever the server names a wait (`Retry-After` or
/// a rate-limit header), whatever `retryOn` says: 413 Content Too Large,
/// 429 Too Many Requests, 503 Service Unavailable (ky's and got's rule).
pub const SERVER_WAIT_STATUSES: [u16; 3] = [413, 429, 503];

/// The statuses that are throttling rather than a transient failure: 429
/// Too Many Requests, 503 Service Unavailable and 529 (overloaded, as
/// Anthropic's API answers), with or without a server-named wait. A retry
/// of one waits on `throttleBaseMs` (the AWS SDKs' two bases); every other
/// failure (a network failure, a timeout, another status) on the
/// schedule's own base.
pub const THROTTLE_STATUSES: [u16; 3] = [429, 503, 529];

/// The throttling base by default, as a multiple of the schedule's own
/// base: 10 (1 s with the default 100 ms). Chosen with bench/waits.mjs
/// (bench/RESULTS.md, "Two bases"): against a rate-limited server that names
/// no wait, it cuts the 429s clients receive about sevenfold and the calls
/// that fail eightfold at the same goodput; where the server names a wait,
/// that wait decides and the base changes nothing measurable. The AWS SDKs
/// (2026) use 1 s for throttling, 50 ms for transient failures.
pub const DEFAULT_THROTTLE_BASE_FACTOR: f64 = 10.0;

/// The response header by which a server advises whether to retry: `true`
/// or `false`, exactly (the Stainless-generated SDKs' `x-should-retry`:
/// OpenAI, Anthropic, Cloudflare). Read on a status of 400 or more, or on
/// the headers an error carries ([`advice`]).
pub const SHOULD_RETRY_HEADER: &str = "x-should-retry";

/// What the server advises by [`SHOULD_RETRY_HEADER`]: `Some(true)` for
/// `true`, `Some(false)` for `false` (surrounding spaces and tabs ignored,
/// case sensitive, as the SDKs compare), `None` for anything else.
///
/// ```
/// use wasm_backoff_core::policy::advice;
/// assert_eq!((advice(Some(" false")), advice(Some("TRUE")), advice(None)), (Some(false), None, None));
/// ```
pub fn advice(value: Option<&str>) -> Option<bool> {
    match value.map(|v| v.trim_matches([' ', '\t'])) {
        Some("true") => Some(true),
        Some("false") => Some(false),
        _ => None,
    }
}

/// Whether a finished attempt was throttled ([`THROTTLE_STATUSES`]): its
/// retry waits on the throttling base.
///
/// ```
/// use wasm_backoff_core::policy::throttled;
/// assert!(throttled(Some(429)) && throttled(Some(529)) && !throttled(Some(500)) && !throttled(None));
/// ```
pub fn throttled(status: Option<u16>) -> bool {
    status.is_some_and(|s| THROTTLE_STATUSES.contains(&s))
}

/// What makes a request retryable, and whether the driver adds a key: one
/// rule for every driver (the fetch driver, undici's dispatcher, the
/// outbox). `listed`: its method is one of `methods`; `keyed`: it carries
/// an `Idempotency-Key` of its own; `option`: `idempotencyKey: true`;
/// `any`: `retryNonIdempotent`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// Its method is one of `methods`.
    pub listed: bool,
    /// It carries an `Idempotency-Key` of its own.
    pub keyed: bool,
    /// `idempotencyKey: true`: a key is generated where one makes it retryable.
    pub option: bool,
    /// `retryNonIdempotent: true`.
    pub any: bool,
}

/// Whether the driver generates an `Idempotency-Key` (one per call, the
/// same on every attempt): only with `idempotencyKey: true`, for a request
/// whose method is not retried by itself and that carries no key of its
/// own (a GET needs none; the caller's key is kept).
///
/// ```
/// use wasm_backoff_core::policy::{wants_key, Request};
/// let post = Request { option: true, ..Request::default() };
/// assert!(wants_key(post));
/// assert!(!wants_key(Request { listed: true, ..post }) && !wants_key(Request { keyed: true, ..post }));
/// ```
pub const fn wants_key(r: Request) -> bool {
    r.option && !r.listed && !r.keyed
}

/// Whether a request may be sent again: its method is listed, it carries a
/// key (its own, or the one [`wants_key`] generates), or
/// `retryNonIdempotent`.
///
/// ```
/// use wasm_backoff_core::policy::{idempotent, Request};
/// assert!(!idempotent(Request::default()));
/// assert!(idempotent(Request { option: true, ..Request::default() }));
/// ```
pub const fn idempotent(r: Request) -> bool {
    r.listed || r.keyed || r.any || wants_key(r)
}

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
    /// The caller's `shouldRetry` said no, or its `delay` hook gave up.
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
    /// The server's advice ([`advice`] of [`SHOULD_RETRY_HEADER`]) on a
    /// failure: `Some(true)` makes it retryable, `Some(false)` not.
    pub advice: Option<bool>,
}

/// Whether an attempt is tried again: `None` when it is, else why the call
/// ends. In this order: what failed (a network failure or own timeout, a
/// status of `retryOn`, or 413/429/503 with a server-named wait), the
/// server's advice on a failure (`x-should-retry`: `true` makes any failure
/// retryable, `false` none), the method, the caller's `shouldRetry` (true forces a retry, even of a POST;
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
    if why != Some(End::Success) {
        match f.advice {
            Some(true) => why = None,
            Some(false) => why = Some(End::NotRetryable),
            None => {}
        }
    }
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

/// What a `delay(info)` hook answered about a wanted retry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Choice {
    /// Wait what the schedule proposes (the hook returned nothing).
    Keep,
    /// Wait this many ms instead (>= 0; the deadline still applies).
    Wait(f64),
    /// Do not retry: the call ends with this attempt's outcome ([`End::Vetoed`]).
    GiveUp,
}

/// The server's wait as a retry honours it: `hint_ms`, or `max_ms` when it
/// is over that and `clamp` is set (`retryAfterOverMax: 'clamp'`, what ky
/// and undici do). Unclamped, a wait over `max_ms` stays as it is, and
/// [`timing`] ends the call (`'retry-after'`).
///
/// ```
/// use wasm_backoff_core::policy::honoured;
/// assert_eq!(honoured(Some(90_000.0), 60_000.0, true), Some(60_000.0));
/// assert_eq!(honoured(Some(90_000.0), 60_000.0, false), Some(90_000.0));
/// ```
pub fn honoured(hint_ms: Option<f64>, max_ms: f64, clamp: bool) -> Option<f64> {
    hint_ms.map(|h| if clamp && h > max_ms { max_ms } else { h })
}

/// The wait of a wanted retry after the `delay` hook: `proposal` is the
/// schedule's (lifted to the server's wait; `None` when it is exhausted,
/// and then the hook is not asked). `Ok(None)`: exhausted; `Err`: the hook
/// gave up ([`End::Vetoed`]) or answered a wait that is no number >= 0
/// ([`End::HookError`]). The [`timing`] rule then applies to the wait chosen.
///
/// ```
/// use wasm_backoff_core::policy::{choose, Choice, End};
/// assert_eq!(choose(Some(120.0), Choice::Keep), Ok(Some(120.0)));
/// assert_eq!(choose(Some(120.0), Choice::Wait(5.0)), Ok(Some(5.0)));
/// assert_eq!(choose(Some(120.0), Choice::GiveUp), Err(End::Vetoed));
/// assert_eq!(choose(None, Choice::Wait(5.0)), Ok(None));
/// ```
pub fn choose(proposal: Option<f64>, choice: Choice) -> Result<Option<f64>, End> {
    let Some(p) = proposal else { return Ok(None) };
    match choice {
        Choice::Keep => Ok(Some(p)),
        Choice::Wait(ms) if ms >= 0.0 => Ok(Some(ms)),
        Choice::Wait(_) => Err(End::HookError),
        Choice::GiveUp => Err(End::Vetoed),
    }
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
/// the wait would end at or past `maxElapsedMs`, in that order ([`wait`]
/// with no hook).
///
/// ```
/// use wasm_backoff_core::policy::{timing, End, Wait};
/// let w = Wait { delay_ms: Some(100.0), hint_ms: None, max_retry_after_ms: 60_000.0, elapsed_ms: 0.0, max_elapsed_ms: 50.0 };
/// assert_eq!(timing(&w), Some(End::Deadline));
/// ```
pub fn timing(w: &Wait) -> Option<End> {
    wait(w, |_| Choice::Keep).err()
}

/// The wait of a wanted retry, or why there is none — the delay rules, in
/// this order: the schedule is exhausted; the server's wait (`hint_ms`, as
/// [`honoured`]) is over `maxRetryAfterMs`; then the `delay` hook is asked
/// (`choice`, given the schedule's proposal: [`choose`]) and may give up;
/// last, the wait chosen would end at or past `maxElapsedMs` (the next
/// attempt would have no time left before the deadline). The hook is asked
/// only when its answer can matter.
///
/// ```
/// use wasm_backoff_core::policy::{wait, Choice, End, Wait};
/// let w = Wait { delay_ms: Some(400.0), hint_ms: None, max_retry_after_ms: 60_000.0, elapsed_ms: 0.0, max_elapsed_ms: 150.0 };
/// assert_eq!(wait(&w, |_| Choice::Keep), Err(End::Deadline));
/// assert_eq!(wait(&w, |proposal| Choice::Wait(proposal / 40.0)), Ok(10.0));
/// assert_eq!(wait(&w, |_| Choice::GiveUp), Err(End::Vetoed));
/// ```
pub fn wait(w: &Wait, choice: impl FnOnce(f64) -> Choice) -> Result<f64, End> {
    let Some(proposal) = w.delay_ms else {
        return Err(End::Exhausted);
    };
    if w.hint_ms.is_some_and(|h| h > w.max_retry_after_ms) {
        return Err(End::RetryAfter);
    }
    let delay = choose(Some(proposal), choice(proposal))?.unwrap_or(proposal);
    // (a wait that ends at the deadline leaves the next attempt no time:
    // the deadline's abort would meet it at once)
    if w.elapsed_ms + delay >= w.max_elapsed_ms {
        Err(End::Deadline)
    } else {
        Ok(delay)
    }
}
