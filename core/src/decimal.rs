//! Plain decimal numbers (`120`, `250.5`: digits, an optional fraction) into
//! the nearest `f64`, ties to even — what `str::parse` and JavaScript's
//! `Number` give, bit for bit — in well under 1 KB of wasm, where
//! `str::parse::<f64>` costs a Rust wasm app ~16 KB gzipped (its tables).
//! Exact arithmetic on a fixed-size big integer: no allocation, no table,
//! no panic, linear in the input's length.

/// Significant digits kept; a nonzero digit beyond them only says "a
/// little more" (sticky). 768 would do: no halfway point between two
/// doubles has more than 767 significant digits, so none lies between the
/// kept digits and the full value.
const DIGITS: usize = 800;

/// 124 × 32 = 3968 bits. The largest number formed is below 2^3843: the
/// digits kept (< 10^800 < 2^2658), or 10^k · 2^(66 + 10k/3 + 1) / 10^k's
/// numerator for k ≤ 1123 fraction digits (< 2^3810 shifted by at most 31),
/// or an integer below 10^309.
const LIMBS: usize = 124;

/// A non-negative integer, little-endian 32-bit limbs, `len` of them used.
struct Big {
    limb: [u32; LIMBS],
    len: usize,
}

impl Big {
    /// Limb `i`, 0 beyond the number.
    fn at(&self, i: usize) -> u32 {
        match self.limb.get(i) {
            Some(&l) if i < self.len => l,
            _ => 0,
        }
    }

    /// self = self · m + a (never past `LIMBS` in this module's uses).
    fn mul_add(&mut self, m: u32, a: u32) {
        let mut carry = u64::from(a);
        for l in self.limb.iter_mut().take(self.len) {
            let t = u64::from(*l) * u64::from(m) + carry;
            *l = t as u32;
            carry = t >> 32;
        }
        if carry != 0 {
            if let Some(l) = self.limb.get_mut(self.len) {
                *l = carry as u32;
                self.len += 1;
            }
        }
    }

    /// self = self / d; the remainder.
    fn div_rem(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for l in self.limb.iter_mut().take(self.len).rev() {
            let t = rem << 32 | u64::from(*l);
            *l = (t / u64::from(d)) as u32;
            rem = t % u64::from(d);
        }
        self.trim();
        rem as u32
    }

    /// self = self · 2^n.
    fn shl(&mut self, n: usize) {
        let (words, bits) = (n / 32, (n % 32) as u32);
        let len = (self.len + words + 1).min(LIMBS);
        // From the top down, so every source limb is read before it is overwritten.
        for i in (0..len).rev() {
            let high = match i.checked_sub(words) {
                Some(j) => self.at(j) << bits,
                None => 0,
            };
            let low = match i.checked_sub(words + 1) {
                Some(j) if bits > 0 => self.at(j) >> (32 - bits),
                _ => 0,
            };
            if let Some(l) = self.limb.get_mut(i) {
                *l = high | low;
            }
        }
        self.len = len;
        self.trim();
    }

    fn trim(&mut self) {
        while self.len > 0 && self.at(self.len - 1) == 0 {
            self.len -= 1;
        }
    }

    /// The number of significant bits (0 for 0).
    fn bits(&self) -> usize {
        match self.len {
            0 => 0,
            n => n * 32 - self.at(n - 1).leading_zeros() as usize,
        }
    }

    fn bit(&self, i: usize) -> bool {
        self.at(i / 32) >> (i % 32) & 1 == 1
    }

    /// Whether any bit below bit `i` is set.
    fn any_below(&self, i: usize) -> bool {
        let (w, b) = (i / 32, i % 32);
        (0..w.min(self.len)).any(|j| self.at(j) != 0) || self.at(w) & ((1u32 << b) - 1) != 0
    }
}

