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

    /// One entry point for the budget's operations, at `now_ms` (one
    /// exported method instead of four: each costs every user its
    /// borrow-checking shim and glue):
    /// 0 = the constructor's error code (0, or 1/2/3 for ttl/floor/ratio);
    /// 1 = deposit one request; 2 = withdraw one retry (1 if granted, else 0);
    /// 3 = retries available.
    pub fn op(&mut self, op: u32, now_ms: f64) -> f64 {
        let Some(b) = self.inner.as_mut() else {
            return if op == 0 { self.error as f64 } else { 0.0 };
        };
        match op {
            1 => {
                b.deposit(now_ms);
                0.0
            }
            2 => b.withdraw(now_ms) as u8 as f64,
            3 => b.available(now_ms),
            _ => 0.0,
        }
    }
}
