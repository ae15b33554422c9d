//! `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP-date in any of
//! the three formats a recipient must accept, turned into a wait in ms.
//! The current time is passed in; nothing here reads a clock.

/// The wait a `Retry-After` value asks for, in ms from `now_ms` (Unix epoch
/// ms), or `None` when the value is not one of the RFC's forms, or is a date
/// at or before `now_ms` (then the caller's own backoff applies). Huge values
/// saturate (+inf for an absurd delta); the caller compares with its
/// maximum. Never NaN, never negative.
///
/// ```
/// use wasm_backoff_core::retry_after::parse;
/// let now = 784_111_772_000.0; // 5 s before Sun, 06 Nov 1994 08:49:37 GMT
/// assert_eq!(parse(b"Sun, 06 Nov 1994 08:49:37 GMT", now), Some(5000.0));
/// assert_eq!(parse(b"120", now), Some(120_000.0));
/// assert_eq!(parse(b"soon", now), None);
/// ```
pub fn parse(value: &[u8], now_ms: f64) -> Option<f64> {
    let v = trim(value);
    if v.is_empty() {
        return None;
    }
    if v.iter().all(u8::is_ascii_digit) {
        // delta-seconds = 1*DIGIT; f64 accumulation saturates instead of overflowing.
        let secs = v
            .iter()
            .fold(0.0f64, |acc, d| acc * 10.0 + (d - b'0') as f64);
        return Some(secs * 1000.0);
    }
    let at = http_date(v, now_ms)?;
    let wait = at - now_ms;
    if wait > 0.0 { Some(wait) } else { None }
}

/// The headers [`server_wait`] reads, in its order (lowercase, as it asks
/// for them): the milliseconds first (`retry-after-ms` wins over a
/// `Retry-After` beside it, as the OpenAI and Anthropic SDKs read them, and
/// `x-ms-retry-after-ms` too, as Azure's SDKs do: the finer value), then
/// `Retry-After`, then the rate-limit headers. A browser lets a
/// cross-origin page read only the ones the server lists in
/// `Access-Control-Expose-Headers`.
pub const SERVER_WAIT_HEADERS: [&str; 8] = [
    "retry-after-ms",
    "x-ms-retry-after-ms",
    "retry-after",
    "ratelimit-reset",
    "ratelimit",
    "x-ratelimit-retry-after",
    "x-ratelimit-reset",
    "x-rate-limit-reset",
];

/// The headers that say how many requests remain in the current window
/// (`RateLimit-Remaining`, GitHub's `X-RateLimit-Remaining`, and the `r` or
/// `remaining` parameter of `RateLimit`), read by [`spent_wait`] in this order.
pub const REMAINING_HEADERS: [&str; 3] =
    ["ratelimit-remaining", "x-ratelimit-remaining", "ratelimit"];

/// The wait until the window resets when a response says none remains: the
/// first of [`REMAINING_HEADERS`] present is `0` (digits, all zeros), and
/// then the reset is what [`server_wait`] reads (`RateLimit-Reset`, `t`,
/// `X-RateLimit-Reset`, …). `None` when a request remains, when no header
/// says, or when no reset is named: a success announcing it paces the next
/// call to its target until the reset.
///
/// ```
/// use wasm_backoff_core::retry_after::spent_wait;
/// let h = [("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "30")];
/// let get = |name: &str| h.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
/// assert_eq!(spent_wait(get, 0.0), Some(30_000.0));
/// assert_eq!(spent_wait(|n| (n == "ratelimit").then_some("\"default\";r=0;t=7"), 0.0), Some(7_000.0));
/// assert_eq!(spent_wait(|n| (n == "ratelimit").then_some("\"default\";r=4;t=7"), 0.0), None);
/// ```
pub fn spent_wait<'v>(get: impl Fn(&str) -> Option<&'v str>, now_ms: f64) -> Option<f64> {
    let left = REMAINING_HEADERS.iter().find_map(|name| {
        let v = trim(get(name)?.as_bytes());
        if *name == "ratelimit" {
            ratelimit_param(v, [b"r=", b"remaining="])
        } else {
            Some(v)
        }
    })?;
    let none = !left.is_empty() && left.iter().all(|&b| b == b'0');
    none.then(|| server_wait(get, now_ms)).flatten()
}

