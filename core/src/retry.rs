//! Retrying an operation on a schedule (feature `std`), in the style of
//! backon: `retry(op).with(config).when(…).notify(…)`, then `.run(sleep)`
//! for async work on any runtime (the sleep function is passed in:
//! `tokio::time::sleep`, `async_std::task::sleep`, a test clock…) or
//! `.call()` to block the thread between tries.
//!
//! ```
//! use std::time::Duration;
//! use wasm_backoff_core::retry::retry;
//! use wasm_backoff_core::{Config, Jitter};
//!
//! let mut tries = 0;
//! let slept = std::cell::Cell::new(Duration::ZERO);
//! let value = retry(|| {
//!     tries += 1;
//!     if tries < 3 { Err("busy") } else { Ok(42) }
//! })
//! .with(Config::new().base_ms(1.0).jitter(Jitter::None))
//! .when(|e: &&str| *e == "busy") // only this error is worth another try
//! .notify(|_e: &&str, d: Duration| slept.set(slept.get() + d))
//! .call();
//! assert_eq!(value, Ok(42));
//! assert_eq!(slept.get(), Duration::from_millis(3)); // 1 ms, then 2 ms
//! ```
//!
//! On tokio (the "From Rust" example of docs/rust.md, word for word: a test of
//! `xtask/tests/readme.rs` checks that they agree):
//!
//! ```
//! use std::io::{Error, ErrorKind};
//! use std::sync::atomic::{AtomicU32, Ordering};
//! use std::time::Duration;
//! use wasm_backoff_core::{retry::retry, Preset};
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() {
//!     let calls = AtomicU32::new(0);
//!     // Stands for a call to a flaky service: refused twice, then an answer.
//!     let call_the_service = || async {
//!         match calls.fetch_add(1, Ordering::Relaxed) {
//!             0 | 1 => Err(Error::new(ErrorKind::ConnectionRefused, "busy")),
//!             _ => Ok("answer"),
//!         }
//!     };
//!     let answer = retry(call_the_service)
//!         .with(Preset::Aws.config()) // 3 attempts, full jitter; or Config::new()…
//!         .when(|e: &Error| e.kind() != ErrorKind::PermissionDenied)
//!         .notify(|e: &Error, wait: Duration| eprintln!("{e}; retrying in {wait:?}"))
//!         .run(tokio::time::sleep) // any runtime's sleep; `.call()` blocks instead
//!         .await;
//!     assert_eq!(answer.unwrap(), "answer");
//!     assert_eq!(calls.load(Ordering::Relaxed), 3);
//! }
//! ```

//! Under a [`Policy`] (`.policy(p).drive(sleep)`), the same loop carries
//! what an HTTP client needs: the operation is told its attempt number and
//! returns any outcome (a response with an error status is no `Err`); the
//! policy judges it — [`Verdict::Retry`], honouring a wait the server
//! named, or [`Verdict::Stop`] with the core's [`End`] reason; the core's
//! timing rule ([`crate::policy::timing`]: [`Retry::max_retry_after_ms`],
//! [`Retry::deadline`]) times the wait; the sleep may fail (an abort),
//! which ends the call with its error. `run` and `call` are that loop with
//! `when` and `notify` as the policy, and `wasm-backoff-web`'s
//! `fetch_with_backoff` is that loop too: one retry loop in Rust.

use crate::policy::{Choice, DEFAULT_MAX_RETRY_AFTER_MS, End, Wait, wait};
use crate::{Backoff, Config, ConfigError, DefaultRng, seeded_rng};
use std::convert::Infallible;
use std::future::{Future, ready};
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// Which errors are worth another try (see [`Retry::when`]).
///
/// ```
/// use wasm_backoff_core::retry::*;
/// use wasm_backoff_core::{Config, Jitter};
/// let mut only_busy = |e: &&str| *e == "busy";
/// assert!(When::retryable(&mut only_busy, &"busy"));
/// assert!(When::<&str>::retryable(&mut Always, &"anything"));
/// ```
pub trait When<E> {
    /// Whether `error` may be retried.
    fn retryable(&mut self, error: &E) -> bool;
}

/// Every error is worth another try (the default).
///
/// ```
/// use wasm_backoff_core::retry::*;
/// use wasm_backoff_core::{Config, Jitter};
/// let r: Result<(), &str> = retry(|| Err("x")).with(Config::new().base_ms(0.0).max_attempts(Some(2))).call();
/// assert_eq!(r, Err("x")); // Always: retried, then the schedule gave up
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Always;

impl<E> When<E> for Always {
    fn retryable(&mut self, _: &E) -> bool {
        true
    }
}

impl<E, F: FnMut(&E) -> bool> When<E> for F {
    fn retryable(&mut self, error: &E) -> bool {
        self(error)
    }
}

/// Told of every failure that will be retried, and the wait before the
/// retry (see [`Retry::notify`]).
///
/// ```
/// use wasm_backoff_core::retry::*;
/// use wasm_backoff_core::{Config, Jitter};
/// let mut seen = Vec::new();
/// let mut log = |_: &&str, d: std::time::Duration| seen.push(d);
/// Notify::notify(&mut log, &"busy", std::time::Duration::from_millis(5));
/// assert_eq!(seen.len(), 1);
/// ```
pub trait Notify<E> {
    /// `error` will be retried after `wait`.
    fn notify(&mut self, error: &E, wait: Duration);
}

/// Tells no one (the default).
///
/// ```
/// use wasm_backoff_core::retry::*;
/// use wasm_backoff_core::{Config, Jitter};
/// Notify::<&str>::notify(&mut Silent, &"busy", std::time::Duration::ZERO); // tells no one
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl<E> Notify<E> for Silent {
    fn notify(&mut self, _: &E, _: Duration) {}
}

impl<E, F: FnMut(&E, Duration)> Notify<E> for F {
    fn notify(&mut self, error: &E, wait: Duration) {
        self(error, wait)
    }
}

/// What a [`Policy`] makes of a finished attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    /// Try again after the schedule's next delay, lifted to `hint_ms` (a
    /// wait the server named, in ms) when there is one, with a little jitter
    /// above it ([`Backoff::with_hint`]). The timing rules
    /// ([`crate::policy::timing`]) may still end the call.
    Retry {
        /// The wait the server named, in ms.
        hint_ms: Option<f64>,
    },
    /// End the call with this attempt's outcome, for this reason.
    Stop(End),
}

