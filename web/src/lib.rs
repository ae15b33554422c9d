//! `fetch` with retries for Rust web apps compiled to `wasm32-unknown-unknown`
//! (Leptos, Yew, Dioxus, plain `wasm-bindgen`): the semantics of the
//! JavaScript package's `fetchWithBackoff`, with the schedule, the jitter
//! and the reading of `Retry-After` and rate-limit headers
//! ([`wasm_backoff_core::server_wait`]) of [`wasm_backoff_core`].
//!
//! [`fetch_with_backoff`] resolves with the [`web_sys::Response`] whatever its
//! status (after the last attempt, the last response), and fails only where
//! `fetch` would (a network error or a timeout after the last attempt, a
//! request `fetch` refuses), when the [`Options::signal`] aborts, when the
//! [`Options::max_elapsed_ms`] deadline passes, or for invalid options.
//!
//! ```no_run
//! use std::{cell::Cell, rc::Rc};
//! use wasm_backoff_core::Config;
//! use wasm_backoff_web::{fetch_with_backoff, FetchError, Options};
//! use web_sys::{Request, Response};
//!
//! async fn load(url: &str, retries: Rc<Cell<u32>>) -> Result<Response, FetchError> {
//!     let request = Request::new_with_str(url).map_err(FetchError::InvalidRequest)?;
//!     let options = Options::new()
//!         .config(Config::new().base_ms(200.0).max_attempts(Some(4)))
//!         .timeout_ms(5_000.0) // per attempt (until the headers); a timeout is retried
//!         .max_elapsed_ms(20_000.0) // the whole call, waits included: else FetchError::Deadline
//!         .max_retry_after_ms(30_000.0) // a longer Retry-After: that response, at once
//!         // Some(true) forces a retry, Some(false) vetoes one, None keeps the rule.
//!         .should_retry(|attempt| (attempt.status == Some(409)).then_some(true))
//!         .on_retry(move |info| retries.set(info.attempt)); // e.g. show "retrying…"
//!     // Any status comes back as the Response (after the last attempt, the last one).
//!     fetch_with_backoff(&request, &options).await
//! }
//! ```
//!
//! (The example needs a JavaScript host: a browser, a worker or Node. It is
//! the "From Rust" example of docs/rust.md, word for word: `xtask/tests/readme.rs`
//! checks that they agree.)
//!
//! ## What is retried
//!
//! - network failures: `fetch` rejected with an error whose message is a
//!   runtime's wording of one ([`wasm_backoff_core::is_network_error`], the
//!   list the JavaScript package reads too), and attempts that outlived
//!   [`Options::timeout_ms`]; any other rejection (a request `fetch` refuses
//!   to send, a fetch function that throws) is returned at once as
//!   [`FetchError::InvalidRequest`], since trying again would fail the same way;
//! - the [`Options::retry_on`] statuses, and 413, 429 and 503
//!   ([`SERVER_WAIT_STATUSES`]) whenever the server named a wait, even when
//!   [`Options::retry_on`] leaves them out;
//! - only for idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE, TRACE,
//!   QUERY), unless [`Options::retry_non_idempotent`] is set or the request
//!   carries an `Idempotency-Key` header;
//! - unless [`Options::should_retry`] decides otherwise, either way;
//! - each attempt sends `Request::clone(request)` (JavaScript's `request.clone()`), so a body is sent again.
//!
//! The wait before a retry is the schedule's next delay, lifted to the wait
//! the server named when it named one (with a little jitter above it, see
//! [`wasm_backoff_core::Backoff::with_hint`]): the first of
//! [`wasm_backoff_core::SERVER_WAIT_HEADERS`] that names one
//! (`retry-after-ms` before `Retry-After`, then `ratelimit`,
//! `x-ratelimit-reset`, …; read by [`wasm_backoff_core::server_wait`], as
//! the JavaScript package reads them). A named wait above [`Options::max_retry_after_ms`], or a wait that
//! would end past [`Options::max_elapsed_ms`], is not started: that
//! response is returned at once (or that attempt's error). Cross-origin, a
//! browser shows these headers only when the server lists them in
//! `Access-Control-Expose-Headers`. When the schedule gives up, the last
//! response (or the last attempt's error) is returned. Responses of
//! attempts that are retried are cancelled (their body streams), so their
//! connections are freed.
//!
//! ## Timeouts
//!
//! [`Options::timeout_ms`] bounds each attempt until its response's headers
//! (an `AbortController` per attempt); [`Options::max_elapsed_ms`] bounds the
//! whole call, attempts and waits, and aborts the attempt in flight. Both
//! abort with a `TimeoutError` `DOMException`, as the JavaScript package
//! does. Their timers are cleared when the attempt (or the call) ends,
//! however it ends: after the call, the caller's signal alone governs the
//! returned response's body, as with plain `fetch`.
//!
//! `fetch`, `setTimeout`, `clearTimeout` and `AbortSignal.any` are the
//! JavaScript globals, never `window`'s, so this works in pages, workers
//! and Node alike.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod idle;

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use js_sys::{Array, Function, JsString, Promise};
use wasm_backoff_core::policy::{
    End, Facts, IDEMPOTENT_METHODS, Request as PolicyRequest, SHOULD_RETRY_HEADER, advice, choose,
    honoured, idempotent, throttled, verdict,
};
use wasm_backoff_core::retry::{Pause, Policy, Verdict, retry};
use wasm_backoff_core::{
    Config, ConfigError, MAX_DELAY_MS, SERVER_WAIT_HEADERS, entropy_seed, is_network_error,
    server_wait,
};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AbortSignal, Request, RequestInit, Response};