/// Seconds at or above this are a Unix time (GitHub's `X-RateLimit-Reset`),
/// below it a delta (2001-09-09T01:46:40Z).
const EPOCH_FROM_S: f64 = 1e9;

/// The wait a response's headers name, in ms from `now_ms` (Unix epoch ms):
/// the headers of [`SERVER_WAIT_HEADERS`] in that order, the first that
/// names a wait winning (an absent, invalid or past value falls through to
/// the next). `None` when none does.
///
/// - `retry-after-ms`, `x-ms-retry-after-ms` (Azure): milliseconds, digits
///   with an optional fraction (`250.5`); no sign, no exponent.
/// - `retry-after`: RFC 9110's delta-seconds or HTTP-date, read by [`parse`].
/// - `ratelimit-reset`, `x-ratelimit-retry-after`, `x-ratelimit-reset`
///   (GitHub), `x-rate-limit-reset` (Twitter), and the first `t` or `reset`
///   parameter of `ratelimit` (`"default";r=0;t=11` or `limit=100, reset=5`):
///   whole seconds, a delta below 10^9, a Unix time from 10^9 on (none when
///   at or before `now_ms`).
///
/// Values are trimmed of spaces and tabs; numbers are read as the nearest
/// `f64` (so an absurd one is +inf, which the caller compares with its
/// maximum). `get` returns a header's value (a comma-joined list for a
/// repeated header, as `fetch`'s `Headers` do) and is asked each name of
/// [`SERVER_WAIT_HEADERS`], lowercase, at most once, until one names a
/// wait. Never NaN, never negative; bit for bit what the JavaScript
/// package's `serverWait` gives (both are tested against the same vectors).
///
/// ```
/// use wasm_backoff_core::server_wait;
/// let now = 1_795_435_200_000.0; // 2026-11-23T12:00:00Z
/// let headers = [("x-ratelimit-reset", "1795435245"), ("retry-after", "soon")];
/// let get = |name: &str| headers.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
/// // Retry-After is invalid, so GitHub's reset time (45 s ahead) names the wait.
/// assert_eq!(server_wait(get, now), Some(45_000.0));
/// assert_eq!(server_wait(|_| None, now), None);
/// // The milliseconds win over a Retry-After beside them.
/// let both = [("retry-after", "2"), ("retry-after-ms", "250")];
/// assert_eq!(server_wait(|name| both.iter().find(|(n, _)| *n == name).map(|(_, v)| *v), now), Some(250.0));
/// ```
pub fn server_wait<'v>(get: impl Fn(&str) -> Option<&'v str>, now_ms: f64) -> Option<f64> {
    SERVER_WAIT_HEADERS.iter().find_map(|name| {
        if *name == "retry-after" {
            return parse(get(name)?.as_bytes(), now_ms);
        }
        // Bytes, not chars: no char-pattern searcher or UTF-8 slicing in
        // the wasm of an app that calls this.
        let v = trim(get(name)?.as_bytes());
        let v = if *name == "ratelimit" {
            ratelimit_reset(v)?
        } else {
            v
        };
        let (whole, fraction) = match v.iter().position(|&b| b == b'.') {
            Some(at) => (v.get(..at)?, v.get(at + 1..)),
            None => (v, None),
        };
        let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
        if !digits(whole) || !fraction.is_none_or(digits) {
            return None;
        }
        // The nearest f64, as `str::parse` (and JavaScript) would read it,
        // without its ~16 KB of wasm.
        let n = crate::decimal::parse(whole, fraction.unwrap_or_default());
        if name.ends_with("-ms") {
            return Some(n);
        }
        if fraction.is_some() {
            return None; // seconds are whole
        }
        let ms = n * 1000.0;
        if n < EPOCH_FROM_S {
            Some(ms)
        } else if ms > now_ms {
            Some(ms - now_ms)
        } else {
            None
        }
    })
}

/// The value of the first `t` or `reset` parameter of a `RateLimit` field
/// whose value is all digits: a parameter starts the value or follows a
/// space, tab, `,` or `;`, and its digits end it or are followed by one.
fn ratelimit_reset(b: &[u8]) -> Option<&[u8]> {
    ratelimit_param(b, [b"t=", b"reset="])
}

