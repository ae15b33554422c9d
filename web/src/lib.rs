//! `fetch` with retries for Rust web apps compiled to `wasm32-unknown-unknown`
//! (Leptos, Yew, Dioxus, plain `wasm-bindgen`): the semantics of the
//! JavaScript package's `fetchWithBackoff`, with the schedule, the jitter
//! and the reading of `Retry-After` and rate-limit headers
//! ([`wasm_backoff_core::server_wait`]) of [`wasm_backoff_core`].
//!
//! [`fetch_with_backoff`] resolves with the [`web_sys::Response`] whatever its
//! status (after the last attempt, the last response), and fails only where
//! `fetch` would (a network error after the last attempt), when the
//! [`Options::signal`] aborts, or when the request cannot be cloned.
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
//!         .max_retry_after_ms(30_000.0) // a longer Retry-After: that response, at once
//!         .on_retry(move |info| retries.set(info.attempt)); // e.g. show "retrying…"
//!     // Any status comes back as the Response (after the last attempt, the last one).
//!     fetch_with_backoff(&request, &options).await
//! }
//! ```
//!
//! (The example needs a JavaScript host: a browser, a worker or Node. It is
//! the README's "From Rust" example, word for word: `tests/readme.rs`
//! checks that they agree.)
//!
//! ## What is retried
//!
//! - network errors (the `fetch` promise rejected while the signal is not
//!   aborted) and the [`Options::retry_on`] statuses;
//! - 413, 429 and 503 ([`SERVER_WAIT_STATUSES`]) whenever the server named a
//!   wait, even when [`Options::retry_on`] leaves them out;
//! - only for idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE, TRACE,
//!   QUERY), unless [`Options::retry_non_idempotent`] is set or the request
//!   carries an `Idempotency-Key` header;
//! - each attempt sends `Request::clone(request)` (JavaScript's `request.clone()`), so a body is sent again.
//!
//! The wait before a retry is the schedule's next delay, lifted to the wait
//! the server named when it named one (with a little jitter above it, see
//! [`wasm_backoff_core::Backoff::with_hint`]): `Retry-After`, else the first
//! of the rate-limit headers `retry-after-ms`, `x-ms-retry-after-ms`,
//! `ratelimit-reset`, `ratelimit`, `x-ratelimit-retry-after`,
//! `x-ratelimit-reset`, `x-rate-limit-reset` that names one (read by
//! [`wasm_backoff_core::server_wait`], as the JavaScript package reads
//! them). A named wait above [`Options::max_retry_after_ms`] returns that
//! response at once. Cross-origin, a browser shows these headers only when
//! the server lists them in `Access-Control-Expose-Headers`. When the
//! schedule gives up, the last response (or the last network error) is
//! returned. Responses of attempts that are retried are cancelled (their body
//! streams), so their connections are freed.
//!
//! `fetch`, `setTimeout` and `clearTimeout` are the JavaScript globals, never
//! `window`'s, so this works in pages, workers and Node alike.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

use js_sys::{Function, Promise};
use wasm_backoff_core::{
    entropy_rng, seeded_rng, server_wait, Backoff, Config, ConfigError, DefaultRng, MAX_DELAY_MS,
    SERVER_WAIT_HEADERS,
};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, Request, RequestInit, Response};

#[wasm_bindgen]
extern "C" {
    /// The global `fetch` (pages, workers, Node ≥ 18).
    #[wasm_bindgen(js_name = fetch, catch)]
    fn fetch_with_request(input: &Request) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = fetch, catch)]
    fn fetch_with_request_and_init(input: &Request, init: &RequestInit)
        -> Result<Promise, JsValue>;
    /// The global `setTimeout`: a number in browsers, a `Timeout` object in Node.
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &Function, timeout: f64) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(handle: &JsValue);
}

/// The methods retried without [`Options::retry_non_idempotent`] (RFC 9110
/// §9.2.2, plus QUERY).
const IDEMPOTENT: [&str; 7] = ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE", "QUERY"];

/// The statuses retried by default: 408, 429, 500, 502, 503, 504.
pub const DEFAULT_RETRY_ON: [u16; 6] = [408, 429, 500, 502, 503, 504];