#[wasm_bindgen]
extern "C" {
    /// The global `fetch` (pages, workers, Node ≥ 18).
    #[wasm_bindgen(catch)]
    fn fetch(input: &Request, init: &RequestInit) -> Result<Promise, JsValue>;
    /// The global `setTimeout`: a number in browsers, a `Timeout` object in Node.
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &Function, timeout: f64) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(handle: &JsValue);
    /// `AbortSignal.any` (Chromium 116, Firefox 124, Safari 17.4, Node 20.3).
    #[wasm_bindgen(js_namespace = AbortSignal, js_name = any, catch)]
    fn abort_signal_any(signals: &Array) -> Result<AbortSignal, JsValue>;
    /// `new DOMException(message, name)`.
    #[wasm_bindgen(js_name = DOMException)]
    type DomException;
    #[wasm_bindgen(constructor, js_class = DOMException, catch)]
    fn new(message: &JsString, name: &str) -> Result<DomException, JsValue>;
    /// `String(value)`: throws for an object without a string conversion.
    #[wasm_bindgen(js_name = String, catch)]
    fn js_string(value: &JsValue) -> Result<JsString, JsValue>;
}

/// The retry policy's lists and defaults: the core's (`wasm_backoff_core::policy`),
/// which the npm package follows too.
pub use wasm_backoff_core::policy::{
    Choice, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_RETRY_AFTER_MS, DEFAULT_RETRY_ON,
    DEFAULT_THROTTLE_BASE_FACTOR, SERVER_WAIT_STATUSES, THROTTLE_STATUSES,
};

/// What [`Options::on_retry`] is told before each wait.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RetryInfo {
    /// The attempt that just failed (1 = the first try).
    pub attempt: u32,
    /// The wait about to start, in ms (at least `retry_after_ms` when the
    /// server named one).
    pub delay_ms: f64,
    /// The failed attempt's HTTP status, when it got a response.
    pub status: Option<u16>,
    /// The failed attempt's response (its body is cancelled after the
    /// callback returns: read a `clone()` of it, if anything).
    pub response: Option<Response>,
    /// The failed attempt's error, when it got no response: the value
    /// `fetch` rejected with, or the `TimeoutError` of [`Options::timeout_ms`].
    pub error: Option<JsValue>,
    /// The wait the server named, in ms: its `Retry-After`, else a
    /// rate-limit header's (see the [crate documentation](crate)).
    pub retry_after_ms: Option<f64>,
}

/// What [`Options::should_retry`] is asked about: an attempt that ended
/// (with a response of any status, or an error), before the rule decides.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AttemptInfo {
    /// The attempt (1 = the first try).
    pub attempt: u32,
    /// Its HTTP status, when it got a response.
    pub status: Option<u16>,
    /// Its response (read a `clone()` of it to look at the body: the
    /// response itself is returned, or cancelled when it is retried).
    pub response: Option<Response>,
    /// Its error, when it got no response: the value `fetch` rejected with
    /// (a network failure or another error), or the `TimeoutError` of
    /// [`Options::timeout_ms`].
    pub error: Option<JsValue>,
    /// The wait the server named, in ms, for a status of 400 or more.
    pub retry_after_ms: Option<f64>,
}

/// What [`Options::delay`] is asked about: an attempt that will be retried,
/// and the wait the schedule proposes.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DelayInfo {
    /// The attempt that failed (1 = the first try).
    pub attempt: u32,
    /// Its HTTP status, when it got a response.
    pub status: Option<u16>,
    /// Its response (read a `clone()` of it: the response is cancelled
    /// when the retry goes).
    pub response: Option<Response>,
    /// Its error, when it got no response.
    pub error: Option<JsValue>,
    /// The wait the server named, in ms.
    pub retry_after_ms: Option<f64>,
    /// The schedule's proposal, in ms (its next delay, lifted to the
    /// server's wait when it named one).
    pub delay_ms: f64,
}

type OnRetry = Rc<RefCell<dyn FnMut(&RetryInfo)>>;
type Delay = Rc<RefCell<dyn FnMut(&DelayInfo) -> Choice>>;
type ShouldRetry = Rc<RefCell<dyn FnMut(&AttemptInfo) -> Option<bool>>>;

/// The options of [`fetch_with_backoff`]: a builder; every setter has a
/// documented default, so `Options::new()` (or `Options::default()`) is ready
/// to use. Cloning shares the callbacks.
#[derive(Clone)]
pub struct Options {
    config: Config,
    retry_on: Vec<u16>,
    retry_non_idempotent: bool,
    max_retry_after_ms: f64,
    clamp_retry_after: bool,
    throttle_base_ms: Option<f64>,
    timeout_ms: Option<f64>,
    idle_timeout_ms: Option<f64>,
    max_elapsed_ms: Option<f64>,
    seed: Option<u64>,
    signal: Option<AbortSignal>,
    should_retry: Option<ShouldRetry>,
    on_retry: Option<OnRetry>,
    delay: Option<Delay>,
}

impl Default for Options {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("config", &self.config)
            .field("retry_on", &self.retry_on)
            .field("retry_non_idempotent", &self.retry_non_idempotent)
            .field("max_retry_after_ms", &self.max_retry_after_ms)
            .field("clamp_retry_after", &self.clamp_retry_after)
            .field("throttle_base_ms", &self.throttle_base_ms)
            .field("timeout_ms", &self.timeout_ms)
            .field("idle_timeout_ms", &self.idle_timeout_ms)
            .field("max_elapsed_ms", &self.max_elapsed_ms)
            .field("seed", &self.seed)
            .field("signal", &self.signal.is_some())
            .field("should_retry", &self.should_retry.is_some())
            .field("on_retry", &self.on_retry.is_some())
            .field("delay", &self.delay.is_some())
            .finish()
    }
}