/// `whole.fraction` as the nearest `f64` (ties to even; +inf above the
/// largest double, 0 below half the least). Both are ASCII digits (checked
/// by the caller; any other byte counts as a digit of some value, never a
/// panic); `fraction` may be empty, `whole` too.
pub(crate) fn parse(whole: &[u8], fraction: &[u8]) -> f64 {
    let mut m = Big {
        limb: [0; LIMBS],
        len: 0,
    };
    // value = m · 10^e10 (+ a little more when `sticky`), m of `n` digits.
    let (mut n, mut e10, mut sticky) = (0usize, 0i64, false);
    for (i, &c) in whole.iter().chain(fraction).enumerate() {
        let in_fraction = i >= whole.len();
        let d = u32::from(c.wrapping_sub(b'0') % 10);
        if n == 0 && d == 0 {
            e10 -= in_fraction as i64; // a leading zero
        } else if n < DIGITS {
            m.mul_add(10, d);
            n += 1;
            e10 -= in_fraction as i64;
        } else {
            sticky |= d != 0;
            e10 += !in_fraction as i64;
        }
    }
    if n == 0 {
        return 0.0;
    }
    // 10^(mag - 1) <= value < 10^mag
    let mag = n as i64 + e10;
    if mag > 309 {
        return f64::INFINITY; // >= 10^309 > f64::MAX
    }
    if mag < -323 {
        return 0.0; // < 10^-324, below half the least subnormal (2.47e-324)
    }
    let mut e2 = 0i64;
    if e10 >= 0 {
        for _ in 0..e10 {
            m.mul_add(10, 0); // an integer below 10^309
        }
    } else {
        // k <= DIGITS + 323. Scaled by 2^s so the quotient has at least 66
        // bits (10/3 > log2 10), then divided exactly, remainders sticky.
        let k = e10.unsigned_abs() as usize;
        let s = (66 + k * 10 / 3 + 1).saturating_sub(m.bits());
        m.shl(s);
        e2 = -(s as i64);
        for _ in 0..k {
            sticky |= m.div_rem(10) != 0;
        }
    }
    round(&m, e2, sticky)
}

/// (q + a fraction of 1 when `sticky`) · 2^e2, rounded to the nearest
/// double (ties to even), subnormals and overflow included. q > 0.
fn round(q: &Big, e2: i64, sticky: bool) -> f64 {
    let len = q.bits() as i64;
    let msb = len - 1 + e2; // 2^msb <= value < 2^(msb + 1)
    if msb >= 1024 {
        return f64::INFINITY;
    }
    // The significand's bits: 53, fewer for a subnormal (maybe none).
    let p = if msb >= -1022 { 53 } else { 1075 + msb };
    let drop = len - p; // bits of q below the significand
    let mut mant = 0u64;
    for i in (drop.max(0)..len).rev() {
        mant = mant << 1 | q.bit(i as usize) as u64;
    }
    if drop > 0 {
        let half = drop - 1 < len && q.bit((drop - 1) as usize);
        let more = sticky || q.any_below((drop - 1) as usize);
        if half && (more || mant & 1 == 1) {
            mant += 1; // 2^p at most: the next binade, or +inf past the last
        }
    }
    // Exact: mant < 2^54, and mant · 2^scale is representable or overflows.
    mant as f64 * pow2(e2 + drop.max(0))
}

