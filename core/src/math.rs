//! Saturating float arithmetic: every function here returns a number in
//! [0, +inf] for inputs in [0, +inf], never NaN, whatever the exponent.

/// The longest delay a JavaScript timer accepts: `setTimeout` treats anything
/// above 2^31 − 1 ms (about 24.8 days) as 0 and fires at once, so every delay
/// handed out is clamped to this.
///
/// ```
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter, MAX_DELAY_MS};
/// let huge = Config::new().base_ms(1e300).max_delay_ms(f64::INFINITY).jitter(Jitter::None);
/// assert_eq!(Backoff::new(huge, seeded_rng(1)).unwrap().next_delay(), Some(MAX_DELAY_MS));
/// ```
pub const MAX_DELAY_MS: f64 = 2_147_483_647.0;

/// `x` clamped to `[0, MAX_DELAY_MS]`; NaN becomes 0. A last safety net:
/// validated configurations never produce NaN in the first place.
pub fn clamp_delay(x: f64) -> f64 {
    if x >= 0.0 {
        if x < MAX_DELAY_MS { x } else { MAX_DELAY_MS }
    } else {
        0.0
    }
}

/// The smaller of two numbers (`f64::min` needs std on some targets' docs, and
/// this spells out that NaN never occurs here).
pub fn min(a: f64, b: f64) -> f64 {
    if a < b { a } else { b }
}

/// The larger of `a` and `b` (`b` when they are unordered: NaN).
pub fn max(a: f64, b: f64) -> f64 {
    if a > b { a } else { b }
}

/// `a * b`, except that zero times anything (infinity included) is zero.
pub fn mul(a: f64, b: f64) -> f64 {
    if a == 0.0 || b == 0.0 { 0.0 } else { a * b }
}

/// `base^exp` by squaring, for `base >= 1`: O(log exp) multiplications, and
/// overflow saturates to +inf instead of wrapping (`powi` is not in `core`,
/// and this is bit-identical on every platform because it is plain IEEE
/// multiplication).
pub fn pow_sat(base: f64, mut exp: u32) -> f64 {
    let mut result = 1.0;
    let mut b = base;
    while exp > 0 {
        if exp & 1 == 1 {
            result *= b;
        }
        exp >>= 1;
        if exp > 0 {
            b *= b;
        }
    }
    result
}

/// Fibonacci number F(n) with F(1) = F(2) = 1 (F(0) = 0), as f64; +inf past
/// F(1476), the last finite one, so the loop is bounded whatever `n` is.
pub fn fib_sat(n: u32) -> f64 {
    if n > 1476 {
        return f64::INFINITY;
    }
    let (mut a, mut b) = (0.0f64, 1.0f64);
    for _ in 0..n {
        let next = a + b;
        a = b;
        b = next;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pow_sat_is_exact_for_small_powers_and_saturates() {
        assert_eq!(pow_sat(2.0, 0), 1.0);
        assert_eq!(pow_sat(2.0, 10), 1024.0);
        assert_eq!(pow_sat(3.0, 5), 243.0);
        assert_eq!(pow_sat(2.0, 1024), f64::INFINITY);
        assert_eq!(pow_sat(1.6, u32::MAX), f64::INFINITY);
        assert_eq!(pow_sat(1.0, u32::MAX), 1.0);
    }

    #[test]
    fn fib_sat_starts_1_1_2_and_saturates() {
        let f: [f64; 8] = core::array::from_fn(|i| fib_sat(i as u32));
        assert_eq!(f, [0.0, 1.0, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0]);
        assert!(fib_sat(1476).is_finite());
        assert_eq!(fib_sat(1477), f64::INFINITY);
        assert_eq!(fib_sat(u32::MAX), f64::INFINITY);
    }

    #[test]
    fn clamp_and_mul_never_nan() {
        assert_eq!(clamp_delay(f64::NAN), 0.0);
        assert_eq!(clamp_delay(-1.0), 0.0);
        assert_eq!(clamp_delay(f64::INFINITY), MAX_DELAY_MS);
        assert_eq!(mul(0.0, f64::INFINITY), 0.0);
        assert_eq!(mul(f64::INFINITY, 0.0), 0.0);
    }
}