impl Options {
    /// The defaults: the core's [`Config::new`] (exponential, full jitter,
    /// base 100 ms, factor 2, cap 20 s) with at most
    /// [`DEFAULT_MAX_ATTEMPTS`] (5) tries; [`DEFAULT_RETRY_ON`]; idempotent
    /// methods only; `Retry-After` up to [`DEFAULT_MAX_RETRY_AFTER_MS`]
    /// (60 s); a 429, a 503 or a 529 waits on 10 × the schedule's base; no timeout,
    /// no deadline; a seed from the platform's entropy; no signal, no
    /// callbacks.
    pub fn new() -> Self {
        Options {
            config: Config::new().max_attempts(Some(DEFAULT_MAX_ATTEMPTS)),
            retry_on: DEFAULT_RETRY_ON.to_vec(),
            retry_non_idempotent: false,
            max_retry_after_ms: DEFAULT_MAX_RETRY_AFTER_MS,
            clamp_retry_after: false,
            throttle_base_ms: None,
            timeout_ms: None,
            idle_timeout_ms: None,
            max_elapsed_ms: None,
            seed: None,
            signal: None,
            should_retry: None,
            on_retry: None,
            delay: None,
        }
    }

    /// The schedule, used as given: its [`Config::max_attempts`] (total
    /// tries, `None` = no limit) and [`Config::max_elapsed_ms`] (the sum of
    /// the waits, unlike [`Options::max_elapsed_ms`]) are the limits.
    /// Default: `Config::new().max_attempts(Some(5))`. An invalid config
    /// makes [`fetch_with_backoff`] fail with [`FetchError::InvalidConfig`]
    /// before any attempt.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// The statuses to retry (network failures and timeouts are always
    /// retried, and [`SERVER_WAIT_STATUSES`] when the server names a wait).
    /// Default [`DEFAULT_RETRY_ON`]: 408, 429, 500, 502, 503, 504, 521, 522, 529.
    pub fn retry_on(mut self, statuses: &[u16]) -> Self {
        self.retry_on = statuses.to_vec();
        self
    }

    /// Retry POST, PATCH and other non-idempotent methods too (they are
    /// retried anyway when the request has an `Idempotency-Key` header).
    /// Default `false`.
    pub fn retry_non_idempotent(mut self, yes: bool) -> Self {
        self.retry_non_idempotent = yes;
        self
    }

    /// A longer wait named by the server (`Retry-After` or a rate-limit
    /// header, in ms) is not waited for: that response is returned at once.
    /// Default [`DEFAULT_MAX_RETRY_AFTER_MS`] (60 000). A number ≥ 0
    /// (infinity: no maximum), else [`FetchError::InvalidOption`].
    pub fn max_retry_after_ms(mut self, ms: f64) -> Self {
        self.max_retry_after_ms = ms;
        self
    }

    /// A server-named wait over [`Options::max_retry_after_ms`] is waited
    /// as that maximum (`true`: ky's and undici's rule, the npm package's
    /// `retryAfterOverMax: 'clamp'`) rather than ending the call with that
    /// response (`false`). Default `false`.
    pub fn clamp_retry_after(mut self, yes: bool) -> Self {
        self.clamp_retry_after = yes;
        self
    }

    /// The base (ms) of the wait after a throttled answer (a 429, 503 or 529,
    /// [`THROTTLE_STATUSES`], with or without a server-named wait): the
    /// schedule's next step is drawn on it instead of the config's
    /// `base_ms`, which transient failures keep (the AWS SDKs' two bases;
    /// the npm package's `throttleBaseMs`, by the same core rule). Default:
    /// [`DEFAULT_THROTTLE_BASE_FACTOR`] (10) × the config's `base_ms`, 1 s
    /// with the defaults. A finite number ≥ 0, else
    /// [`FetchError::InvalidOption`].
    pub fn throttle_base_ms(mut self, ms: f64) -> Self {
        self.throttle_base_ms = Some(ms);
        self
    }

    /// Each attempt may last `ms` until its response's headers arrive
    /// (reading the body is not timed): then it is aborted, and counts as a
    /// network failure, retried like one. When the last attempt times out,
    /// the call fails with [`FetchError::Timeout`]. Default: none. A
    /// number above 0 (infinity: none), else [`FetchError::InvalidOption`];
    /// a timer fires after at most 2^31 − 1 ms (24.8 days).
    pub fn timeout_ms(mut self, ms: f64) -> Self {
        self.timeout_ms = Some(ms);
        self
    }

    /// The returned response's body may go `ms` without a chunk while it is
    /// read (the clock runs only while a read is pending, and restarts at
    /// every chunk): then it errors with a `TimeoutError` `DOMException`.
    /// No timer outlives the body (its end, cancel or error). The
    /// response keeps its status, headers, `url` and `redirected`. The npm
    /// package's `idleTimeoutMs` (`wasm-backoff/stream`), by the same rule.
    /// Default: none. A number above 0 (infinity: none), else
    /// [`FetchError::InvalidOption`].
    pub fn idle_timeout_ms(mut self, ms: f64) -> Self {
        self.idle_timeout_ms = Some(ms);
        self
    }

