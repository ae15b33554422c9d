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
//! On tokio (the README's "From Rust" example, word for word: a test of
//! the web crate, `web/tests/readme.rs`, checks that they agree):
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

use crate::{seeded_rng, Backoff, Config, DefaultRng};
use std::future::Future;
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

/// An operation to retry, with its schedule, its error filter and its
/// observer; made by [`retry`].
///
/// ```
/// use wasm_backoff_core::retry::*;
/// use wasm_backoff_core::{Config, Jitter};
/// let r: Result<u8, ()> = retry(|| Ok(1)).call();
/// assert_eq!(r, Ok(1));
/// ```
#[derive(Clone, Debug)]
pub struct Retry<Op, W = Always, N = Silent> {
    op: Op,
    cfg: Config,
    seed: Option<u64>,
    when: W,
    notify: N,
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
        cfg: Config::new(),
        seed: None,
        when: Always,
        notify: Silent,
    }
}

impl<Op, W, N> Retry<Op, W, N> {
    /// The schedule (a [`Config`], e.g. a [`crate::Preset`]'s).
    ///
    /// # Panics
    /// When `cfg` is invalid (the message names the option): a schedule is
    /// the program's own, not input.
    ///
    /// ```
    /// use wasm_backoff_core::retry::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let r: Result<(), ()> = retry(|| Err(())).with(Config::new().base_ms(0.0).max_attempts(Some(3))).call();
    /// assert_eq!(r, Err(()));
    /// ```
    pub fn with(mut self, cfg: Config) -> Self {
        if let Err(e) = cfg.validate() {
            panic!("invalid retry schedule: {}", e.message());
        }
        self.cfg = cfg;
        self
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
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
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
    pub fn when<W2>(self, when: W2) -> Retry<Op, W2, N> {
        Retry {
            op: self.op,
            cfg: self.cfg,
            seed: self.seed,
            when,
            notify: self.notify,
        }
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
    pub fn notify<N2>(self, notify: N2) -> Retry<Op, W, N2> {
        Retry {
            op: self.op,
            cfg: self.cfg,
            seed: self.seed,
            when: self.when,
            notify,
        }
    }

    fn schedule(&self) -> Backoff<DefaultRng> {
        let seed = self.seed.unwrap_or_else(|| {
            use std::hash::{BuildHasher, Hasher};
            std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish()
        });
        // Validated by `with` (or the defaults): cannot fail.
        Backoff::new(self.cfg, seeded_rng(seed)).expect("a validated schedule")
    }

    /// What to do after `error`: the wait before the next try, or `None` to
    /// return it (not retryable, or the schedule gave up).
    fn after<E>(&mut self, backoff: &mut Backoff<DefaultRng>, error: &E) -> Option<Duration>
    where
        W: When<E>,
        N: Notify<E>,
    {
        if !self.when.retryable(error) {
            return None;
        }
        let wait = Duration::from_secs_f64(backoff.next_delay()? / 1000.0);
        self.notify.notify(error, wait);
        Some(wait)
    }

    /// Runs the async operation until it succeeds, fails with an error that
    /// is not retryable, or the schedule gives up (then its last error),
    /// waiting with `sleep` between tries (`tokio::time::sleep` …).
    pub async fn run<T, E, Fut, S, SF>(mut self, mut sleep: S) -> Result<T, E>
    where
        Op: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        W: When<E>,
        N: Notify<E>,
        S: FnMut(Duration) -> SF,
        SF: Future<Output = ()>,
    {
        let mut backoff = self.schedule();
        loop {
            match (self.op)().await {
                Ok(v) => return Ok(v),
                Err(e) => match self.after(&mut backoff, &e) {
                    Some(wait) => sleep(wait).await,
                    None => return Err(e),
                },
            }
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
        let mut backoff = self.schedule();
        loop {
            match (self.op)() {
                Ok(v) => return Ok(v),
                Err(e) => match self.after(&mut backoff, &e) {
                    Some(wait) => std::thread::sleep(wait),
                    None => return Err(e),
                },
            }
        }
    }
}