/// Decides about every finished attempt of [`Retry::drive`] — a success
/// may be retried and an error returned, since the outcome is whatever the
/// operation gives — and is told of each wait. The full form of
/// [`Retry::when`] and [`Retry::notify`]; a closure
/// `FnMut(attempt, &outcome) -> Verdict` is a policy that tells no one.
///
/// ```
/// use wasm_backoff_core::policy::End;
/// use wasm_backoff_core::retry::*;
/// let mut p = |_: u32, status: &u16| match status {
///     503 => Verdict::Retry { hint_ms: None },
///     _ => Verdict::Stop(End::Success),
/// };
/// assert_eq!(Policy::verdict(&mut p, 1, &200), Verdict::Stop(End::Success));
/// ```
pub trait Policy<O> {
    /// Whether attempt `attempt` (1 = the first try), which ended with
    /// `outcome`, is tried again.
    fn verdict(&mut self, attempt: u32, outcome: &O) -> Verdict;

    /// The attempt that ended with `outcome` will be retried after `pause`
    /// (to log it, or to release what the outcome holds). Default: nothing.
    fn notify(&mut self, outcome: &O, pause: &Pause) {
        let _ = (outcome, pause);
    }

    /// The wait before attempt `attempt` (which ended with `outcome`) is
    /// retried: `proposal` is the schedule's delay, lifted to the server's
    /// `hint_ms`; [`Choice::Wait`] another, [`Choice::GiveUp`] none (the
    /// call ends, [`End::Vetoed`]). Asked only when the schedule has a delay
    /// left and the server's wait is within the maximum; the deadline then
    /// applies to the wait chosen ([`crate::policy::wait`]). Default: keep
    /// the proposal.
    fn delay(&mut self, attempt: u32, outcome: &O, proposal: f64, hint_ms: Option<f64>) -> Choice {
        let _ = (attempt, outcome, proposal, hint_ms);
        Choice::Keep
    }

