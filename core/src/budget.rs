//! A retry budget: retries may be at most a fraction of recent traffic, plus
//! a small floor, so that a failing dependency sees at most
//! `(1 + ratio)` times its normal load instead of `maxAttempts` times it
//! (the idea of Finagle's and tower's `TpsBudget`, Envoy's retry budgets and
//! the AWS SDKs' retry quota). Time is passed in; one budget is meant to be
//! shared by every call to the same dependency.

/// Slots of the sliding window: the window advances in tenths.
const SLOTS: usize = 10;

/// A sliding-window token bucket over `ttl_ms`.
///
/// ```
/// use wasm_backoff_core::RetryBudget;
/// // 10 s window, 1 retry/s always allowed, plus 20 % of the requests.
/// let mut budget = RetryBudget::new(10_000.0, 1.0, 0.2).unwrap();
/// for _ in 0..50 {
///     budget.deposit(0.0); // 50 requests: 10 more retries
/// }
/// assert_eq!(budget.available(0.0), 20.0);
/// assert!(budget.withdraw(0.0));
/// ```
#[derive(Clone, Debug)]
pub struct RetryBudget {
    slot_ms: f64,
    floor: f64,
    ratio: f64,
    deposits: [f64; SLOTS],
    withdrawals: [f64; SLOTS],
    current: usize,
    /// Index of the current slot on the absolute time axis (`now / slot_ms`).
    epoch: f64,
}

/// A rejected budget parameter (the message names the JS option).
///
/// ```
/// use wasm_backoff_core::{BudgetError, RetryBudget};
/// assert_eq!(RetryBudget::new(0.0, 1.0, 0.2).err(), Some(BudgetError::Ttl));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetError {
    /// `ttlMs` must be a finite number > 0.
    Ttl,
    /// `minPerSec` must be a finite number >= 0.
    MinPerSec,
    /// `retryRatio` must be a finite number >= 0.
    Ratio,
}

impl BudgetError {
    /// The message, starting with the option's name.
    ///
    /// ```
    /// use wasm_backoff_core::{BudgetError, RetryBudget};
    /// assert!(BudgetError::Ratio.message().starts_with("retryRatio"));
    /// ```
    pub const fn message(self) -> &'static str {
        match self {
            BudgetError::Ttl => "ttlMs must be a finite number > 0",
            BudgetError::MinPerSec => "minPerSec must be a finite number >= 0",
            BudgetError::Ratio => "retryRatio must be a finite number >= 0",
        }
    }
}

impl RetryBudget {
    /// `ttl_ms`: the window (tower: 10 s); `min_per_sec`: retries always
    /// allowed per second of window regardless of traffic (tower: 10);
    /// `ratio`: extra retries per request in the window (tower: 0.2).
    ///
    /// ```
    /// use wasm_backoff_core::{BudgetError, RetryBudget};
    /// let b = RetryBudget::new(10_000.0, 10.0, 0.2).unwrap(); // tower's defaults
    /// assert!(RetryBudget::new(f64::NAN, 1.0, 1.0).is_err());
    /// # let _ = b;
    /// ```
    pub fn new(ttl_ms: f64, min_per_sec: f64, ratio: f64) -> Result<Self, BudgetError> {
        if !(ttl_ms.is_finite() && ttl_ms > 0.0) {
            return Err(BudgetError::Ttl);
        }
        if !(min_per_sec.is_finite() && min_per_sec >= 0.0) {
            return Err(BudgetError::MinPerSec);
        }
        if !(ratio.is_finite() && ratio >= 0.0) {
            return Err(BudgetError::Ratio);
        }
        Ok(RetryBudget {
            slot_ms: ttl_ms / SLOTS as f64,
            floor: min_per_sec * ttl_ms / 1000.0,
            ratio,
            deposits: [0.0; SLOTS],
            withdrawals: [0.0; SLOTS],
            current: 0,
            epoch: f64::NEG_INFINITY,
        })
    }

