//! The per-target backoff gate: backs off for a target as a whole instead of
//! per request (the actor-supervisor idea: a parent holds the messages for a failing child
//! and re-sends them after a backoff).
//!
//! One [`Gate`] supervises one target (an origin, a queue, a database). It
//! keeps only counters and the phase; the held requests themselves (promises,
//! their order) live with the caller, who keeps them in arrival order and
//! does what the gate's answers say: send now, hold, evict the head or the
//! tail of the held list, send the head as the probe. Time is passed in.
//!
//! Why tags: every request sent through the gate carries a [`Tag`] naming the
//! backoff round it was sent in, and whether it is that round's probe. A
//! failure starts (or lengthens) the backoff only when it is news: a request
//! sent in the current healthy period, or the current probe. The other
//! requests that were in flight when the target went down fail too, but
//! their failures are stale; they are held without touching the schedule, so
//! thirty concurrent failures make one backoff round and one probe, not
//! thirty.
//!
//! The gate also decides each call's fate after its attempt
//! ([`Gate::settle`]: the outcome in; retry after the call's own backoff,
//! hold, or end with a reason out), which held calls stay when a round
//! begins ([`Gate::keep`]), and whether an outcome is news ([`Gate::news`]):
//! the caller keeps promises and timers, and counts and decides nothing.

use crate::backoff::Backoff;
use crate::breaker::{BUCKETS, Counter, Trip};
use crate::limiter::Limiter;
use crate::math::MAX_DELAY_MS;
use crate::policy::{DEFAULT_MAX_RETRY_AFTER_MS, End};
use crate::rng::Rng;

/// Identifies a sent request to the gate: the round it was sent in (31 bits,
/// wrapping) and whether it is the probe. Opaque to the caller, which hands
/// it back with the outcome.
///
/// ```
/// use wasm_backoff_core::gate::*;
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
/// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
/// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
/// let mut g = Gate::new(rounds, limits);
/// let Admit::Send(tag) = g.admit(0.0) else { unreachable!() };
/// assert_eq!(tag & 1, 0, "not a probe");
/// ```
pub type Tag = u32;

/// What to do when a request must be held and `max_queued` are already held.
///
/// ```
/// use wasm_backoff_core::gate::*;
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
/// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
/// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
/// let mut g = Gate::new(rounds, limits);
/// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
/// g.failed(t, -1.0, 0.0); // a 100 ms round starts
/// for _ in 0..2 { g.admit(1.0); }
/// assert_eq!(g.admit(2.0), Admit::Hold(Hold::EvictHead)); // full: the oldest goes
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Drop the oldest held request (it has waited longest; the newest is
    /// the most likely to still matter to its caller).
    EvictOldest,
    /// Refuse the newest held request.
    RejectNewest,
}

/// The answer to holding one more request. (The wasm layer answers with
/// -1 - the declaration order: keep it.)
///
/// ```
/// use wasm_backoff_core::gate::*;
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
/// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
/// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
/// let mut g = Gate::new(rounds, limits);
/// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
/// g.failed(t, -1.0, 0.0); // a 100 ms round starts
/// assert_eq!(g.hold(), Hold::Held);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// It joined the held list.
    Held,
    /// It joined the held list and the oldest held one (the head, possibly
    /// this one) must be evicted.
    EvictHead,
    /// It joined the held list and the newest held one (the tail, possibly
    /// this one) must be refused.
    EvictTail,
}

/// The answer to a new request.
///
/// ```
/// use wasm_backoff_core::gate::*;
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
/// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
/// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
/// let mut g = Gate::new(rounds, limits);
/// assert!(matches!(g.admit(0.0), Admit::Send(_)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Send it now, with this tag.
    Send(Tag),
    /// Hold it (at the tail of the held list).
    Hold(Hold),
    /// Refuse it now: the circuit is open and the gate fails fast
    /// ([`Gate::fail_fast`]).
    Reject,
}

/// What a sent request met, for [`Gate::settle`].
///
/// ```
/// use wasm_backoff_core::gate::*;
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
/// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
/// let mut g = Gate::new(rounds, Limits::default());
/// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
/// g.settle(t, Outcome::Failed(500.0), None, 0.0); // a round of at least 500 ms (a Retry-After)
/// assert!(g.until() >= Some(500.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// It reached the target: whatever it answered, no failure of the target.
    Reached,
    /// It failed in a way that says the target is down, naming a wait (ms;
    /// negative or NaN: none) that a round it starts waits at least.
    Failed(f64),
    /// It ended without an outcome (its caller aborted it): it says nothing.
    Cancelled,
    /// Its caller's deadline cut it in flight ([`Gate::timed_out`]).
    TimedOut,
}

/// What a call that wants another attempt can afford, for [`Gate::settle`].
///
/// ```
/// use wasm_backoff_core::gate::Next;
/// use wasm_backoff_core::policy::End;
/// let spent = Next { own: Err(End::Exhausted), deadline_ms: f64::INFINITY };
/// assert!(spent.own.is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Next {
    /// Its own next delay (ms, from its own schedule: a failure below the
    /// threshold waits that, not a round), or why it has none
    /// ([`End::Exhausted`]; [`End::Vetoed`]: its `delay` hook gave up).
    pub own: Result<f64, End>,
    /// When it must be over (epoch ms; infinite: never).
    pub deadline_ms: f64,
}