/// The statuses retried whenever the server names a wait (`Retry-After` or a
/// rate-limit header), whatever [`Options::retry_on`] says: 413 Content Too
/// Large, 429 Too Many Requests, 503 Service Unavailable.
pub const SERVER_WAIT_STATUSES: [u16; 3] = [413, 429, 503];

/// The default of [`Options::max_retry_after_ms`]: one minute.
pub const DEFAULT_MAX_RETRY_AFTER_MS: f64 = 60_000.0;

/// The default of [`Config::max_attempts`] in [`Options::new`]: five tries in all.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;

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
    /// The failed attempt's network error, when it got no response.
    pub error: Option<JsValue>,
    /// The wait the server named, in ms: its `Retry-After`, else a
    /// rate-limit header's (see the [crate documentation](crate)).
    pub retry_after_ms: Option<f64>,
}

type OnRetry = Rc<RefCell<dyn FnMut(&RetryInfo)>>;

/// The options of [`fetch_with_backoff`]: a builder; every setter has a
/// documented default, so `Options::new()` (or `Options::default()`) is ready
/// to use. Cloning shares the [`Options::on_retry`] callback.
#[derive(Clone)]
pub struct Options {
    config: Config,
    retry_on: Vec<u16>,
    retry_non_idempotent: bool,
    max_retry_after_ms: f64,
    seed: Option<u64>,
    signal: Option<AbortSignal>,
    on_retry: Option<OnRetry>,
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
            .field("seed", &self.seed)
            .field("signal", &self.signal.is_some())
            .field("on_retry", &self.on_retry.is_some())
            .finish()
    }
}

impl Options {
    /// The defaults: the core's [`Config::new`] (exponential, full jitter,
    /// base 100 ms, factor 2, cap 20 s) with at most
    /// [`DEFAULT_MAX_ATTEMPTS`] (5) tries; [`DEFAULT_RETRY_ON`]; idempotent
    /// methods only; `Retry-After` up to [`DEFAULT_MAX_RETRY_AFTER_MS`]
    /// (60 s); a seed from the platform's entropy; no signal, no callback.
    pub fn new() -> Self {
        Options {
            config: Config::new().max_attempts(Some(DEFAULT_MAX_ATTEMPTS)),
            retry_on: DEFAULT_RETRY_ON.to_vec(),
            retry_non_idempotent: false,
            max_retry_after_ms: DEFAULT_MAX_RETRY_AFTER_MS,
            seed: None,
            signal: None,
            on_retry: None,
        }
    }

    /// The schedule, used as given: its [`Config::max_attempts`] (total
    /// tries, `None` = no limit) and [`Config::max_elapsed_ms`] (sum of the
    /// waits) are the limits. Default: `Config::new().max_attempts(Some(5))`.
    /// An invalid config makes [`fetch_with_backoff`] fail with
    /// [`FetchError::InvalidConfig`] before any attempt.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// The statuses to retry (network errors are always retried, and
    /// [`SERVER_WAIT_STATUSES`] when the server names a wait). Default
    /// [`DEFAULT_RETRY_ON`]: 408, 429, 500, 502, 503, 504.
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
    /// Default [`DEFAULT_MAX_RETRY_AFTER_MS`] (60 000).
    pub fn max_retry_after_ms(mut self, ms: f64) -> Self {
        self.max_retry_after_ms = ms;
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
    /// behind). Default: the request's own signal.
    pub fn signal(mut self, signal: AbortSignal) -> Self {
        self.signal = Some(signal);
        self
    }

    /// Called before each wait, with what failed and how long the wait is.
    /// Default: none.
    pub fn on_retry(mut self, f: impl FnMut(&RetryInfo) + 'static) -> Self {
        self.on_retry = Some(Rc::new(RefCell::new(f)));
        self
    }
}

/// Why [`fetch_with_backoff`] failed. An HTTP error status is not an error:
/// it comes back as the `Response`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum FetchError {
    /// The last attempt's network error (the value `fetch` rejected with,
    /// usually a `TypeError`), when the schedule gave up or the method is
    /// not retried.
    Network(JsValue),
    /// The signal aborted; its reason (an `AbortError` `DOMException` unless
    /// `abort()` was given one).
    Aborted(JsValue),
    /// The request could not be sent: `Request.clone()` threw (its body was
    /// already read), or `fetch` is missing or threw synchronously.
    InvalidRequest(JsValue),
    /// [`Options::config`] was rejected by [`Config::validate`]; no attempt
    /// was made.
    InvalidConfig(ConfigError),
}