    /// The base (ms, finite and >= 0) the schedule's next step is drawn on
    /// before attempt `attempt`, which ended with `outcome`, is retried
    /// ([`Backoff::next_delay_on`]): `None` for the schedule's own (and so is
    /// a base that is NaN, infinite or negative). A
    /// throttled answer ([`crate::policy::throttled`]) may wait on a longer
    /// base than a transient failure (the web crate's `throttle_base_ms`,
    /// the JS drivers' `throttleBaseMs`). Default: the schedule's own.
    ///
    /// ```
    /// use std::cell::RefCell;
    /// use wasm_backoff_core::policy::{throttled, End};
    /// use wasm_backoff_core::retry::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// // Statuses: a 429, 503 or 529 waits on a 1 s base, another failure on the schedule's 10 ms.
    /// struct Statuses<'a>(&'a RefCell<Vec<f64>>);
    /// impl Policy<u16> for Statuses<'_> {
    ///     fn verdict(&mut self, _: u32, s: &u16) -> Verdict {
    ///         if *s < 400 { Verdict::Stop(End::Success) } else { Verdict::Retry { hint_ms: None } }
    ///     }
    ///     fn notify(&mut self, _: &u16, pause: &Pause) {
    ///         self.0.borrow_mut().push(pause.delay_ms);
    ///     }
    ///     fn base(&mut self, _: u32, s: &u16) -> Option<f64> {
    ///         throttled(Some(*s)).then_some(1_000.0)
    ///     }
    /// }
    ///
    /// #[tokio::main(flavor = "current_thread")]
    /// async fn main() {
    ///     let answers = [503, 500, 200];
    ///     let waits = RefCell::new(Vec::new());
    ///     let done = retry(|attempt: u32| async move { answers[attempt as usize - 1] })
    ///         .with(Config::new().base_ms(10.0).factor(1.0).jitter(Jitter::None))
    ///         .policy(Statuses(&waits))
    ///         .drive(|_| async { Ok::<(), ()>(()) })
    ///         .await
    ///         .unwrap();
    ///     assert_eq!((done.end, waits.into_inner()), (End::Success, vec![1_000.0, 10.0]));
    /// }
    /// ```
    fn base(&mut self, attempt: u32, outcome: &O) -> Option<f64> {
        let _ = (attempt, outcome);
        None
    }
}

impl<O, F: FnMut(u32, &O) -> Verdict> Policy<O> for F {
    fn verdict(&mut self, attempt: u32, outcome: &O) -> Verdict {
        self(attempt, outcome)
    }
}

/// Every error is retried, every success returned.
impl<T, E> Policy<Result<T, E>> for Always {
    fn verdict(&mut self, _: u32, outcome: &Result<T, E>) -> Verdict {
        match outcome {
            Ok(_) => Verdict::Stop(End::Success),
            Err(_) => Verdict::Retry { hint_ms: None },
        }
    }
}

/// [`Retry::when`] and [`Retry::notify`] as the policy of [`Retry::run`]
/// and [`Retry::call`], so that they run the same loop as [`Retry::drive`].
struct Filter<'a, W, N>(&'a mut W, &'a mut N);

impl<T, E, W: When<E>, N: Notify<E>> Policy<Result<T, E>> for Filter<'_, W, N> {
    fn verdict(&mut self, _: u32, outcome: &Result<T, E>) -> Verdict {
        match outcome {
            Ok(_) => Verdict::Stop(End::Success),
            Err(e) if self.0.retryable(e) => Verdict::Retry { hint_ms: None },
            Err(_) => Verdict::Stop(End::NotRetryable),
        }
    }

    fn notify(&mut self, outcome: &Result<T, E>, pause: &Pause) {
        if let Err(e) = outcome {
            self.1.notify(e, pause.wait());
        }
    }
}

/// A wait about to start, as [`Policy::notify`] is told of it.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Pause {
    /// The attempt that will be retried (1 = the first try).
    pub attempt: u32,
    /// The wait, in ms: the schedule's delay, or at least the server's.
    pub delay_ms: f64,
    /// The wait the server named, in ms, as the policy's verdict gave it.
    pub hint_ms: Option<f64>,
}