/// The gate's decision on a call after its outcome ([`Gate::settle`]).
///
/// ```
/// use wasm_backoff_core::gate::*;
/// use wasm_backoff_core::policy::End;
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
/// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
/// let mut g = Gate::new(rounds, Limits::default()).fail_fast(true);
/// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
/// let next = Next { own: Ok(10.0), deadline_ms: f64::INFINITY };
/// assert_eq!(g.settle(t, Outcome::Failed(f64::NAN), Some(next), 0.0), Some(Decision::End(End::CircuitOpen)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// Send it again after its own backoff (ms): the target is below its threshold.
    Retry(f64),
    /// Hold it for the target (at the tail of the held list; then evict as told).
    Hold(Hold),
    /// It ends, and why.
    End(End),
}

/// Where the target stands, in the circuit breaker's words (closed, open,
/// half-open — with or without its probe out —, isolated). (The wasm layer
/// answers with the declaration order: keep it.)
///
/// ```
/// use wasm_backoff_core::gate::*;
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
/// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
/// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
/// let mut g = Gate::new(rounds, limits);
/// assert_eq!(g.phase(), Phase::Closed);
/// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
/// g.failed(t, -1.0, 0.0); // a 100 ms round starts
/// assert_eq!(g.phase(), Phase::Open);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The circuit is closed: requests pass straight through (up to the
    /// concurrency limit).
    Closed,
    /// The circuit is open, backing off: everything is held until the wake time.
    Open,
    /// Half-open, no probe out yet: the round is over, the next request is the probe.
    HalfOpen,
    /// Half-open with its probe out; everything else is held until it settles.
    Probing,
    /// Isolated by hand ([`Gate::isolate`]): nothing is sent until
    /// [`Gate::release`].
    Isolated,
}

/// Why the phase last changed (the wasm layer answers with the declaration
/// order: keep it).
///
/// ```
/// use wasm_backoff_core::gate::*;
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
/// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
/// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
/// let mut g = Gate::new(rounds, limits);
/// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
/// g.failed(t, -1.0, 0.0);
/// assert_eq!(g.cause(), Cause::Tripped);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Nothing has happened yet.
    None,
    /// The threshold was reached ([`Gate::with_trip`]): closed → open.
    Tripped,
    /// The backoff round ended: open → half-open (the next call probes).
    RoundOver,
    /// The probe failed: half-open → open.
    ProbeFailed,
    /// The probe did not settle within the probe timeout: half-open → open.
    ProbeTimeout,
    /// The probe succeeded: half-open → closed.
    ProbeSucceeded,
    /// [`Gate::isolate`].
    Isolated,
    /// [`Gate::release`].
    Released,
    /// [`Gate::restore`].
    Restored,
}

/// Why [`Gate::restore`] refused a saved state (the gate is then closed
/// and fresh).
///
/// ```
/// use wasm_backoff_core::gate::*;
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
/// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
/// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
/// let mut g = Gate::new(rounds, limits);
/// let mut saved = g.save(0.0);
/// saved[SAVED_AT] = 1e12; // saved a day in the future
/// assert_eq!(g.restore(&saved, 0.0), Err(RestoreError::Future));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestoreError {
    /// A field is out of its range.
    Malformed,
    /// It was saved after `now` (more than [`CLOCK_SKEW_MS`] ahead).
    Future,
}

/// How far ahead of `now` a saved state's time may be (clocks of two
/// machines differ a little); beyond, it is from the future.
pub const CLOCK_SKEW_MS: f64 = 1000.0;

/// Length of a saved state ([`Gate::save`]); see the `SAVED_*` offsets.
pub const SAVED_LEN: usize = 8 + 2 * BUCKETS;
/// Offset in a saved state: when it was saved (ms).
pub const SAVED_AT: usize = 0;
/// Offset: the phase, 0 closed, 1 open (backing off or half-open), 2 isolated.
pub const SAVED_PHASE: usize = 1;
/// Offset: when the current round ends (ms; open only).
pub const SAVED_UNTIL: usize = 2;
/// Offset: rounds since the target last closed (the schedule's attempt).
pub const SAVED_ROUND: usize = 3;
/// Offset: the last round's wait (ms), for schedules that grow from it.
pub const SAVED_PREV: usize = 4;
/// Offset: the last round's undrawn schedule state (decorrelated chain).
pub const SAVED_CHAIN: usize = 5;
/// Offset: failures in a row.
pub const SAVED_FAILURES: usize = 6;
/// Offset: the start of the window's newest bucket (ms; NaN none).
pub const SAVED_WINDOW_AT: usize = 7;
/// Offset: the window's buckets' calls, oldest first, then their failures.
pub const SAVED_WINDOW: usize = 8;

/// Limits of a gate; see [`Gate::new`].
///
/// ```
/// use wasm_backoff_core::gate::*;
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
/// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
/// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
/// let mut g = Gate::new(rounds, limits);
/// assert!(g.idle());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Most requests held at once for a failing target; beyond, [`Overflow`]
    /// decides who goes. (A healthy target's requests waiting for a
    /// concurrency slot are never refused.)
    pub max_queued: u32,
    /// What to drop when the held list is full.
    pub overflow: Overflow,
    /// Most requests in flight to the target at once (the probe excepted);
    /// `u32::MAX` = no limit. Held requests are released up to it, in order.
    pub concurrency: u32,
    /// A probe unsettled after this long (ms) counts as failed: the next
    /// round starts, so a hung probe cannot hold the target (and everyone
    /// waiting for it) forever. Likewise, once nothing has been sent for
    /// this long while requests wait for a concurrency slot, the requests in
    /// flight (all sent at least this long ago) stop occupying their slots,
    /// so hung requests cannot hold the queue forever either.
    /// `f64::INFINITY` = wait for them.
    pub probe_timeout_ms: f64,
}

impl Limits {
    /// The defaults of a gate's limits, those `createGate()` has: at most
    /// 1 000 requests held, the oldest evicted beyond; no concurrency
    /// limit; a probe unsettled after 30 s counts as failed.
    pub const DEFAULT: Limits = Limits {
        max_queued: 1000,
        overflow: Overflow::EvictOldest,
        concurrency: u32::MAX,
        probe_timeout_ms: 30_000.0,
    };