    /// A hard deadline for the whole call, attempts and waits included,
    /// from the moment it starts: an attempt in flight when it passes is
    /// aborted and the call fails with [`FetchError::Deadline`]; a wait that
    /// would end past it is not started (the last response, or the last
    /// attempt's error, is returned instead). Unlike [`Config::max_elapsed_ms`]
    /// (the sum of the waits), this is wall-clock time. Default: none. A
    /// number ≥ 0 (infinity: none), else [`FetchError::InvalidOption`].
    pub fn max_elapsed_ms(mut self, ms: f64) -> Self {
        self.max_elapsed_ms = Some(ms);
        self
    }

    /// Seeds the jitter, making the waits reproducible (tests, demos).
    /// Default: a fresh seed per call from the platform
    /// ([`wasm_backoff_core::entropy_rng`]: `crypto.getRandomValues`).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Cancels the call: when `signal` aborts, the call fails at once with
    /// [`FetchError::Aborted`] carrying the signal's reason (the attempt in
    /// flight is aborted, a wait is cut short, no timer or listener is left
    /// behind). It also reaches the returned response's body, as with plain
    /// `fetch`. Default: the request's own signal.
    pub fn signal(mut self, signal: AbortSignal) -> Self {
        self.signal = Some(signal);
        self
    }

    /// Decides about each attempt that ended (a response of any status, or
    /// an error), before the rule does: `Some(true)` retries it (even a
    /// POST, a success or an error that is no network failure), `Some(false)`
    /// returns it, `None` leaves it to the rule (see the
    /// [crate documentation](crate)). The schedule's limits and the
    /// deadline still apply. Default: none (the rule alone).
    pub fn should_retry(mut self, f: impl FnMut(&AttemptInfo) -> Option<bool> + 'static) -> Self {
        self.should_retry = Some(Rc::new(RefCell::new(f)));
        self
    }

    /// Chooses the wait before each retry (the npm package's `delay`
    /// hook, on the core's rules: [`wasm_backoff_core::policy::wait`]):
    /// [`Choice::Keep`] the schedule's proposal ([`DelayInfo::delay_ms`]),
    /// [`Choice::Wait`] another (ms >= 0, else the call fails with
    /// [`FetchError::InvalidOption`]), or [`Choice::GiveUp`]: the call ends
    /// with this attempt's outcome. Asked only when a retry is wanted, the
    /// schedule has a delay left and the server's wait is within
    /// [`Options::max_retry_after_ms`]; [`Options::max_elapsed_ms`] then
    /// bounds the wait chosen. Default: none (the proposal).
    pub fn delay(mut self, f: impl FnMut(&DelayInfo) -> Choice + 'static) -> Self {
        self.delay = Some(Rc::new(RefCell::new(f)));
        self
    }

    /// Called before each wait, with what failed and how long the wait is.
    /// Default: none.
    pub fn on_retry(mut self, f: impl FnMut(&RetryInfo) + 'static) -> Self {
        self.on_retry = Some(Rc::new(RefCell::new(f)));
        self
    }

    /// The options checked before any attempt; the durations that are set,
    /// `None` for infinite ones.
    fn check(&self) -> Result<(Option<f64>, Option<f64>), FetchError> {
        self.config.validate().map_err(FetchError::InvalidConfig)?;
        let bad = |ms: f64, zero: bool| ms.is_nan() || ms < 0.0 || (!zero && ms == 0.0);
        if bad(self.max_retry_after_ms, true) {
            return Err(FetchError::InvalidOption(
                "max_retry_after_ms must be a number >= 0",
            ));
        }
        if self
            .throttle_base_ms
            .is_some_and(|ms| bad(ms, true) || ms.is_infinite())
        {
            return Err(FetchError::InvalidOption(
                "throttle_base_ms must be a finite number >= 0",
            ));
        }
        let finite = |ms: Option<f64>| ms.filter(|ms| ms.is_finite());
        if self.idle_timeout_ms.is_some_and(|ms| bad(ms, false)) {
            return Err(FetchError::InvalidOption(
                "idle_timeout_ms must be a number > 0",
            ));
        }
        match (self.timeout_ms, self.max_elapsed_ms) {
            (Some(ms), _) if bad(ms, false) => {
                Err(FetchError::InvalidOption("timeout_ms must be a number > 0"))
            }
            (_, Some(ms)) if bad(ms, true) => Err(FetchError::InvalidOption(
                "max_elapsed_ms must be a number >= 0",
            )),
            (timeout, deadline) => Ok((finite(timeout), finite(deadline))),
        }
    }
}

/// Why [`fetch_with_backoff`] failed. An HTTP error status is not an error:
/// it comes back as the `Response`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum FetchError {
    /// The last attempt's network failure (the value `fetch` rejected with,
    /// usually a `TypeError`), when the schedule gave up or the request is
    /// not retried.
    Network(JsValue),
    /// The last attempt outlived [`Options::timeout_ms`] (a `TimeoutError`
    /// `DOMException`), when the schedule gave up or the request is not
    /// retried.
    Timeout(JsValue),
    /// [`Options::max_elapsed_ms`] passed during an attempt or a wait (a
    /// `TimeoutError` `DOMException`).
    Deadline(JsValue),
    /// The signal aborted; its reason (an `AbortError` `DOMException` unless
    /// `abort()` was given one).
    Aborted(JsValue),
    /// The request could not be sent, and trying again would not help:
    /// `Request.clone()` threw (its body was already read), `fetch` is
    /// missing, or it failed with an error that is not a network failure
    /// (a request it refuses to send; a replaced `fetch` that throws). The
    /// value thrown; nothing was retried unless [`Options::should_retry`]
    /// said so.
    InvalidRequest(JsValue),
    /// [`Options::config`] was rejected by [`Config::validate`]; no attempt
    /// was made.
    InvalidConfig(ConfigError),
    /// An option is out of its range (the message names it, e.g.
    /// `timeout_ms must be a number > 0`); no attempt was made.
    InvalidOption(&'static str),
}