    /// Moves the window to `now_ms`, forgetting slots older than the ttl. A
    /// clock that goes backwards stays in the current slot.
    fn advance(&mut self, now_ms: f64) {
        let epoch = (now_ms / self.slot_ms) as i64 as f64; // floor for now >= 0
        if self.epoch == f64::NEG_INFINITY {
            self.epoch = epoch;
            return;
        }
        let mut steps = epoch - self.epoch;
        if steps.is_nan() || steps <= 0.0 {
            return;
        }
        self.epoch = epoch;
        if steps > SLOTS as f64 {
            steps = SLOTS as f64;
        }
        for _ in 0..steps as usize {
            self.current = (self.current + 1) % SLOTS;
            self.deposits[self.current] = 0.0;
            self.withdrawals[self.current] = 0.0;
        }
    }

    /// Records one request (a first attempt, not a retry).
    ///
    /// ```
    /// use wasm_backoff_core::{BudgetError, RetryBudget};
    /// let mut b = RetryBudget::new(1000.0, 0.0, 0.5).unwrap();
    /// b.deposit(0.0);
    /// b.deposit(0.0);
    /// assert_eq!(b.available(0.0), 1.0);
    /// ```
    pub fn deposit(&mut self, now_ms: f64) {
        self.advance(now_ms);
        self.deposits[self.current] += 1.0;
    }

    /// Retries the window allows right now (may be fractional; one retry needs >= 1).
    ///
    /// ```
    /// use wasm_backoff_core::{BudgetError, RetryBudget};
    /// let mut b = RetryBudget::new(1000.0, 2.0, 0.0).unwrap();
    /// assert_eq!(b.available(0.0), 2.0); // the floor: 2/s over a 1 s window
    /// ```
    pub fn available(&mut self, now_ms: f64) -> f64 {
        self.advance(now_ms);
        let d: f64 = self.deposits.iter().sum();
        let w: f64 = self.withdrawals.iter().sum();
        let a = self.floor + self.ratio * d - w;
        if a > 0.0 { a } else { 0.0 }
    }

    /// Takes one retry from the budget if it has one.
    ///
    /// ```
    /// use wasm_backoff_core::{BudgetError, RetryBudget};
    /// let mut b = RetryBudget::new(1000.0, 1.0, 0.0).unwrap();
    /// assert!(b.withdraw(0.0));
    /// assert!(!b.withdraw(0.0));
    /// assert!(b.withdraw(1500.0), "the window moved on");
    /// ```
    pub fn withdraw(&mut self, now_ms: f64) -> bool {
        if self.available(now_ms) >= 1.0 {
            self.withdrawals[self.current] += 1.0;
            true
        } else {
            false
        }
    }
}

crate::error_with_message!(BudgetError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_then_ratio_then_window_expiry() {
        // 10 s window, 1 retry/s floor = 10 retries, 20 % of traffic on top.
        let mut b = RetryBudget::new(10_000.0, 1.0, 0.2).unwrap();
        let t = 1_000_000.0;
        assert_eq!(b.available(t), 10.0);
        for _ in 0..10 {
            assert!(b.withdraw(t));
        }
        assert!(!b.withdraw(t), "floor exhausted");
        for _ in 0..50 {
            b.deposit(t + 100.0);
        }
        assert_eq!(b.available(t + 100.0), 10.0, "50 requests buy 10 retries");
        for _ in 0..10 {
            assert!(b.withdraw(t + 200.0));
        }
        assert!(!b.withdraw(t + 200.0));
        // After the window, everything is forgotten: the floor is back.
        assert_eq!(b.available(t + 10_500.0), 10.0);
    }

    #[test]
    fn backwards_clock_and_bad_params() {
        let mut b = RetryBudget::new(1000.0, 0.0, 1.0).unwrap();
        b.deposit(5000.0);
        assert_eq!(b.available(100.0), 1.0, "a clock going back keeps the slot");
        assert_eq!(
            RetryBudget::new(0.0, 1.0, 1.0).err(),
            Some(BudgetError::Ttl)
        );
        assert_eq!(
            RetryBudget::new(f64::NAN, 1.0, 1.0).err(),
            Some(BudgetError::Ttl)
        );
        assert_eq!(
            RetryBudget::new(1.0, -1.0, 1.0).err(),
            Some(BudgetError::MinPerSec)
        );
        assert_eq!(
            RetryBudget::new(1.0, 1.0, f64::INFINITY).err(),
            Some(BudgetError::Ratio)
        );
    }
}