    /// At most `n` requests held at once (see [`Limits::max_queued`]).
    pub const fn max_queued(mut self, n: u32) -> Self {
        self.max_queued = n;
        self
    }

    /// What to drop when the held list is full.
    pub const fn overflow(mut self, o: Overflow) -> Self {
        self.overflow = o;
        self
    }

    /// At most `n` requests in flight at once (`u32::MAX`: no limit).
    pub const fn concurrency(mut self, n: u32) -> Self {
        self.concurrency = n;
        self
    }

    /// A probe unsettled after `ms` counts as failed (`f64::INFINITY`: wait for it).
    pub const fn probe_timeout_ms(mut self, ms: f64) -> Self {
        self.probe_timeout_ms = ms;
        self
    }
}

/// [`Limits::DEFAULT`].
///
/// ```
/// use wasm_backoff_core::gate::{Limits, Overflow};
/// let l = Limits::default().concurrency(4);
/// assert_eq!((l.max_queued, l.overflow, l.concurrency), (1000, Overflow::EvictOldest, 4));
/// ```
impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

const EPOCH_MASK: u32 = 0x7fff_ffff;

/// The state machine of one target. See the module documentation.
///
/// ```
/// use wasm_backoff_core::gate::{Admit, Gate, Hold, Limits, Overflow, Phase};
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
/// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
/// let limits = Limits { max_queued: 100, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
/// let mut g = Gate::new(rounds, limits);
/// let Admit::Send(tag) = g.admit(0.0) else { unreachable!() };
/// g.failed(tag, -1.0, 0.0); // the target failed: a 100 ms round starts
/// assert_eq!(g.admit(1.0), Admit::Hold(Hold::Held)); // new calls wait
/// assert_eq!(g.take(100.0).map(|t| t & 1), Some(1)); // one probe when the round ends
/// assert_eq!(g.phase(), Phase::Probing);
/// ```
#[derive(Clone, Debug)]
pub struct Gate<R> {
    backoff: Backoff<R>,
    limits: Limits,
    phase: Phase,
    until_ms: f64,
    probe_since: f64,
    /// When the last request was sent (the age of the newest in flight).
    sent_ms: f64,
    last_delay: f64,
    epoch: u32,
    /// The epoch started by the last stall: requests sent before it, still
    /// in flight, are the `stalled` ones.
    stall_epoch: u32,
    rounds: u32,
    held: u32,
    in_flight: u32,
    /// Requests in flight that no longer count against `concurrency`.
    stalled: u32,
    evictions: u64,
    probes: u64,
    timeouts: u64,
    counter: Counter,
    fail_fast: bool,
    cause: Cause,
    limiter: Option<Limiter>,
}

impl<R: Rng> Gate<R> {
    /// A healthy gate whose rounds wait what `backoff` hands out. Give it a
    /// schedule without limits: a target is never given up on (requests are,
    /// by their own limits); if it does run out, the last delay repeats.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// assert_eq!((g.phase(), g.held(), g.in_flight()), (Phase::Closed, 0, 0));
    /// ```
    pub fn new(backoff: Backoff<R>, limits: Limits) -> Self {
        Gate {
            backoff,
            limits,
            phase: Phase::Closed,
            until_ms: 0.0,
            probe_since: 0.0,
            sent_ms: 0.0,
            last_delay: 0.0,
            epoch: 0,
            stall_epoch: 0,
            rounds: 0,
            held: 0,
            in_flight: 0,
            stalled: 0,
            evictions: 0,
            probes: 0,
            timeouts: 0,
            counter: Counter::new(Trip::Consecutive(1)),
            fail_fast: false,
            cause: Cause::None,
            limiter: None,
        }
    }

    /// When the healthy target trips (default: at its first failure,
    /// `Trip::Consecutive(1)`). Below it, a failed call is the caller's to
    /// retry with its own backoff; the target stays closed.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::breaker::Trip;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits).with_trip(Trip::Consecutive(2));
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// assert!(!g.failed(t, -1.0, 0.0));
    /// assert_eq!(g.phase(), Phase::Closed);
    /// ```
    pub fn with_trip(mut self, trip: Trip) -> Self {
        self.counter = Counter::new(trip);
        self
    }