impl FetchError {
    /// The JavaScript value behind the error (what the JavaScript package
    /// would reject with); for a config or option error, its message as a
    /// string.
    pub fn as_js_value(&self) -> JsValue {
        match self {
            FetchError::Network(v)
            | FetchError::Timeout(v)
            | FetchError::Deadline(v)
            | FetchError::Aborted(v)
            | FetchError::InvalidRequest(v) => v.clone(),
            FetchError::InvalidConfig(e) => JsValue::from_str(e.message()),
            FetchError::InvalidOption(m) => JsValue::from_str(m),
        }
    }
}

/// A JavaScript value as text: a string itself, an `Error` as
/// `Name: message`, anything else through `String(value)` (`?` when even
/// that throws, as for an object without a prototype).
fn describe(v: &JsValue) -> String {
    if let Some(s) = v.as_string() {
        return s;
    }
    if let Some(e) = v.dyn_ref::<js_sys::Error>() {
        return String::from(e.to_string());
    }
    js_string(v)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| String::from("?"))
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // (two write_str, no format arguments: less wasm)
        let (what, detail) = match self {
            FetchError::Network(v) => ("network error: ", describe(v)),
            FetchError::Timeout(v) => ("timed out: ", describe(v)),
            FetchError::Deadline(v) => ("deadline passed: ", describe(v)),
            FetchError::Aborted(v) => ("aborted: ", describe(v)),
            FetchError::InvalidRequest(v) => ("invalid request: ", describe(v)),
            FetchError::InvalidConfig(e) => ("invalid config: ", String::from(e.message())),
            FetchError::InvalidOption(m) => ("invalid option: ", String::from(*m)),
        };
        f.write_str(what)?;
        f.write_str(&detail)
    }
}

impl std::error::Error for FetchError {}

impl From<FetchError> for JsValue {
    /// The value a JavaScript caller would see: see [`FetchError::as_js_value`].
    fn from(e: FetchError) -> JsValue {
        e.as_js_value()
    }
}

/// How an attempt ended without a response.
#[derive(Clone, Copy, PartialEq)]
enum Failure {
    /// A network failure ([`is_network_error`]): retried.
    Network,
    /// [`Options::timeout_ms`] passed: retried like a network failure.
    Timeout,
    /// Anything else `fetch` threw or rejected with: not retried.
    Other,
}

impl Failure {
    /// The error the call ends with when this failure is its last.
    fn into_error(self, e: JsValue) -> FetchError {
        match self {
            Failure::Network => FetchError::Network(e),
            Failure::Timeout => FetchError::Timeout(e),
            Failure::Other => FetchError::InvalidRequest(e),
        }
    }
}

/// An attempt's outcome as the core's retry loop carries it from the
/// attempt to the policy ([`Call`]) and back to the caller.
type Outcome = Result<Response, Miss>;

/// How an attempt ended without a response.
enum Miss {
    /// `fetch` failed: the rule decides whether that is retried.
    Failed(Failure, JsValue),
    /// The call ends here, whatever the rule says: the signal aborted or
    /// the deadline passed (before or during the attempt), or the request
    /// could not be cloned.
    Ended(FetchError),
}

/// `fetch(request)` with retries, on the schedule and rules of `options`
/// (see the [crate documentation](crate)). Resolves with the response whatever
/// its status; the responses of attempts that are retried are cancelled.
///
/// The loop is the core's ([`wasm_backoff_core::retry`]'s `drive`, the
/// one the core's `run` and `call` run too), so the retry rules live in one
/// place: this function brings the attempt, the policy (the core's
/// [`verdict`] plus [`Options::should_retry`] and the abort checks) and
/// the sleep (cut short by the signal or the deadline).
///
/// # Errors
///
/// [`FetchError::Network`] or [`FetchError::Timeout`] with the last
/// attempt's error when no attempt got a response,
/// [`FetchError::Deadline`] when [`Options::max_elapsed_ms`] passes during
/// an attempt or a wait, [`FetchError::Aborted`] when the signal aborts
/// (before or during an attempt or a wait), [`FetchError::InvalidRequest`]
/// when the request cannot be cloned or `fetch` fails otherwise than by a
/// network failure, [`FetchError::InvalidConfig`] and
/// [`FetchError::InvalidOption`] for invalid options (before any attempt).
pub async fn fetch_with_backoff(
    request: &Request,
    options: &Options,
) -> Result<Response, FetchError> {
    let (timeout_ms, max_elapsed_ms) = options.check()?;
    let signal = options.signal.clone().unwrap_or_else(|| request.signal());
    if signal.aborted() {
        return Err(FetchError::Aborted(signal.reason()));
    }
    // The hard deadline: a controller that its timer aborts, held until the
    // call returns (however it returns: the timer is cleared then).
    let held = match max_elapsed_ms {
        Some(ms) => {
            let ac = AbortController::new().map_err(FetchError::InvalidRequest)?;
            let timer = Timer::new(ms, &aborter(&ac, &timeout_error("max_elapsed_ms (", ms)));
            Some((ac, timer))
        }
        None => None,
    };
    let call = Call {
        options,
        // (the core's one rule: a listed method, a key of the request's own, or retry_non_idempotent)
        idempotent: idempotent(PolicyRequest {
            listed: IDEMPOTENT_METHODS.contains(&request.method().to_ascii_uppercase().as_str()),
            keyed: request.headers().has("idempotency-key").unwrap_or(false),
            option: false,
            any: options.retry_non_idempotent,
        }),
        signal,
        deadline: held.as_ref().map(|(ac, _)| ac),
        timeout_ms,
        throttle_base_ms: options
            .throttle_base_ms
            .unwrap_or(DEFAULT_THROTTLE_BASE_FACTOR * options.config.base_ms),
        stop: Cell::new(None),
    };
    let calls = retry(|_| call.attempt(request))
        .try_with(options.config)
        .map_err(FetchError::InvalidConfig)?
        .max_retry_after_ms(options.max_retry_after_ms)
        // The core's timing rule: a wait that would end past it is not started.
        .deadline(max_elapsed_ms.unwrap_or(f64::INFINITY), js_sys::Date::now)
        .policy(&call)
        // (a closure whether or not a seed is given: one type, so one copy
        // of the loop in the wasm)
        .seed_with(|| options.seed.unwrap_or_else(entropy_or_clock));
    let done = calls.drive(|wait| call.sleep(wait)).await?;
    if let Some(e) = call.stop.take() {
        return Err(e);
    }
    match done.last {
        Ok(response) => Ok(match options.idle_timeout_ms.filter(|ms| ms.is_finite()) {
            Some(ms) => idle::idle_body(response, ms),
            None => response,
        }),
        Err(Miss::Failed(failure, e)) => Err(failure.into_error(e)),
        Err(Miss::Ended(e)) => Err(e),
    }
}

