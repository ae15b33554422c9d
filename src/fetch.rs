//! What the fetch driver (js/fetch.js) asks the core: `Retry-After` parsing
//! and the shared retry budget. The driver's I/O (promises, timers, abort
//! signals, fetch itself) stays in JavaScript, where those objects live;
//! the decisions with arithmetic in them are here.

use wasm_backoff_core::{retry_after, RetryBudget};
use wasm_bindgen::prelude::*;

/// Longest header value read; longer ones are not valid `Retry-After`s.
pub const INPUT_LEN: usize = 64;

struct Input(core::cell::UnsafeCell<[u8; INPUT_LEN]>);
// SAFETY: the module is single-threaded (wasm32 without atomics).
unsafe impl Sync for Input {}
static INPUT: Input = Input(core::cell::UnsafeCell::new([0; INPUT_LEN]));

/// Where the driver writes a header value (Latin-1 bytes) before calling
/// `retry_after` (numbers-only boundary: no string glue).
#[wasm_bindgen]
pub fn input_buffer() -> *mut u8 {
    INPUT.0.get() as *mut u8
}

/// The wait in ms asked for by the `Retry-After` value of `len` bytes in the
/// input buffer, as seen at `now_ms` (Unix epoch ms); -1 when absent,
/// invalid or in the past.
#[wasm_bindgen]
pub fn retry_after(now_ms: f64, len: usize) -> f64 {
    // SAFETY: single-threaded; the driver wrote the bytes just before.
    let buf = unsafe { &*INPUT.0.get() };
    match buf.get(..len) {
        Some(v) => retry_after::parse(v, now_ms).unwrap_or(-1.0),
        None => -1.0,
    }
}

/// The retry budget behind `RetryBudget` in js/fetch.js.
#[wasm_bindgen]
pub struct RawBudget {
    inner: Option<RetryBudget>,
    error: u8,
}

#[wasm_bindgen]
impl RawBudget {
    /// `error` is 1, 2 or 3 for a bad ttl, floor or ratio (`BudgetError` order).
    #[wasm_bindgen(constructor)]
    pub fn new(ttl_ms: f64, min_per_sec: f64, ratio: f64) -> RawBudget {
        match RetryBudget::new(ttl_ms, min_per_sec, ratio) {
            Ok(b) => RawBudget {
                inner: Some(b),
                error: 0,
            },
            Err(e) => RawBudget {
                inner: None,
                error: e as u8 + 1,
            },
        }
    }

    /// 0, or the code of the rejected parameter.
    #[wasm_bindgen(getter)]
    pub fn error(&self) -> u8 {
        self.error
    }

    /// Records one request (a first attempt).
    pub fn deposit(&mut self, now_ms: f64) {
        if let Some(b) = self.inner.as_mut() {
            b.deposit(now_ms)
        }
    }

    /// Takes one retry if the budget has one.
    pub fn withdraw(&mut self, now_ms: f64) -> bool {
        self.inner.as_mut().is_some_and(|b| b.withdraw(now_ms))
    }

    /// Retries available now.
    pub fn available(&mut self, now_ms: f64) -> f64 {
        self.inner.as_mut().map_or(0.0, |b| b.available(now_ms))
    }
}