impl Pause {
    /// [`Pause::delay_ms`] as a `Duration` (what the sleep is given).
    pub fn wait(&self) -> Duration {
        // (delays are clamped, finite and >= 0; no `from_secs_f64`, whose
        // panic message would cost wasm users its formatting)
        Duration::from_nanos((self.delay_ms * 1e6) as u64)
    }
}

/// How a call of [`Retry::drive`] ended: why, after how many attempts,
/// and the last attempt's outcome (the call's answer).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Done<O> {
    /// The policy's [`Verdict::Stop`] reason, or the timing's:
    /// [`End::Exhausted`], [`End::RetryAfter`] or [`End::Deadline`].
    pub end: End,
    /// Attempts made, the first included.
    pub attempts: u32,
    /// The last attempt's outcome.
    pub last: O,
}

/// What the core cannot read by itself, asked for only when needed: the
/// time for [`Retry::deadline`] (a `Source<f64>`: ms from any fixed origin
/// — `Instant`-based natively, `Date.now` in a browser, a test's virtual
/// clock) and the jitter's seed for [`Retry::seed_with`] (a `Source<u64>`,
/// asked at the first retry only: most calls succeed at once and need
/// none). A closure `FnMut() -> T` is one, and a `u64` is a fixed seed.
/// Types rather than values, so that a program does not carry what it
/// does not use (the core reads no clock, which panics on
/// wasm32-unknown-unknown; std's random keys cost wasm a kilobyte).
///
/// ```
/// use wasm_backoff_core::retry::*;
/// assert_eq!(Source::<u64>::get(&mut 7u64), 7);
/// assert_eq!(Source::get(&mut || 1.5), 1.5);
/// ```
pub trait Source<T> {
    /// The value now.
    fn get(&mut self) -> T;
}

impl<T, F: FnMut() -> T> Source<T> for F {
    fn get(&mut self) -> T {
        self()
    }
}

impl Source<u64> for u64 {
    fn get(&mut self) -> u64 {
        *self
    }
}

/// No clock (the default): without [`Retry::deadline`] there is nothing to
/// measure.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoClock;

impl Source<f64> for NoClock {
    fn get(&mut self) -> f64 {
        0.0
    }
}

/// A seed from std's per-process random keys (the default). Not random on
/// wasm32-unknown-unknown, which has no such keys: there, give
/// [`Retry::seed_with`] the platform's entropy (e.g.
/// `crate::entropy_seed`, feature `getrandom`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RandomSeed;

impl Source<u64> for RandomSeed {
    fn get(&mut self) -> u64 {
        use std::hash::{BuildHasher, Hasher};
        std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish()
    }
}

/// The schedule and the timing limits: everything the loop needs besides
/// the operation and the policy.
#[derive(Clone, Debug)]
struct Plan<C, R> {
    cfg: Config,
    seed: R,
    max_retry_after_ms: f64,
    max_elapsed_ms: f64,
    clock: C,
}

impl<C, R> Plan<C, R> {
    /// The same plan with another clock or seed source (`f` maps the old
    /// ones to the new).
    fn swap<C2, R2>(self, f: impl FnOnce(C, R) -> (C2, R2)) -> Plan<C2, R2> {
        let (clock, seed) = f(self.clock, self.seed);
        Plan {
            cfg: self.cfg,
            seed,
            max_retry_after_ms: self.max_retry_after_ms,
            max_elapsed_ms: self.max_elapsed_ms,
            clock,
        }
    }
}

/// An operation to retry, with its schedule, its error filter (or policy)
/// and its observer; made by [`retry`].
///
/// ```
/// use wasm_backoff_core::retry::*;
/// use wasm_backoff_core::{Config, Jitter};
/// let r: Result<u8, ()> = retry(|| Ok(1)).call();
/// assert_eq!(r, Ok(1));
/// ```
#[derive(Clone, Debug)]
pub struct Retry<Op, W = Always, N = Silent, C = NoClock, R = RandomSeed> {
    op: Op,
    when: W,
    notify: N,
    plan: Plan<C, R>,
}