/// One call of [`fetch_with_backoff`]: what its attempts, its policy and its
/// sleeps share.
struct Call<'a> {
    options: &'a Options,
    /// The request may be sent twice: an idempotent method, an
    /// `Idempotency-Key` header, or [`Options::retry_non_idempotent`].
    idempotent: bool,
    /// The caller's signal (else the request's own).
    signal: AbortSignal,
    /// The hard deadline's controller, aborted by its timer.
    deadline: Option<&'a AbortController>,
    timeout_ms: Option<f64>,
    /// The base of the wait after a throttled answer ([`Options::throttle_base_ms`]).
    throttle_base_ms: f64,
    /// Why the call stopped, when the signal or the deadline aborted while
    /// [`Options::should_retry`] was asked: the policy can only say "stop",
    /// so it leaves the error here for [`fetch_with_backoff`] to return.
    stop: Cell<Option<FetchError>>,
}

impl Call<'_> {
    /// Why the call stops now, if it does: the caller's signal aborted, or
    /// the deadline passed (in that order, as in the JavaScript package).
    #[inline(never)] // (asked at four places of the call's state machine: one copy)
    fn stopped(&self) -> Option<FetchError> {
        if self.signal.aborted() {
            return Some(FetchError::Aborted(self.signal.reason()));
        }
        let d = self.deadline?.signal();
        d.aborted().then(|| FetchError::Deadline(d.reason()))
    }

    /// One attempt: nothing is sent once the call stopped, and an attempt
    /// that fails because the call stopped (its fetch aborted) ends the
    /// call with that reason rather than as a failure to retry.
    async fn attempt(&self, request: &Request) -> Outcome {
        if let Some(e) = self.stopped() {
            return Err(Miss::Ended(e));
        }
        let req =
            Request::clone(request).map_err(|e| Miss::Ended(FetchError::InvalidRequest(e)))?;
        let outcome = send(&req, &self.signal, self.deadline, self.timeout_ms).await;
        match (outcome, self.stopped()) {
            (Err(_), Some(e)) => Err(Miss::Ended(e)),
            (outcome, _) => outcome.map_err(|(failure, e)| Miss::Failed(failure, e)),
        }
    }

    /// The wait between attempts, on the JavaScript timers; when the signal
    /// or the deadline aborts it, the call ends with that reason.
    async fn sleep(&self, wait: Duration) -> Result<(), FetchError> {
        let ms = wait.as_secs_f64() * 1000.0;
        sleep(ms, &self.signal, self.deadline).await.map_err(|_| {
            self.stopped()
                .unwrap_or(FetchError::Aborted(JsValue::UNDEFINED))
        })
    }

    /// [`Options::should_retry`]'s answer about an attempt (`info` is made
    /// only when there is a callback to tell). A callback that re-enters
    /// (through another call sharing these options) is not asked, rather
    /// than panicking.
    fn wants(&self, info: impl FnOnce() -> AttemptInfo) -> Option<bool> {
        let f = self.options.should_retry.as_ref()?;
        f.try_borrow_mut().ok().and_then(|mut f| f(&info()))
    }
}

/// The response, the error and the failure of an attempt that got one.
fn parts(outcome: &Outcome) -> (Option<&Response>, Option<&JsValue>, Option<Failure>) {
    match outcome {
        Ok(r) => (Some(r), None, None),
        Err(Miss::Failed(failure, e)) => (None, Some(e), Some(*failure)),
        Err(Miss::Ended(_)) => (None, None, None),
    }
}