/// 2^k for -1074 <= k <= 1023.
fn pow2(k: i64) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (k + 1074))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::format;
    use std::string::String;
    use std::vec::Vec;

    /// Against `str::parse` (correctly rounded), to the bit.
    fn check(s: &str) {
        let (whole, fraction) = s.split_once('.').unwrap_or((s, ""));
        let want: f64 = s.parse().unwrap();
        let got = parse(whole.as_bytes(), fraction.as_bytes());
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "{s}: got {got:e}, want {want:e}"
        );
    }

    /// The decimal digits of m · b^e, most significant first.
    fn digits(m: u64, b: u64, e: usize) -> String {
        let mut d: Vec<u128> = std::vec![1]; // little-endian decimal digits
        let mut times = |k: u128| {
            let mut carry = 0u128;
            for x in d.iter_mut() {
                let t = *x * k + carry;
                (*x, carry) = (t % 10, t / 10);
            }
            while carry > 0 {
                d.push(carry % 10);
                carry /= 10;
            }
        };
        for _ in 0..e {
            times(u128::from(b));
        }
        times(u128::from(m));
        d.iter()
            .rev()
            .map(|x| char::from(b'0' + *x as u8))
            .collect()
    }

    /// m · 2^-e (e > 0) written out in decimal: m · 5^e / 10^e.
    fn binary_fraction(m: u64, e: usize) -> String {
        let d = digits(m, 5, e);
        let zeros = e.saturating_sub(d.len());
        format!("0.{}{d}", "0".repeat(zeros))
    }

    #[test]
    fn small_and_exact_values() {
        for s in [
            "0",
            "00",
            "0.0",
            "1",
            "7",
            "10",
            "120",
            "250.5",
            "0.5",
            "0.1",
            "0.2",
            "0.3",
            "1.5",
            "3.14159",
            "999999999",
            "1000000000",
            "1795435245",
            "9007199254740992",
            "9007199254740993",
            "9007199254740995",
            "18446744073709551615",
            "18446744073709551616",
            "123456789012345678901234567890",
        ] {
            check(s);
        }
    }

    #[test]
    fn the_edges_of_the_range() {
        // f64::MAX, the halfway point above it (ties to even: +inf), around it.
        let max = digits((1 << 53) - 1, 2, 971);
        assert_eq!(max.parse::<f64>().unwrap(), f64::MAX);
        let halfway = digits((1 << 54) - 1, 2, 970);
        check(&max);
        check(&halfway);
        check(&format!("{halfway}.000000000000000000000000000000001"));
        let below = digits((1 << 54) - 1, 2, 970).replace("792", "791");
        check(&below);
        check(&"9".repeat(308));
        check(&"9".repeat(309));
        check(&"9".repeat(310));
        check(&"9".repeat(400));
        check(&format!("1{}", "0".repeat(308)));
        check(&format!("1{}", "0".repeat(309)));
        // The least subnormal, exactly half of it (ties to even: 0), a little more.
        check(&binary_fraction(1, 1074));
        let half_least = binary_fraction(1, 1075);
        assert_eq!(half_least.parse::<f64>().unwrap(), 0.0);
        check(&half_least);
        check(&format!("{half_least}1"));
        check(&format!("{half_least}{}1", "0".repeat(900)));
        check(&format!("0.{}1", "0".repeat(330)));
        check(&format!("0.{}1", "0".repeat(4000)));
        // The least normal, the largest subnormal, the halfway point between
        // them (768 significant digits), and its neighbours.
        check(&binary_fraction(1, 1022));
        check(&binary_fraction((1 << 52) - 1, 1074));
        let mid = binary_fraction((1 << 53) - 1, 1075);
        check(&mid);
        check(&format!("{mid}{}1", "0".repeat(100)));
        check(&mid[..mid.len() - 1]);
    }

    #[test]
    fn halfway_cases_need_every_digit() {
        // 2^53 + 1 is halfway between two doubles: a nonzero digit far
        // beyond decides, past the kept digits too.
        check("9007199254740993");
        check("9007199254740993.0000000000000000000000000001");
        check(&format!("9007199254740993.{}1", "0".repeat(900)));
        check(&format!("9007199254740993.{}", "0".repeat(900)));
        check(&format!("0.{}", "5".repeat(2000)));
        check(&format!("{}.5", "1".repeat(1000)));
        for e in [1, 2, 10, 52, 53, 60, 200, 1000, 1070] {
            for m in [1, 3, (1 << 53) + 1, (1 << 54) - 1, (1 << 53) - 1] {
                let s = binary_fraction(m, e);
                check(&s);
                check(&format!("{s}1"));
                check(&format!("{s}{}1", "0".repeat(800)));
            }
        }
    }

    #[test]
    fn pseudo_random_values_agree_with_str_parse() {
        // xorshift64*: digit strings up to 40 digits, every tenth up to 400,
        // each whole and split at a random point.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        };
        for round in 0..20_000 {
            let len = 1 + (next() % if round % 10 == 0 { 400 } else { 40 }) as usize;
            let text: String = (0..len)
                .map(|_| char::from(b'0' + (next() % 10) as u8))
                .collect();
            check(&text);
            let (w, f) = text.split_at((next() % len as u64) as usize);
            check(&format!("{w}.{f}"));
        }
    }
}