impl FetchError {
    /// The JavaScript value behind the error (for a config error, its message
    /// as a string).
    pub fn as_js_value(&self) -> JsValue {
        match self {
            FetchError::Network(v) | FetchError::Aborted(v) | FetchError::InvalidRequest(v) => {
                v.clone()
            }
            FetchError::InvalidConfig(e) => JsValue::from_str(e.message()),
        }
    }
}

/// A JavaScript value as text: a string itself, an `Error` as
/// `Name: message`, anything else through `String(value)`.
fn describe(v: &JsValue) -> String {
    if let Some(s) = v.as_string() {
        return s;
    }
    if let Some(e) = v.dyn_ref::<js_sys::Error>() {
        return String::from(e.to_string());
    }
    String::from(js_sys::JsString::from(v.clone()))
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchError::Network(v) => write!(f, "network error: {}", describe(v)),
            FetchError::Aborted(v) => write!(f, "aborted: {}", describe(v)),
            FetchError::InvalidRequest(v) => write!(f, "invalid request: {}", describe(v)),
            FetchError::InvalidConfig(e) => write!(f, "invalid config: {}", e.message()),
        }
    }
}

impl std::error::Error for FetchError {}

impl From<FetchError> for JsValue {
    /// The value a JavaScript caller would see: see [`FetchError::as_js_value`].
    fn from(e: FetchError) -> JsValue {
        e.as_js_value()
    }
}

/// `fetch(request)` with retries, on the schedule and rules of `options`
/// (see the [crate documentation](crate)). Resolves with the response whatever
/// its status; the responses of attempts that are retried are cancelled.
///
/// # Errors
///
/// [`FetchError::Network`] with the last network error when no attempt got a
/// response, [`FetchError::Aborted`] when the signal aborts (before or during
/// an attempt or a wait), [`FetchError::InvalidRequest`] when the request
/// cannot be cloned or `fetch` throws synchronously,
/// [`FetchError::InvalidConfig`] for an invalid [`Options::config`].
pub async fn fetch_with_backoff(
    request: &Request,
    options: &Options,
) -> Result<Response, FetchError> {
    options
        .config
        .validate()
        .map_err(FetchError::InvalidConfig)?;
    let own_signal = options.signal.is_some();
    let signal = options.signal.clone().unwrap_or_else(|| request.signal());
    if signal.aborted() {
        return Err(FetchError::Aborted(signal.reason()));
    }
    let idempotent = options.retry_non_idempotent
        || IDEMPOTENT.contains(&request.method().to_ascii_uppercase().as_str())
        || request.headers().has("idempotency-key").unwrap_or(false);
    let init = own_signal.then(|| {
        let init = RequestInit::new();
        init.set_signal(Some(&signal));
        init
    });
    // Made at the first retry: most calls succeed at once and need no seed.
    let mut schedule: Option<Backoff<DefaultRng>> = None;
    let mut attempt: u32 = 0;
    loop {
        attempt = attempt.saturating_add(1);
        let req = Request::clone(request).map_err(FetchError::InvalidRequest)?;
        let sent = match &init {
            Some(init) => fetch_with_request_and_init(&req, init),
            None => fetch_with_request(&req),
        };
        let (response, error) = match sent {
            Err(e) => (None, Some(e)),
            Ok(promise) => match JsFuture::from(promise).await {
                Ok(v) => (Some(v.unchecked_into::<Response>()), None),
                Err(_) if signal.aborted() => return Err(FetchError::Aborted(signal.reason())),
                Err(e) => (None, Some(e)),
            },
        };
        let status = response.as_ref().map(Response::status);
        let listed = status.is_none_or(|s| options.retry_on.contains(&s));
        let waits = status.is_some_and(|s| SERVER_WAIT_STATUSES.contains(&s));
        // The headers are read only for an error response that may be
        // retried (the JavaScript driver reads them for any status >= 400).
        let retry_after_ms = match (&response, status) {
            (Some(r), Some(400..)) if idempotent && (listed || waits) => named_wait(r),
            _ => None,
        };
        let retry = idempotent && (listed || (waits && retry_after_ms.is_some()));
        let finish = |response: Option<Response>, error: Option<JsValue>| match response {
            Some(r) => Ok(r),
            None => Err(FetchError::Network(error.unwrap_or(JsValue::UNDEFINED))),
        };
        if !retry {
            return finish(response, error);
        }
        let backoff = match &mut schedule {
            Some(b) => b,
            None => schedule.insert(new_schedule(options)?),
        };
        let Some(mut delay) = backoff.next_delay() else {
            return finish(response, error);
        };
        if let Some(hint) = retry_after_ms {
            delay = backoff.with_hint(delay, hint);
            if hint > options.max_retry_after_ms {
                return finish(response, error);
            }
        }
        if let Some(cb) = &options.on_retry {
            // A callback that re-enters (through another call sharing these
            // options) is skipped rather than panicking.
            if let Ok(mut cb) = cb.try_borrow_mut() {
                cb(&RetryInfo {
                    attempt,
                    delay_ms: delay,
                    status,
                    error: error.clone(),
                    retry_after_ms,
                });
            }
        }
        if let Some(r) = &response {
            discard(r);
        }
        sleep(delay, &signal).await.map_err(FetchError::Aborted)?;
    }
}