/// The call's policy, run by the core's loop after every attempt: the
/// caller's [`Options::should_retry`], the abort checks, then the core's
/// rule ([`verdict`]: what failed, the method, the hook); the loop then
/// applies the core's timing. A retry honours the wait the server named.
impl Policy<Outcome> for &Call<'_> {
    fn verdict(&mut self, attempt: u32, outcome: &Outcome) -> Verdict {
        if let Err(Miss::Ended(e)) = outcome {
            return Verdict::Stop(end_of(e));
        }
        let (response, error, failure) = parts(outcome);
        let status = response.map(Response::status);
        let retry_after_ms = match (response, status) {
            (Some(r), Some(400..)) => named_wait(r),
            _ => None,
        };
        let wants = self.wants(|| AttemptInfo {
            attempt,
            status,
            response: response.cloned(),
            error: error.cloned(),
            retry_after_ms,
        });
        // The hook may have taken a while (or aborted the signal itself).
        if let Some(e) = self.stopped() {
            if let Some(r) = response {
                discard(r);
            }
            let end = end_of(&e);
            self.stop.set(Some(e));
            return Verdict::Stop(end);
        }
        let advised = match (response, status) {
            (Some(r), Some(400..)) => r.headers().get(SHOULD_RETRY_HEADER).ok().flatten(),
            _ => None,
        };
        let facts = Facts {
            advice: advice(advised.as_deref()),
            failed: failure.is_some(),
            network: failure.is_some_and(|f| f != Failure::Other),
            status,
            hint_ms: retry_after_ms,
            in_retry_on: status.is_some_and(|s| self.options.retry_on.contains(&s)),
            idempotent: self.idempotent,
            // (the request is cloned per attempt: a body that cannot be is InvalidRequest)
            replayable: true,
            wants,
        };
        match verdict(&facts) {
            Some(end) => Verdict::Stop(end),
            None => Verdict::Retry {
                // (a wait over the maximum, clamped to it when asked: the core's rule)
                hint_ms: honoured(
                    retry_after_ms,
                    self.options.max_retry_after_ms,
                    self.options.clamp_retry_after,
                ),
            },
        }
    }

    /// A throttled answer (a 429, 503 or 529) waits on the throttling base.
    fn base(&mut self, _: u32, outcome: &Outcome) -> Option<f64> {
        let (response, _, _) = parts(outcome);
        throttled(response.map(Response::status)).then_some(self.throttle_base_ms)
    }

    /// Asks [`Options::delay`] (a callback that re-enters is not asked: the
    /// proposal stands); an answer that is no wait >= 0 ends the call with
    /// [`FetchError::InvalidOption`].
    fn delay(
        &mut self,
        attempt: u32,
        outcome: &Outcome,
        proposal: f64,
        hint_ms: Option<f64>,
    ) -> Choice {
        let Some(Ok(mut f)) = self.options.delay.as_ref().map(|f| f.try_borrow_mut()) else {
            return Choice::Keep;
        };
        let (response, error, _) = parts(outcome);
        let choice = f(&DelayInfo {
            attempt,
            status: response.map(Response::status),
            response: response.cloned(),
            error: error.cloned(),
            retry_after_ms: hint_ms,
            delay_ms: proposal,
        });
        // (the core's rule says what a hook may answer)
        match choice {
            c if choose(Some(proposal), c) == Err(End::HookError) => {
                if let Some(r) = response {
                    discard(r);
                }
                self.stop.set(Some(FetchError::InvalidOption(
                    "delay must return a wait >= 0",
                )));
                Choice::GiveUp
            }
            c => c,
        }
    }

    /// Tells [`Options::on_retry`] (a callback that re-enters is skipped,
    /// as for `should_retry`), then lets the retried response go.
    fn notify(&mut self, outcome: &Outcome, pause: &Pause) {
        let (response, error, _) = parts(outcome);
        if let Some(Ok(mut cb)) = self.options.on_retry.as_ref().map(|cb| cb.try_borrow_mut()) {
            cb(&RetryInfo {
                attempt: pause.attempt,
                delay_ms: pause.delay_ms,
                status: response.map(Response::status),
                response: response.cloned(),
                error: error.cloned(),
                retry_after_ms: pause.hint_ms,
            });
        }
        if let Some(r) = response {
            discard(r);
        }
    }
}

/// The core's name for why a call stopped with `e` (the loop reports it;
/// the caller gets `e` itself).
fn end_of(e: &FetchError) -> End {
    match e {
        FetchError::Aborted(_) => End::Aborted,
        FetchError::Deadline(_) => End::Deadline,
        _ => End::NotRetryable,
    }
}

/// One attempt: `fetch(req)` under the caller's `signal`, and, when there
/// is a timeout or a deadline, a controller of its own that they abort.
/// Whatever it set up in JavaScript (timer, listeners) is released when it
/// settles. Its error tells a network failure from a timeout and from
/// anything else.
async fn send(
    req: &Request,
    signal: &AbortSignal,
    deadline: Option<&AbortController>,
    timeout_ms: Option<f64>,
) -> Result<Response, (Failure, JsValue)> {
    let mut held: (Option<Timer>, Option<Listener>, Option<Listener>) = (None, None, None);
    let own = match (timeout_ms, deadline) {
        (None, None) => None,
        _ => AbortController::new().ok(),
    };
    let init = RequestInit::new();
    match &own {
        // (the request's own signal when the caller gave none)
        None => init.set_signal(Some(signal)),
        Some(ac) => {
            if let Some(ms) = timeout_ms {
                let reason = timeout_error("timeout_ms (", ms);
                held.0 = Some(Timer::new(ms, &aborter(ac, &reason)));
            }
            // (forwarded without a reason: the caller reads the deadline's own)
            held.1 = deadline.map(|d| Listener::new(&d.signal(), aborter(ac, &JsValue::UNDEFINED)));
            // The caller's signal and ours: the caller's alone once the
            // attempt settled, so it still reaches the response's body.
            // Where AbortSignal.any is missing, ours alone, the caller's
            // forwarded to it until the attempt settles.
            let both = abort_signal_any(&Array::of2(signal, &ac.signal())).unwrap_or_else(|_| {
                held.2 = Some(Listener::new(signal, aborter(ac, &JsValue::UNDEFINED)));
                ac.signal()
            });
            init.set_signal(Some(&both));
        }
    }
    let result = match fetch(req, &init) {
        Ok(promise) => JsFuture::from(promise).await,
        Err(e) => Err(e),
    };
    drop(held);
    result.map(JsCast::unchecked_into).map_err(|e| {
        let timed_out = own.is_some_and(|ac| ac.signal().aborted());
        let network = e
            .dyn_ref::<js_sys::Error>()
            .and_then(|e| e.message().as_string())
            .is_some_and(|m| is_network_error(&m));
        match (timed_out, network) {
            (true, _) => (Failure::Timeout, e),
            (false, true) => (Failure::Network, e),
            (false, false) => (Failure::Other, e),
        }
    })
}