/// The first parameter of a `RateLimit` field named by one of `keys`
/// (`t=`/`reset=`, `r=`/`remaining=`) whose value is all digits.
fn ratelimit_param<'b>(b: &'b [u8], keys: [&[u8]; 2]) -> Option<&'b [u8]> {
    let sep = |c: &u8| matches!(c, b'\t' | b' ' | b',' | b';');
    (0..b.len()).find_map(|at| {
        if at > 0 && !b.get(at - 1).is_some_and(sep) {
            return None;
        }
        let rest = b.get(at..)?;
        let key = keys.iter().find(|k| rest.starts_with(k))?.len();
        let digits = rest.get(key..)?;
        let n = digits.iter().take_while(|c| c.is_ascii_digit()).count();
        (n > 0 && digits.get(n).is_none_or(sep))
            .then(|| digits.get(..n))
            .flatten()
    })
}

fn trim(mut v: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = v {
        v = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = v {
        v = rest;
    }
    v
}

const MONTHS: [&[u8]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];
const DAYS: [&[u8]; 7] = [b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun"];

/// Days from 1970-01-01 to y-m-d (proleptic Gregorian), or None for an
/// impossible date (Feb 30…). Howard Hinnant's days_from_civil.
fn days(y: u32, m: u32, d: u32) -> Option<i64> {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let len = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if d == 0 || d > *len.get(m.wrapping_sub(1) as usize)? {
        return None;
    }
    let (y, m, d) = (y as i64 - (m <= 2) as i64, m as i64, d as i64);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// The three HTTP-date forms, read as one token stream (separators: space,
/// comma, dash, colon) — small code rather than three grammars:
///
/// - IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT` and RFC 850
///   `Sunday, 06-Nov-94 08:49:37 GMT`: weekday, day, month, year, h, m, s, GMT;
/// - asctime `Sun Nov  6 08:49:37 1994`: weekday, month, day, h, m, s, year.
///
/// A two-digit year (RFC 850) more than 50 years ahead of `now_ms` means the
/// most recent past year with those digits (RFC 9110 §5.6.7).
fn http_date(s: &[u8], now_ms: f64) -> Option<f64> {
    let mut tokens = s
        .split(|c| matches!(c, b' ' | b',' | b'-' | b':'))
        .filter(|t| !t.is_empty());
    let day = tokens.next()?;
    if !DAYS.iter().any(|d| day.starts_with(d)) || !day.iter().all(u8::is_ascii_alphabetic) {
        return None;
    }
    let (mut nums, mut lens, mut n) = ([0u32; 5], [0usize; 5], 0);
    let (mut month, mut month_at, mut gmt) = (0, 0, false);
    for t in tokens {
        if t.iter().all(u8::is_ascii_digit) {
            if n == 5 || t.len() > 4 {
                return None;
            }
            nums[n] = t.iter().fold(0, |acc, d| acc * 10 + (d - b'0') as u32);
            lens[n] = t.len();
            n += 1;
        } else if let (0, Some(i)) = (month, MONTHS.iter().position(|m| *m == t)) {
            (month, month_at) = (i as u32 + 1, n);
        } else if t == b"GMT" && !gmt {
            gmt = true;
        } else {
            return None;
        }
    }
    let [day, year, h, m, sec, year_len] = match (n, month_at, gmt) {
        (5, 1, true) => [nums[0], nums[1], nums[2], nums[3], nums[4], lens[1] as u32],
        (5, 0, false) => [nums[0], nums[4], nums[1], nums[2], nums[3], lens[4] as u32],
        _ => return None,
    };
    // 60 is a leap second, which the grammar allows.
    if month == 0 || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    let year = match year_len {
        4 => year as i64,
        2 => {
            // Saturating: an absurd `now_ms` (±inf) must not overflow (the
            // cast saturates; the additions would wrap or panic).
            let now_year = ((now_ms / 31_556_952_000.0) as i64).saturating_add(1970);
            let y = (now_year / 100 * 100).saturating_add(year as i64);
            if y > now_year.saturating_add(50) {
                y - 100
            } else {
                y
            }
        }
        _ => return None,
    };
    let days = days(u32::try_from(year).ok()?, month, day)?;
    Some((days * 86_400 + (h * 3600 + m * 60 + sec) as i64) as f64 * 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    // 1994-11-06T08:49:37Z, the RFC's example instant.
    const T: f64 = 784_111_777_000.0;

    #[test]
    fn the_three_rfc_formats_name_the_same_instant() {
        let now = T - 5000.0;
        for v in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(parse(v.as_bytes(), now), Some(5000.0), "{v}");
        }
    }

    #[test]
    fn delta_seconds() {
        assert_eq!(parse(b"0", T), Some(0.0));
        assert_eq!(parse(b" 120 ", T), Some(120_000.0));
        assert_eq!(parse(b"86400000", T), Some(86_400_000_000.0));
        let huge = [b'9'; 400];
        assert_eq!(parse(&huge, T), Some(f64::INFINITY));
    }

    #[test]
    fn garbage_negative_and_past_give_none() {
        for v in [
            "",
            "  ",
            "-3",
            "1.5",
            "+5",
            "soon",
            "0x10",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 31 Feb 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:00:00 GMT",
            "Sun, 06 Nov 194 08:49:37 GMT",
            "Xyz Nov  6 08:49:37 1994",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Sun Nov  6 08:49:37 1994 GMT",
            "Sun, 06 Nov 1994 08:49:37",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT GMT",
            "Sun, 06 Nov 1994 08:49:37:01 GMT",
            "sun, 06 nov 1994 08:49:37 gmt",
            "Sun, 06 Nov 19940 08:49:37 GMT",
        ] {
            assert_eq!(parse(v.as_bytes(), T - 1000.0), None, "{v:?}");
        }
        // Lenient where it costs nothing: RFC 850 with a four-digit year is read.
        assert_eq!(
            parse(b"Sunday, 06-Nov-1994 08:49:37 GMT", T - 1000.0),
            Some(1000.0)
        );
        // A date in the past, or now, is no instruction to wait.
        assert_eq!(parse(b"Sun, 06 Nov 1994 08:49:37 GMT", T), None);
        assert_eq!(parse(b"Sun, 06 Nov 1994 08:49:37 GMT", T + 1.0), None);
    }

    #[test]
    fn rfc850_two_digit_years_follow_the_fifty_year_rule() {
        // Seen in 2026, "30" is 2030 and "94" is 1994.
        let ms = |y, m, d| days(y, m, d).unwrap() as f64 * 86_400_000.0;
        let now_2026 = ms(2026, 11, 22);
        let in_2030 = parse(b"Friday, 01-Nov-30 00:00:00 GMT", now_2026).unwrap();
        assert_eq!(in_2030, ms(2030, 11, 1) - now_2026);
        assert_eq!(
            parse(b"Sunday, 06-Nov-94 08:49:37 GMT", now_2026),
            None,
            "1994 is past"
        );
    }

    #[test]
    fn an_absurd_clock_gives_none_and_never_panics() {
        for now in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e300, -1e300] {
            assert_eq!(parse(b"Sunday, 06-Nov-94 08:49:37 GMT", now), None, "{now}");
        }
    }

    #[test]
    fn ratelimit_parameters() {
        for (v, want) in [
            ("t=5", Some("5")),
            ("reset=5", Some("5")),
            (",t=5", Some("5")),
            ("a;t=12;b", Some("12")),
            ("t=1.5, t=3", Some("3")),
            ("rt=4", None),
            ("t=", None),
            ("t=4x", None),
            ("treset=4", None),
            ("", None),
        ] {
            assert_eq!(
                ratelimit_reset(v.as_bytes()),
                want.map(str::as_bytes),
                "{v:?}"
            );
        }
    }

    #[test]
    fn server_wait_survives_any_value_and_clock() {
        for v in [
            "",
            " ",
            "\t",
            ".",
            "1.",
            "é",
            "t=é",
            "9".repeat(400).as_str(),
        ] {
            for now in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -1e300] {
                for name in SERVER_WAIT_HEADERS {
                    let got = server_wait(|n| (n == name).then_some(v), now);
                    assert!(
                        got.is_none_or(|w| w >= 0.0),
                        "{name}: {v:?} at {now}: {got:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn days_from_civil_is_right_at_known_points() {
        assert_eq!(days(1970, 1, 1), Some(0));
        assert_eq!(days(2000, 3, 1), Some(11_017));
        assert_eq!(days(2024, 2, 29), Some(19_782));
        assert_eq!(days(2023, 2, 29), None);
        assert_eq!(days(2023, 13, 1), None);
        assert_eq!(days(2023, 0, 1), None);
    }
}