/// Retries `op` on the default schedule (exponential, full jitter, 100 ms,
/// factor 2, cap 20 s, **no attempt limit**: set one with [`Retry::with`]),
/// every error being retryable, until it succeeds.
///
/// ```
/// use wasm_backoff_core::retry::*;
/// use wasm_backoff_core::{Config, Jitter};
/// let mut n = 0;
/// let r: Result<u8, ()> = retry(|| { n += 1; if n < 2 { Err(()) } else { Ok(n) } })
///     .with(Config::new().base_ms(0.0))
///     .call();
/// assert_eq!(r, Ok(2));
/// ```
pub fn retry<Op>(op: Op) -> Retry<Op> {
    Retry {
        op,
        when: Always,
        notify: Silent,
        plan: Plan {
            cfg: Config::new(),
            seed: RandomSeed,
            max_retry_after_ms: DEFAULT_MAX_RETRY_AFTER_MS,
            max_elapsed_ms: f64::INFINITY,
            clock: NoClock,
        },
    }
}

impl<Op, W, N, C, R> Retry<Op, W, N, C, R> {
    /// The schedule (a [`Config`], e.g. a [`crate::Preset`]'s).
    ///
    /// # Panics
    /// When `cfg` is invalid (the message names the option): a schedule is
    /// the program's own, not input (else see [`Retry::try_with`]).
    ///
    /// ```
    /// use wasm_backoff_core::retry::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let r: Result<(), ()> = retry(|| Err(())).with(Config::new().base_ms(0.0).max_attempts(Some(3))).call();
    /// assert_eq!(r, Err(()));
    /// ```
    pub fn with(self, cfg: Config) -> Self {
        match self.try_with(cfg) {
            Ok(r) => r,
            Err(e) => panic!("invalid retry schedule: {}", e.message()),
        }
    }

    /// The schedule, when it comes from input: an invalid one is the
    /// error [`Config::validate`] names, rather than a panic.
    ///
    /// ```
    /// use wasm_backoff_core::retry::*;
    /// use wasm_backoff_core::Config;
    /// assert!(retry(|| Ok::<(), ()>(())).try_with(Config::new().base_ms(-1.0)).is_err());
    /// ```
    pub fn try_with(mut self, cfg: Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        self.plan.cfg = cfg;
        Ok(self)
    }

    /// A fixed seed for the jitter (reproducible waits); by default each
    /// run draws one from std's per-process random keys.
    ///
    /// ```
    /// use wasm_backoff_core::retry::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let waits = |seed| {
    ///     let mut w = Vec::new();
    ///     let _: Result<(), ()> = retry(|| Err(())).with(Config::new().base_ms(0.01).max_attempts(Some(3))).seed(seed)
    ///         .notify(|_: &(), d: std::time::Duration| w.push(d)).call();
    ///     w
    /// };
    /// assert_eq!(waits(5), waits(5));
    /// ```
    pub fn seed(self, seed: u64) -> Retry<Op, W, N, C, u64> {
        self.seed_with(seed)
    }

    /// The jitter's seed from `source` (a [`Source<u64>`]: a function
    /// `FnMut() -> u64`, or a `u64`), asked at the first retry only (most
    /// calls succeed at once and need none): where std's random keys are
    /// not random (wasm32-unknown-unknown has none: give it
    /// `crypto.getRandomValues`, e.g. through `entropy_seed`, feature
    /// `getrandom`).
    ///
    /// ```
    /// use wasm_backoff_core::retry::*;
    /// use wasm_backoff_core::Config;
    /// let r: Result<u8, ()> = retry(|| Ok(1)).seed_with(|| unreachable!("no retry, no seed")).call();
    /// assert_eq!(r, Ok(1));
    /// ```
    pub fn seed_with<R2: Source<u64>>(self, source: R2) -> Retry<Op, W, N, C, R2> {
        self.replan(|plan| plan.swap(|clock, _| (clock, source)))
    }