    /// Fail fast: while the circuit is open, [`Gate::admit`] answers
    /// [`Admit::Reject`] instead of holding (the probe still goes out when
    /// the round is over).
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits).fail_fast(true);
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// g.failed(t, -1.0, 0.0);
    /// assert_eq!(g.admit(1.0), Admit::Reject);
    /// assert!(matches!(g.admit(100.0), Admit::Send(_)), "the probe");
    /// ```
    pub fn fail_fast(mut self, yes: bool) -> Self {
        self.fail_fast = yes;
        self
    }

    /// Limits the target's first attempts too ([`Limiter`], the AWS SDK's
    /// adaptive mode): see [`Gate::acquire`] and [`Gate::throttled`].
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::limiter::Limiter;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits).with_limiter(Limiter::new(0.0));
    /// assert_eq!(g.acquire(0.0, f64::INFINITY), 0.0);
    /// ```
    pub fn with_limiter(mut self, limiter: Limiter) -> Self {
        self.limiter = Some(limiter);
        self
    }

    /// The limiter's wait for one more send at `now_ms` by a call due by
    /// `deadline_ms` (a token taken; 0 without a limiter; negative: no
    /// token, the call cannot make it, see [`Limiter::acquire_within`]).
    /// Give the token back with [`Gate::unacquire`] if the call does not go.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// assert_eq!(g.acquire(0.0, f64::INFINITY), 0.0, "no limiter");
    /// ```
    pub fn acquire(&mut self, now_ms: f64, deadline_ms: f64) -> f64 {
        self.limiter
            .as_mut()
            .map_or(0.0, |l| l.acquire_within(now_ms, deadline_ms))
    }

    /// Gives back the token of [`Gate::acquire`].
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// g.unacquire();
    /// ```
    pub fn unacquire(&mut self) {
        if let Some(l) = self.limiter.as_mut() {
            l.cancel();
        }
    }

    /// An answer came back from the target at `now_ms`, for the limiter:
    /// `throttled` (429, or 503 naming a wait), for a call that took its
    /// token at `paced_ms` and was sent at `sent_ms` (see [`Limiter::record`]).
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::limiter::Limiter;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits).with_limiter(Limiter::new(0.0));
    /// g.throttled(true, 0.0, 0.0, 20.0);
    /// assert!(g.acquire(20.0, f64::INFINITY) > 0.0, "limited now");
    /// ```
    pub fn throttled(&mut self, throttled: bool, paced_ms: f64, sent_ms: f64, now_ms: f64) {
        if let Some(l) = self.limiter.as_mut() {
            l.record(throttled, paced_ms, sent_ms, now_ms);
        }
    }

    /// The limiter, if any.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// assert!(Gate::new(rounds, limits).limiter().is_none());
    /// ```
    pub fn limiter(&self) -> Option<&Limiter> {
        self.limiter.as_ref()
    }

    /// Why the phase last changed.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// assert_eq!(Gate::new(rounds, limits).cause(), Cause::None);
    /// ```
    pub fn cause(&self) -> Cause {
        self.cause
    }

    /// Failures in a row of the closed target (the threshold's count).
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// assert_eq!(Gate::new(rounds, limits).failures(), 0);
    /// ```
    pub fn failures(&self) -> u32 {
        self.counter.failures()
    }

    /// Isolates the target by hand at `now_ms`: nothing is sent (new calls
    /// are held, or rejected when failing fast) until [`Gate::release`].
    /// Whatever is in flight reports stale.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// g.isolate();
    /// assert_eq!(g.admit(0.0), Admit::Hold(Hold::Held));
    /// assert_eq!(g.take(1e9), None);
    /// g.release();
    /// assert!(g.take(0.0).is_some());
    /// ```
    pub fn isolate(&mut self) {
        self.epoch = (self.epoch + 1) & EPOCH_MASK;
        self.phase = Phase::Isolated;
        self.cause = Cause::Isolated;
    }

    /// Ends an isolation (or any backoff): the target is closed, its
    /// schedule and counts start again, held calls go out in order.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// g.isolate();
    /// g.release();
    /// assert_eq!((g.phase(), g.cause()), (Phase::Closed, Cause::Released));
    /// ```
    pub fn release(&mut self) {
        self.epoch = (self.epoch + 1) & EPOCH_MASK;
        self.close();
        self.cause = Cause::Released;
    }

    fn close(&mut self) {
        self.phase = Phase::Closed;
        self.backoff.reset();
        self.counter.reset();
    }

    /// The state worth carrying to another isolate or invocation, at
    /// `now_ms`: the phase (a probe in flight is not: restored, the target
    /// is open, and probes again), the round's end, the schedule's place,
    /// the threshold's counts. What is held or in flight stays here, and so
    /// does the limiter (see [`Limiter`]: it is `Copy`).
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = || Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds(), limits);
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// g.failed(t, -1.0, 0.0); // open until 100
    /// let saved = g.save(10.0);
    /// let mut h = Gate::new(rounds(), limits); // another isolate
    /// h.restore(&saved, 50.0).unwrap();
    /// assert_eq!(h.admit(60.0), Admit::Hold(Hold::Held), "still open");
    /// assert!(h.take(100.0).is_some(), "the probe at 100");
    /// ```
    pub fn save(&self, now_ms: f64) -> [f64; SAVED_LEN] {
        let mut s = [0.0; SAVED_LEN];
        s[SAVED_AT] = now_ms;
        s[SAVED_PHASE] = match self.phase {
            Phase::Closed => 0.0,
            Phase::Isolated => 2.0,
            _ => 1.0,
        };
        s[SAVED_UNTIL] = if self.phase == Phase::Open {
            self.until_ms
        } else {
            now_ms
        };
        s[SAVED_ROUND] = self.backoff.attempt() as f64;
        s[SAVED_PREV] = self.last_delay;
        s[SAVED_CHAIN] = self.backoff.chain_ms();
        s[SAVED_FAILURES] = self.counter.failures() as f64;
        let (at, calls, fails) = self.counter.buckets();
        s[SAVED_WINDOW_AT] = at;
        // (loops, not copy_from_slice: its length check would bring core::fmt into the module)
        for i in 0..BUCKETS {
            s[SAVED_WINDOW + i] = calls[i];
            s[SAVED_WINDOW + BUCKETS + i] = fails[i];
        }
        s
    }

    /// Takes up a state from [`Gate::save`] at `now_ms` (replacing the
    /// phase, schedule place and counts; held and in-flight calls stay).
    /// A malformed state, or one saved after `now_ms`, is refused and the
    /// target is left closed and fresh.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// let mut saved = g.save(0.0);
    /// saved[SAVED_PHASE] = 7.0;
    /// assert_eq!(g.restore(&saved, 0.0), Err(RestoreError::Malformed));
    /// assert_eq!(g.phase(), Phase::Closed);
    /// ```
    pub fn restore(&mut self, s: &[f64; SAVED_LEN], now_ms: f64) -> Result<(), RestoreError> {
        let r = self.take_up(s, now_ms);
        if r.is_err() {
            self.epoch = (self.epoch + 1) & EPOCH_MASK;
            self.close();
        }
        r
    }

    fn take_up(&mut self, s: &[f64; SAVED_LEN], now_ms: f64) -> Result<(), RestoreError> {
        let count = |x: f64| x >= 0.0 && x <= u32::MAX as f64 && x == (x as u32) as f64;
        let at = s[SAVED_AT];
        if !at.is_finite() || !now_ms.is_finite() {
            return Err(RestoreError::Malformed);
        }
        if at > now_ms + CLOCK_SKEW_MS {
            return Err(RestoreError::Future);
        }
        let phase = s[SAVED_PHASE];
        let until = s[SAVED_UNTIL];
        let mut calls = [0.0; BUCKETS];
        let mut fails = [0.0; BUCKETS];
        for i in 0..BUCKETS {
            calls[i] = s[SAVED_WINDOW + i];
            fails[i] = s[SAVED_WINDOW + BUCKETS + i];
        }
        let ok = (phase == 0.0 || phase == 1.0 || phase == 2.0)
            && until.is_finite()
            && until - at <= MAX_DELAY_MS
            && count(s[SAVED_ROUND])
            && (0.0..=MAX_DELAY_MS).contains(&s[SAVED_PREV])
            && (0.0..=MAX_DELAY_MS).contains(&s[SAVED_CHAIN])
            && count(s[SAVED_FAILURES])
            && (s[SAVED_WINDOW_AT].is_nan() || s[SAVED_WINDOW_AT].is_finite())
            // (zipped, not indexed: an index the optimiser cannot bound brings
            // the panic's message and core::fmt's digits into the module)
            && calls
                .iter()
                .zip(&fails)
                .all(|(c, f)| count(*c) && count(*f) && f <= c);
        if !ok {
            return Err(RestoreError::Malformed);
        }
        self.counter
            .set(s[SAVED_FAILURES] as u32, s[SAVED_WINDOW_AT], &calls, &fails);
        self.backoff.resume(s[SAVED_ROUND] as u32, s[SAVED_CHAIN]);
        self.last_delay = s[SAVED_PREV];
        self.epoch = (self.epoch + 1) & EPOCH_MASK;
        // Times are the shared clock's: a round restored in another isolate
        // ends when it would have ended there; but no later than the
        // longest round this gate could have started itself (its schedule's
        // cap, or a server-named wait up to the drivers' default cap): a
        // hostile or foreign state cannot pause the target for days.
        let longest = self.backoff.config().cap().max(DEFAULT_MAX_RETRY_AFTER_MS);
        self.until_ms = until.min(at + longest);
        self.phase = match phase as u8 {
            0 => Phase::Closed,
            2 => Phase::Isolated,
            _ => Phase::Open,
        };
        self.cause = Cause::Restored;
        Ok(())
    }

    fn tag(&self, probe: bool) -> Tag {
        (self.epoch << 1) | probe as u32
    }

    /// A waiting gate whose time has come opens (the next send is a probe);
    /// a probe out for longer than the probe timeout has failed; healthy
    /// requests held for a slot while nothing was sent for the probe
    /// timeout stall the requests in flight (see [`Limits::probe_timeout_ms`]).
    fn tick(&mut self, now_ms: f64) {
        let late = now_ms >= self.wait_end();
        match self.phase {
            Phase::Open if now_ms >= self.until_ms => {
                self.phase = Phase::HalfOpen;
                self.cause = Cause::RoundOver;
            }
            Phase::Probing if late => self.start_round(-1.0, now_ms, Cause::ProbeTimeout),
            // A new epoch tells the stalled requests from later ones when
            // they settle; their failures are then stale (they were sent
            // before the requests that now test the target).
            Phase::Closed if late && self.held > 0 && self.full() => {
                self.epoch = (self.epoch + 1) & EPOCH_MASK;
                self.stall_epoch = self.epoch;
                self.stalled = self.in_flight;
            }
            _ => {}
        }
    }

    /// The end of the probe's, or the stall's, timeout.
    fn wait_end(&self) -> f64 {
        let since = if self.phase == Phase::Probing {
            self.probe_since
        } else {
            self.sent_ms
        };
        since + self.limits.probe_timeout_ms
    }

    /// Whether the requests in flight (the stalled ones aside) fill `concurrency`.
    fn full(&self) -> bool {
        self.in_flight.saturating_sub(self.stalled) >= self.limits.concurrency
    }

    /// A sent request (`tag`) came back: it leaves the in-flight count, and
    /// the stalled one if it was sent before the last stall.
    fn land(&mut self, tag: Tag) {
        self.in_flight = self.in_flight.saturating_sub(1);
        let age = self.stall_epoch.wrapping_sub(tag >> 1) & EPOCH_MASK;
        if age != 0 && age < 1 << 30 && self.stalled > 0 {
            self.stalled -= 1;
        }
    }

    /// What an outcome that is news ([`Gate::news`]) does to the target:
    /// a closed one counts it against the threshold (and trips); the
    /// probe's closes the circuit, starts the next round, or (cancelled)
    /// lets the next request probe.
    fn heard(&mut self, outcome: Outcome, now_ms: f64) {
        let cause = match (self.phase, outcome) {
            (Phase::Closed, Outcome::Reached) => {
                self.counter.record(false, now_ms);
                return;
            }
            (Phase::Closed, Outcome::Failed(_)) if self.counter.record(true, now_ms) => {
                Cause::Tripped
            }
            (Phase::Probing, Outcome::Reached) => {
                self.close();
                self.cause = Cause::ProbeSucceeded;
                return;
            }
            (Phase::Probing, Outcome::Failed(_)) => Cause::ProbeFailed,
            (Phase::Probing, Outcome::Cancelled) => {
                self.phase = Phase::HalfOpen;
                return;
            }
            (Phase::Probing, Outcome::TimedOut) => Cause::ProbeTimeout,
            _ => return,
        };
        let hint_ms = if let Outcome::Failed(h) = outcome {
            h
        } else {
            -1.0
        };
        self.start_round(hint_ms, now_ms, cause);
    }

    fn send(&mut self, probe: bool, now_ms: f64) -> Tag {
        self.in_flight += 1;
        self.sent_ms = now_ms;
        self.tag(probe)
    }

    /// The next backoff round, from `now_ms`: a new epoch, so that whatever
    /// is still in flight from before reports stale.
    fn start_round(&mut self, hint_ms: f64, now_ms: f64, cause: Cause) {
        self.cause = cause;
        let mut delay = self.backoff.next_delay().unwrap_or(self.last_delay);
        self.last_delay = delay;
        if hint_ms >= 0.0 {
            delay = self.backoff.with_hint(delay, hint_ms);
        }
        self.epoch = (self.epoch + 1) & EPOCH_MASK;
        self.rounds = self.rounds.wrapping_add(1);
        self.until_ms = now_ms + delay;
        self.phase = Phase::Open;
    }

    /// A new request at `now_ms`: send it (healthy, nothing held ahead of it
    /// and below the concurrency limit; or as the probe of an open gate), or
    /// hold it.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// g.failed(t, -1.0, 0.0); // a 100 ms round starts
    /// assert_eq!(g.admit(1.0), Admit::Hold(Hold::Held));
    /// ```
    pub fn admit(&mut self, now_ms: f64) -> Admit {
        self.tick(now_ms);
        if self.held == 0 {
            if self.phase == Phase::Closed && !self.full() {
                return Admit::Send(self.send(false, now_ms));
            }
            if self.phase == Phase::HalfOpen {
                return Admit::Send(self.send_probe(now_ms));
            }
        }
        if self.fail_fast && self.phase != Phase::Closed {
            return Admit::Reject;
        }
        Admit::Hold(self.hold())
    }

    fn send_probe(&mut self, now_ms: f64) -> Tag {
        self.phase = Phase::Probing;
        self.probe_since = now_ms;
        self.probes += 1;
        self.send(true, now_ms)
    }

    /// One more request is held (a new one, or one whose attempt failed and
    /// that will wait for the target); the caller inserts it in arrival order
    /// and then evicts as told.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// g.failed(t, -1.0, 0.0); // a 100 ms round starts
    /// g.hold();
    /// assert_eq!(g.held(), 1);
    /// ```
    pub fn hold(&mut self) -> Hold {
        // A healthy target's calls wait only for a concurrency slot: they are
        // the caller's own load, not a failure to bound, and are never refused.
        if self.held < self.limits.max_queued || self.phase == Phase::Closed {
            self.held += 1;
            return Hold::Held;
        }
        self.evictions += 1;
        match self.limits.overflow {
            Overflow::EvictOldest => Hold::EvictHead,
            Overflow::RejectNewest => Hold::EvictTail,
        }
    }

    /// A held request left on its own: aborted, or (`timed_out`) out of
    /// time or attempts, which [`Gate::timeouts`] counts.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// g.failed(t, -1.0, 0.0); // a 100 ms round starts
    /// g.admit(1.0);
    /// g.left(true);
    /// assert_eq!((g.held(), g.timeouts()), (0, 1));
    /// ```
    pub fn left(&mut self, timed_out: bool) {
        self.held = self.held.saturating_sub(1);
        self.timeouts += timed_out as u64;
    }

    /// The request sent with `tag` failed at `now_ms` in a way that says the
    /// target is down. Starts a backoff round when the failure is news (see
    /// the module documentation: a probe's, or a fresh one that reaches the
    /// threshold of [`Gate::with_trip`]) and returns whether it did; `hint_ms` (a
    /// `Retry-After`; negative or NaN = none) makes that round wait at least as long.
    /// The request itself is not held by this: call [`Gate::hold`] if it
    /// will wait for the target.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// assert!(g.failed(t, 500.0, 0.0)); // news: a round, at least 500 ms (a Retry-After)
    /// assert!(g.wake_at().is_none() && g.can_wait(450.0) == false);
    /// ```
    pub fn failed(&mut self, tag: Tag, hint_ms: f64, now_ms: f64) -> bool {
        let rounds = self.rounds;
        self.settle(tag, Outcome::Failed(hint_ms), None, now_ms);
        self.rounds != rounds
    }

    /// Outcomes of calls to the target that were sent elsewhere (by the
    /// isolates of a fleet, which report them in batches): `ok` successes,
    /// then `failed` failures, ended by `now_ms`. Counted against the
    /// threshold while the target is closed, as that many calls through
    /// this gate would have been (the failures of calls sent before a round
    /// join it: while open, nothing is counted). Returns whether a round
    /// started.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::breaker::Trip;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let mut g = Gate::new(rounds, Limits::default()).with_trip(Trip::Consecutive(5));
    /// assert!(!g.record(10, 4, 0.0), "four in a row: below the threshold");
    /// assert!(g.record(0, 1, 1.0), "the fifth trips");
    /// assert_eq!(g.phase(), Phase::Open);
    /// assert!(!g.record(0, 100, 2.0), "while open, nothing more is counted");
    /// ```
    pub fn record(&mut self, ok: u32, failed: u32, now_ms: f64) -> bool {
        if self.phase != Phase::Closed {
            return false;
        }
        self.counter.record_many(false, ok, now_ms);
        if !self.counter.record_many(true, failed, now_ms) {
            return false;
        }
        self.start_round(-1.0, now_ms, Cause::Tripped);
        true
    }

    /// The request sent with `tag` reached the target at `now_ms`. The probe's success
    /// ends the backoff (the held requests are then released by
    /// [`Gate::take`]); any other success only frees its concurrency slot —
    /// a request sent before the outage proves nothing about now.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// g.succeeded(t, 0.0);
    /// assert!(g.idle());
    /// ```
    pub fn succeeded(&mut self, tag: Tag, now_ms: f64) {
        self.settle(tag, Outcome::Reached, None, now_ms);
    }

    /// The request sent with `tag` ended without an outcome (its caller
    /// aborted it). A cancelled probe says nothing: the gate opens again and
    /// the next request in line probes.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// g.cancelled(t);
    /// assert_eq!(g.in_flight(), 0);
    /// ```
    pub fn cancelled(&mut self, tag: Tag) {
        self.settle(tag, Outcome::Cancelled, None, f64::NAN);
    }

    /// The request sent with `tag` was cut in flight by its caller's
    /// deadline at `now_ms`: no answer within the time it had. The probe's
    /// counts as failed, as a probe unsettled after the probe timeout does
    /// (the next round starts, [`Cause::ProbeTimeout`]: the calls held
    /// behind it are not sent one after another into the same silence);
    /// another's says nothing, as [`Gate::cancelled`].
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let mut g = Gate::new(rounds, Limits::default());
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// g.failed(t, -1.0, 0.0); // a 100 ms round starts
    /// let Admit::Send(probe) = g.admit(100.0) else { unreachable!() };
    /// g.timed_out(probe, 150.0);
    /// assert_eq!((g.phase(), g.cause(), g.until()), (Phase::Open, Cause::ProbeTimeout, Some(350.0)));
    /// ```
    pub fn timed_out(&mut self, tag: Tag, now_ms: f64) {
        self.settle(tag, Outcome::TimedOut, None, now_ms);
    }

    /// Whether an outcome of the request sent with `tag` is news about the
    /// target: it was sent in the current healthy period, or it is the
    /// current probe. The others were sent before the last round (or an
    /// isolation, a restore, a stall) began: they fail or succeed with what
    /// the target was then, and [`Gate::settle`] counts them for nothing.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let mut g = Gate::new(rounds, Limits::default());
    /// let Admit::Send(a) = g.admit(0.0) else { unreachable!() };
    /// let Admit::Send(b) = g.admit(0.0) else { unreachable!() };
    /// g.failed(a, -1.0, 0.0); // a round starts
    /// let Admit::Send(probe) = g.admit(100.0) else { unreachable!() };
    /// g.succeeded(probe, 110.0); // closed again
    /// assert!(!g.news(b), "sent before the round");
    /// ```
    pub fn news(&self, tag: Tag) -> bool {
        let probe = tag & 1 == 1;
        tag == self.tag(probe) && self.phase == if probe { Phase::Probing } else { Phase::Closed }
    }

    /// The outcome of the request sent with `tag` at `now_ms`, and the
    /// gate's decision on its call: with `next` (the call wants another
    /// attempt), [`Decision::Retry`] after its own backoff while the target
    /// is closed (below its threshold), [`Decision::Hold`] while it backs
    /// off, or [`Decision::End`] and why: its own limits (`next.own`'s
    /// reason; [`End::Deadline`] when its backoff, or the round, ends past
    /// its deadline), or [`End::CircuitOpen`] when failing fast. Without
    /// `next`, the outcome is recorded and nothing decided (`None`).
    /// Outcomes that are no news ([`Gate::news`]) count for nothing.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::breaker::Trip;
    /// use wasm_backoff_core::policy::End;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let mut g = Gate::new(rounds, Limits::default()).with_trip(Trip::Consecutive(3));
    /// let next = |own| Some(Next { own, deadline_ms: 1000.0 });
    /// let failed = Outcome::Failed(f64::NAN);
    /// // Below the threshold: the call's own backoff, unless it ends past the deadline.
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// assert_eq!(g.settle(t, failed, next(Ok(50.0)), 0.0), Some(Decision::Retry(50.0)));
    /// let Admit::Send(t) = g.admit(50.0) else { unreachable!() };
    /// assert_eq!(g.settle(t, failed, next(Ok(2000.0)), 50.0), Some(Decision::End(End::Deadline)));
    /// // The third failure in a row trips: the call is held for the round.
    /// let Admit::Send(t) = g.admit(60.0) else { unreachable!() };
    /// assert_eq!(g.settle(t, failed, next(Ok(0.0)), 60.0), Some(Decision::Hold(Hold::Held)));
    /// ```
    pub fn settle(
        &mut self,
        tag: Tag,
        outcome: Outcome,
        next: Option<Next>,
        now_ms: f64,
    ) -> Option<Decision> {
        if self.news(tag) {
            self.heard(outcome, now_ms);
        }
        self.land(tag);
        let next = next?;
        let own = match next.own {
            Ok(ms) => ms,
            Err(why) => return Some(Decision::End(why)),
        };
        Some(if self.phase == Phase::Closed {
            if now_ms + own > next.deadline_ms {
                Decision::End(End::Deadline)
            } else {
                Decision::Retry(own)
            }
        } else if !self.can_wait(next.deadline_ms) {
            Decision::End(End::Deadline)
        } else if self.fail_fast {
            Decision::End(End::CircuitOpen)
        } else {
            Decision::Hold(self.hold())
        })
    }

    /// Whether a held request stays held once a round it waits through has
    /// begun (each costs it an attempt: `own`, its own schedule's next delay,
    /// or why it has none): `None` when it does, else why it leaves —
    /// [`End::Exhausted`] (out of attempts: a held call has no answer of its
    /// own to end with), or [`End::Deadline`] when the gate will not wake
    /// before its deadline. Then call [`Gate::left`].
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::policy::End;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let mut g = Gate::new(rounds, Limits::default());
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// g.failed(t, -1.0, 0.0); // a 100 ms round starts
    /// assert_eq!(g.keep(Ok(0.0), 100.0), None);
    /// assert_eq!(g.keep(Ok(0.0), 99.0), Some(End::Deadline));
    /// assert_eq!(g.keep(Err(End::Vetoed), 1e9), Some(End::Exhausted));
    /// ```
    pub fn keep(&self, own: Result<f64, End>, deadline_ms: f64) -> Option<End> {
        if own.is_err() {
            Some(End::Exhausted)
        } else {
            (!self.can_wait(deadline_ms)).then_some(End::Deadline)
        }
    }

    /// Which held request to send at `now_ms`: `Some(tag)` for the head of
    /// the held list (the caller sends it with that tag, and calls again), or
    /// `None`. Exactly one probe per round; then, once healthy, the held
    /// requests in order, up to the concurrency limit.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// g.failed(t, -1.0, 0.0); // a 100 ms round starts
    /// g.admit(1.0);
    /// assert_eq!(g.take(50.0), None, "still waiting");
    /// assert!(g.take(100.0).is_some(), "the probe");
    /// ```
    pub fn take(&mut self, now_ms: f64) -> Option<Tag> {
        self.tick(now_ms);
        if self.held == 0 {
            return None;
        }
        let tag = match self.phase {
            Phase::HalfOpen => self.send_probe(now_ms),
            Phase::Closed if !self.full() => self.send(false, now_ms),
            _ => return None,
        };
        self.held -= 1;
        Some(tag)
    }

    /// When the caller needs a timer to call [`Gate::take`] while anything
    /// is held: the end of the current wait, the probe's timeout, or the
    /// stall timeout of a full gate. `None` otherwise (nothing to wake; a
    /// request arriving later is checked against the clock).
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// g.failed(t, -1.0, 0.0); // a 100 ms round starts
    /// g.admit(1.0);
    /// assert_eq!(g.wake_at(), Some(100.0));
    /// ```
    pub fn wake_at(&self) -> Option<f64> {
        let end = self.wait_end();
        match self.phase {
            _ if self.held == 0 => None,
            Phase::Open => Some(self.until_ms),
            _ if end == f64::INFINITY => None,
            Phase::Probing => Some(end),
            Phase::Closed if self.full() => Some(end),
            _ => None,
        }
    }

    /// Whether a request whose deadline is `deadline_ms` can still be served
    /// by waiting: false when the gate will not even wake before it.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// g.failed(t, -1.0, 0.0); // a 100 ms round starts
    /// assert!(g.can_wait(100.0) && !g.can_wait(99.0));
    /// ```
    pub fn can_wait(&self, deadline_ms: f64) -> bool {
        self.phase != Phase::Open || self.until_ms <= deadline_ms
    }

    /// When the current backoff round ends (while backing off).
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// g.failed(t, -1.0, 0.0);
    /// assert_eq!(g.until(), Some(100.0));
    /// ```
    pub fn until(&self) -> Option<f64> {
        (self.phase == Phase::Open).then_some(self.until_ms)
    }

    /// The current phase (as of the last event; a wait that has run out
    /// shows as [`Phase::HalfOpen`] only once an event has seen the clock).
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// assert_eq!(g.phase(), Phase::Closed);
    /// ```
    pub fn phase(&self) -> Phase {
        self.phase
    }
    /// Requests held now.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// assert_eq!(g.held(), 0);
    /// ```
    pub fn held(&self) -> u32 {
        self.held
    }
    /// Requests sent and not settled (the stalled ones included).
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// assert_eq!(g.in_flight(), 0);
    /// ```
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }
    /// Backoff rounds started since construction (the failed probes, plus
    /// the failures that ended a healthy period; wrapping).
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// assert_eq!(g.rounds(), 0);
    /// ```
    pub fn rounds(&self) -> u32 {
        self.rounds
    }
    /// Probes sent since construction.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// assert_eq!(g.probes(), 0);
    /// ```
    pub fn probes(&self) -> u64 {
        self.probes
    }
    /// Held requests evicted or refused because the list was full.
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// assert_eq!(g.evictions(), 0);
    /// ```
    pub fn evictions(&self) -> u64 {
        self.evictions
    }
    /// Held requests that left out of time or attempts (see [`Gate::left`]).
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// assert_eq!(g.timeouts(), 0);
    /// ```
    pub fn timeouts(&self) -> u64 {
        self.timeouts
    }
    /// Whether the gate has nothing to remember: healthy, nothing held or in
    /// flight (the caller may drop it; a fresh one behaves the same).
    ///
    /// ```
    /// use wasm_backoff_core::gate::*;
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let rounds = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// let limits = Limits { max_queued: 2, overflow: Overflow::EvictOldest, concurrency: u32::MAX, probe_timeout_ms: 30_000.0 };
    /// let mut g = Gate::new(rounds, limits);
    /// assert!(g.idle());
    /// let Admit::Send(t) = g.admit(0.0) else { unreachable!() };
    /// g.failed(t, -1.0, 0.0); // a 100 ms round starts
    /// assert!(!g.idle());
    /// ```
    pub fn idle(&self) -> bool {
        self.phase == Phase::Closed
            && self.held == 0
            && self.in_flight == 0
            && self.counter.quiet()
            && self.limiter.is_none_or(|l| !l.enabled())
    }
}