fn new_schedule(options: &Options) -> Result<Backoff<DefaultRng>, FetchError> {
    let rng = match options.seed {
        Some(seed) => seeded_rng(seed),
        // Without crypto.getRandomValues (unusual hosts), the clock and Math.random.
        None => entropy_rng().unwrap_or_else(|_| {
            seeded_rng(
                js_sys::Date::now().to_bits()
                    ^ (js_sys::Math::random() * 9_007_199_254_740_992.0) as u64,
            )
        }),
    };
    Backoff::new(options.config, rng).map_err(FetchError::InvalidConfig)
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

/// What a sleep holds in JavaScript: the timer and the abort listener,
/// released when the sleep ends, however it ends (the future dropped
/// included).
struct Timer<'a> {
    handle: JsValue,
    _on_timeout: Closure<dyn FnMut()>,
    signal: &'a AbortSignal,
    on_abort: Closure<dyn FnMut()>,
}

impl Drop for Timer<'_> {
    fn drop(&mut self) {
        clear_timeout(&self.handle);
        let _ = self
            .signal
            .remove_event_listener_with_callback("abort", self.on_abort.as_ref().unchecked_ref());
    }
}

/// Waits `ms` (clamped to what a timer accepts), or fails with the signal's
/// reason the moment it aborts.
async fn sleep(ms: f64, signal: &AbortSignal) -> Result<(), JsValue> {
    if signal.aborted() {
        return Err(signal.reason());
    }
    let ms = if ms >= 0.0 { ms.min(MAX_DELAY_MS) } else { 0.0 };
    let mut settle = None;
    let promise = Promise::new(&mut |resolve, reject| settle = Some((resolve, reject)));
    let (resolve, reject) = settle.expect("the Promise executor runs synchronously");
    let on_timeout = Closure::once(move || {
        let _ = resolve.call0(&JsValue::UNDEFINED);
    });
    let reason_of = signal.clone();
    let on_abort = Closure::<dyn FnMut()>::new(move || {
        let _ = reject.call1(&JsValue::UNDEFINED, &reason_of.reason());
    });
    let _ = signal.add_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref());
    let _timer = Timer {
        handle: set_timeout(on_timeout.as_ref().unchecked_ref(), ms),
        _on_timeout: on_timeout,
        signal,
        on_abort,
    };
    JsFuture::from(promise).await.map(drop)
}