    /// A longer wait named by the server ([`Verdict::Retry`]'s `hint_ms`) is
    /// not waited for: the call ends with [`End::RetryAfter`] and that
    /// attempt's outcome. Default [`DEFAULT_MAX_RETRY_AFTER_MS`] (60 s).
    ///
    /// # Panics
    /// When `ms` is not a number >= 0 (infinity: no maximum).
    ///
    /// ```
    /// use wasm_backoff_core::retry::*;
    /// let r: Result<u8, ()> = retry(|| Ok(1)).max_retry_after_ms(5_000.0).call();
    /// assert_eq!(r, Ok(1));
    /// ```
    pub fn max_retry_after_ms(mut self, ms: f64) -> Self {
        assert!(ms >= 0.0, "max_retry_after_ms must be a number >= 0");
        self.plan.max_retry_after_ms = ms;
        self
    }

    /// A deadline for the whole call, attempts and waits included, read on
    /// `clock` from the moment the call starts: a wait that would end past
    /// it is not started, the call ends with [`End::Deadline`] and the last
    /// outcome (as [`crate::policy::timing`] says). Cutting an attempt in
    /// flight short is the operation's business. Unlike
    /// [`Config::max_elapsed_ms`] (the sum of the waits), this is the
    /// clock's time. Default: none.
    ///
    /// # Panics
    /// When `max_elapsed_ms` is not a number >= 0 (infinity: none).
    ///
    /// ```
    /// use wasm_backoff_core::retry::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let t0 = std::time::Instant::now();
    /// let r: Result<(), &str> = retry(|| Err("busy"))
    ///     .with(Config::new().base_ms(1_000.0).jitter(Jitter::None))
    ///     .deadline(500.0, move || t0.elapsed().as_secs_f64() * 1e3)
    ///     .call(); // the first wait (1 s) would end past 500 ms: not started
    /// assert_eq!(r, Err("busy"));
    /// assert!(t0.elapsed().as_millis() < 500);
    /// ```
    pub fn deadline<C2: Source<f64>>(
        self,
        max_elapsed_ms: f64,
        clock: C2,
    ) -> Retry<Op, W, N, C2, R> {
        assert!(
            max_elapsed_ms >= 0.0,
            "max_elapsed_ms must be a number >= 0"
        );
        self.replan(|plan| Plan {
            max_elapsed_ms,
            ..plan.swap(|_, seed| (clock, seed))
        })
    }

    /// The same call with another plan (for the builders that change its
    /// clock's or its seed's type).
    fn replan<C2, R2>(self, f: impl FnOnce(Plan<C, R>) -> Plan<C2, R2>) -> Retry<Op, W, N, C2, R2> {
        Retry {
            op: self.op,
            when: self.when,
            notify: self.notify,
            plan: f(self.plan),
        }
    }

    /// Only the errors for which `when` is true are retried; the others are
    /// returned at once.
    ///
    /// ```
    /// use wasm_backoff_core::retry::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let mut n = 0;
    /// let r: Result<(), &str> = retry(|| { n += 1; Err("fatal") }).when(|e: &&str| *e != "fatal").call();
    /// assert_eq!((r, n), (Err("fatal"), 1));
    /// ```
    pub fn when<W2>(self, when: W2) -> Retry<Op, W2, N, C, R> {
        Retry {
            op: self.op,
            when,
            notify: self.notify,
            plan: self.plan,
        }
    }

    /// The [`Policy`] of [`Retry::drive`]: it judges every outcome (in
    /// place of [`Retry::when`]) and is told of every wait (in place of
    /// [`Retry::notify`]).
    ///
    /// ```
    /// use wasm_backoff_core::policy::End;
    /// use wasm_backoff_core::retry::*;
    /// let r = retry(|_attempt: u32| async { 200 })
    ///     .policy(|_: u32, s: &u16| Verdict::Stop(if *s < 400 { End::Success } else { End::NotRetryable }));
    /// # let _ = r;
    /// ```
    pub fn policy<P>(self, policy: P) -> Retry<Op, P, N, C, R> {
        self.when(policy)
    }