/// The jitter's seed when the options give none, drawn at the first retry
/// only: the platform's entropy (`crypto.getRandomValues`), else (unusual
/// hosts) the clock and `Math.random`. Never std's random keys, which are
/// constant on wasm32-unknown-unknown: clients would retry in lockstep.
fn entropy_or_clock() -> u64 {
    entropy_seed().unwrap_or_else(|_| {
        js_sys::Date::now().to_bits() ^ (js_sys::Math::random() * 9_007_199_254_740_992.0) as u64
    })
}

/// The wait the response's headers name, in ms, by
/// [`wasm_backoff_core::server_wait`] (bit for bit the JavaScript package's
/// `serverWait`; any non-ASCII character makes a value invalid on both
/// sides). `Headers::get` returns owned strings, so the headers are read
/// first (`SERVER_WAIT_HEADERS` has 8 names), then looked up.
fn named_wait(response: &Response) -> Option<f64> {
    let headers = response.headers();
    let values = SERVER_WAIT_HEADERS.map(|name| headers.get(name).ok().flatten());
    let get = |name: &str| {
        let at = SERVER_WAIT_HEADERS.iter().position(|n| *n == name)?;
        values[at].as_deref()
    };
    server_wait(get, js_sys::Date::now())
}

/// Lets go of a response we will not return, so its connection is freed;
/// the cancellation's outcome is ignored (awaited, so a rejection is handled).
fn discard(response: &Response) {
    if let Some(body) = response.body() {
        let done = JsFuture::from(body.cancel());
        wasm_bindgen_futures::spawn_local(async move {
            let _ = done.await;
        });
    }
}

/// A `setTimeout` that is cleared when dropped (fired or not). Timers and
/// listeners call JavaScript functions (a promise's `resolve`, a bound
/// `abort`), never Rust closures: no closure glue in the wasm, nothing to
/// keep alive.
struct Timer(JsValue);

impl Timer {
    /// Calls `f` after `ms`, clamped to what a timer accepts (2^31 − 1).
    fn new(ms: f64, f: &Function) -> Timer {
        let ms = if ms >= 0.0 { ms.min(MAX_DELAY_MS) } else { 0.0 };
        Timer(set_timeout(f, ms))
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        clear_timeout(&self.0);
    }
}

/// An `abort` listener on a signal, removed when dropped.
struct Listener {
    signal: AbortSignal,
    f: Function,
}

impl Listener {
    fn new(signal: &AbortSignal, f: Function) -> Listener {
        let _ = signal.add_event_listener_with_callback("abort", &f);
        Listener {
            signal: signal.clone(),
            f,
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self
            .signal
            .remove_event_listener_with_callback("abort", &self.f);
    }
}

/// `ac.abort(reason)` as a function to call later (`ac.abort.bind(ac,
/// reason)`; the arguments it is called with come after `reason`, unused).
fn aborter(ac: &AbortController, reason: &JsValue) -> Function {
    // (an AbortController always has its prototype's `abort`)
    let abort: Function = js_sys::Reflect::get(ac, &JsValue::from_str("abort"))
        .unwrap_or_default()
        .unchecked_into();
    abort.bind1(ac, reason).unchecked_into()
}

/// A `TimeoutError` `DOMException` saying `<what><ms> ms) passed`, as
/// `AbortSignal.timeout` and the JavaScript package make (undefined, so a
/// plain `AbortError`, where `DOMException` is missing). The message is
/// joined in JavaScript: no number formatting in the wasm.
fn timeout_error(what: &'static str, ms: f64) -> JsValue {
    let message = JsString::from(what)
        .concat(&JsValue::from_f64(ms))
        .concat(&JsValue::from_str(" ms) passed"));
    DomException::new(&message, "TimeoutError").map_or(JsValue::UNDEFINED, Into::into)
}

/// Waits `ms` (clamped to what a timer accepts); fails the moment `signal`
/// or the `deadline` aborts (then the caller reads which, and its reason).
async fn sleep(
    ms: f64,
    signal: &AbortSignal,
    deadline: Option<&AbortController>,
) -> Result<(), JsValue> {
    let deadline = deadline.map(AbortController::signal);
    if signal.aborted() || deadline.as_ref().is_some_and(AbortSignal::aborted) {
        return Err(JsValue::UNDEFINED);
    }
    let mut settle = None;
    let promise = Promise::new(&mut |resolve, reject| settle = Some((resolve, reject)));
    let Some((resolve, reject)) = settle else {
        return Err(JsValue::UNDEFINED); // (the executor runs synchronously)
    };
    let _held = (
        Timer::new(ms, &resolve),
        Listener::new(signal, reject.clone()),
        deadline.map(|d| Listener::new(&d, reject)),
    );
    JsFuture::from(promise).await.map(drop)
}