    /// `notify(error, wait)` is called before each wait (to log it).
    ///
    /// ```
    /// use wasm_backoff_core::retry::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let mut told = 0;
    /// let _: Result<(), ()> = retry(|| Err(())).with(Config::new().base_ms(0.0).max_attempts(Some(3)))
    ///     .notify(|_: &(), _| told += 1).call();
    /// assert_eq!(told, 2);
    /// ```
    pub fn notify<N2>(self, notify: N2) -> Retry<Op, W, N2, C, R> {
        Retry {
            op: self.op,
            when: self.when,
            notify,
            plan: self.plan,
        }
    }
}

impl<Op, W, N, C: Source<f64>, R: Source<u64>> Retry<Op, W, N, C, R> {
    /// Runs the async operation until it succeeds, fails with an error that
    /// is not retryable, or the schedule (or the deadline) gives up (then
    /// its last error), waiting with `sleep` between tries
    /// (`tokio::time::sleep` …).
    pub async fn run<T, E, Fut, S, SF>(mut self, mut sleep: S) -> Result<T, E>
    where
        Op: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        W: When<E>,
        N: Notify<E>,
        S: FnMut(Duration) -> SF,
        SF: Future<Output = ()>,
    {
        let op = &mut self.op;
        let mut filter = Filter(&mut self.when, &mut self.notify);
        let sleep = |d| {
            let slept = sleep(d);
            async {
                slept.await;
                Ok::<(), Infallible>(())
            }
        };
        match self.plan.run(|_| op(), &mut filter, sleep).await {
            Ok(done) => done.last,
            Err(never) => match never {},
        }
    }

    /// Runs the blocking operation the same way, sleeping the thread between
    /// tries.
    ///
    /// ```
    /// use wasm_backoff_core::retry::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let r: Result<&str, ()> = retry(|| Ok("done")).call();
    /// assert_eq!(r, Ok("done"));
    /// ```
    pub fn call<T, E>(mut self) -> Result<T, E>
    where
        Op: FnMut() -> Result<T, E>,
        W: When<E>,
        N: Notify<E>,
    {
        let op = &mut self.op;
        let mut filter = Filter(&mut self.when, &mut self.notify);
        let sleep = |d| {
            std::thread::sleep(d);
            ready(Ok::<(), Infallible>(()))
        };
        match block_on(self.plan.run(|_| ready(op()), &mut filter, sleep)) {
            Ok(done) => done.last,
            Err(never) => match never {},
        }
    }
}

impl<Op, P, C: Source<f64>, R: Source<u64>> Retry<Op, P, Silent, C, R> {
    /// Runs the async operation under its [`Policy`] (see
    /// [`Retry::policy`]): `op(attempt)` (1 = the first try) gives an
    /// outcome of any type, the policy judges it, the schedule and the
    /// timing rules ([`Retry::max_retry_after_ms`], [`Retry::deadline`])
    /// time the wait, and `sleep` waits — or fails (an abort: the
    /// caller's signal, a deadline timer), which ends the call with its
    /// error. Otherwise the call ends with [`Done`]: why, and the last
    /// outcome.
    ///
    /// ```
    /// use wasm_backoff_core::policy::End;
    /// use wasm_backoff_core::retry::*;
    /// use wasm_backoff_core::{Config, Jitter};
    ///
    /// #[tokio::main(flavor = "current_thread")]
    /// async fn main() {
    ///     // Stands for HTTP statuses: 503 twice, the second naming a wait of 250 ms.
    ///     let answers = [(503, None), (503, Some(250.0)), (200, None)];
    ///     let done = retry(|attempt: u32| async move { answers[attempt as usize - 1] })
    ///         .with(Config::new().base_ms(10.0).jitter(Jitter::None).max_attempts(Some(5)))
    ///         .policy(|_: u32, &(status, hint): &(u16, Option<f64>)| match status {
    ///             503 => Verdict::Retry { hint_ms: hint }, // the server's wait lifts the delay
    ///             _ => Verdict::Stop(End::Success),
    ///         })
    ///         .drive(|wait| async move {
    ///             tokio::time::sleep(wait).await;
    ///             Ok::<(), &str>(()) // or Err(reason): an abort ends the call
    ///         })
    ///         .await
    ///         .unwrap();
    ///     assert_eq!((done.end, done.attempts, done.last.0), (End::Success, 3, 200));
    /// }
    /// ```
    pub async fn drive<O, Fut, S, SF, X>(mut self, sleep: S) -> Result<Done<O>, X>
    where
        Op: FnMut(u32) -> Fut,
        Fut: Future<Output = O>,
        P: Policy<O>,
        S: FnMut(Duration) -> SF,
        SF: Future<Output = Result<(), X>>,
    {
        self.plan.run(&mut self.op, &mut self.when, sleep).await
    }
}

impl<C: Source<f64>, R: Source<u64>> Plan<C, R> {
    /// The retry loop — the only one: [`Retry::run`], [`Retry::call`] and
    /// [`Retry::drive`] all come here (and so does the web crate's
    /// `fetch_with_backoff`), so a rule is written once. An attempt, the
    /// policy's verdict, the timing of the wait, the notice, the sleep.
    async fn run<O, Fut, P, S, SF, X>(
        &mut self,
        mut op: impl FnMut(u32) -> Fut,
        policy: &mut P,
        mut sleep: S,
    ) -> Result<Done<O>, X>
    where
        Fut: Future<Output = O>,
        P: Policy<O>,
        S: FnMut(Duration) -> SF,
        SF: Future<Output = Result<(), X>>,
    {
        let start = self.clock.get();
        // Made at the first retry: most calls succeed at once and need no seed.
        let mut backoff = None;
        let mut attempt: u32 = 0;
        loop {
            attempt = attempt.saturating_add(1);
            let last = op(attempt).await;
            let end = match policy.verdict(attempt, &last) {
                Verdict::Stop(end) => end,
                Verdict::Retry { hint_ms } => {
                    let base = policy.base(attempt, &last);
                    let choice = |p| policy.delay(attempt, &last, p, hint_ms);
                    match self.pause(&mut backoff, attempt, hint_ms, base, start, choice) {
                        Ok(pause) => {
                            policy.notify(&last, &pause);
                            drop(last); // (not held across the sleep)
                            sleep(pause.wait()).await?;
                            continue;
                        }
                        Err(end) => end,
                    }
                }
            };
            return Ok(Done {
                end,
                attempts: attempt,
                last,
            });
        }
    }

    /// The wait before the retry of `attempt`, or why there is none: the
    /// schedule's next delay (on the policy's `base` when it names one,
    /// lifted to the server's `hint_ms`), then the core's delay rules
    /// (exhausted, the server's wait too long, the policy's `choice`, past
    /// the deadline: [`crate::policy::wait`]).
    fn pause(
        &mut self,
        backoff: &mut Option<Backoff<DefaultRng>>,
        attempt: u32,
        hint_ms: Option<f64>,
        base: Option<f64>,
        start: f64,
        choice: impl FnOnce(f64) -> Choice,
    ) -> Result<Pause, End> {
        let b = match backoff {
            Some(b) => b,
            None => backoff.insert(self.schedule()),
        };
        // (a base that is no wait, NaN or negative, is ignored: the schedule's own)
        let d = match base.filter(|on| on.is_finite() && *on >= 0.0) {
            Some(on) => b.next_delay_on(on),
            None => b.next_delay(),
        };
        let delay_ms = d.map(|d| hint_ms.map_or(d, |h| b.with_hint(d, h)));
        let w = Wait {
            delay_ms,
            hint_ms,
            max_retry_after_ms: self.max_retry_after_ms,
            elapsed_ms: self.clock.get() - start,
            max_elapsed_ms: self.max_elapsed_ms,
        };
        wait(&w, choice).map(|delay_ms| Pause {
            attempt,
            delay_ms,
            hint_ms,
        })
    }

    fn schedule(&mut self) -> Backoff<DefaultRng> {
        let seed = self.seed.get();
        // Validated by `with`/`try_with` (or the defaults): cannot fail.
        // (No `expect`: its `Debug` of the error would cost wasm users.)
        let Ok(backoff) = Backoff::new(self.cfg, seeded_rng(seed)) else {
            unreachable!()
        };
        backoff
    }
}

/// Polls a future whose every step is ready at once ([`Retry::call`]'s:
/// its operation and its sleep block the thread) to its end.
fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}
