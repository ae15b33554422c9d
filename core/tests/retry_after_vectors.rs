//! The `Retry-After` vectors shared with the JavaScript parser
//! (js/retry-after.js, checked by tests/fetch/retry-after.test.mjs): both must
//! give exactly these results. A value's characters reach the Rust parser as
//! their UTF-8 bytes (a lone surrogate as its WTF-8 bytes): any non-ASCII
//! character makes a value invalid on both sides.
//!
//! The crate has no JSON dependency: tests/json reads the file.

use crate::json;

use json::Json;
use wasm_backoff_core::retry_after::parse;

const VECTORS: &str = include_str!("retry_after_vectors.json");

/// (now, value, expected) for every case of every group.
fn vectors() -> Vec<(f64, Vec<u8>, Option<f64>)> {
    let json = json::parse(VECTORS);
    let mut out = Vec::new();
    for group in json.get("groups").arr() {
        let now = group.get("now").num();
        for case in group.get("cases").arr() {
            let [value, expected] = case.arr() else {
                panic!("a case is [value, expected]: {case:?}")
            };
            let expected = match expected {
                Json::Null => None,
                Json::Num(n) => Some(*n),
                Json::Str(s) if s == b"Infinity" => Some(f64::INFINITY),
                _ => panic!("bad expectation {expected:?}"),
            };
            out.push((now, value.bytes().to_vec(), expected));
        }
    }
    out
}

fn show(v: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(v))
}

#[test]
fn the_parser_gives_every_vector_exactly() {
    let vectors = vectors();
    assert!(vectors.len() > 150, "only {} vectors read", vectors.len());
    let wrong: Vec<String> = vectors
        .iter()
        .filter_map(|(now, value, expected)| {
            let got = parse(value, *now);
            // To the bit: f64 == would not tell 0.0 from -0.0.
            (got.map(f64::to_bits) != expected.map(f64::to_bits))
                .then(|| format!("{} at {now}: got {got:?}, want {expected:?}", show(value)))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_vectors_cover_the_kinds_of_input() {
    let vectors = vectors();
    let non_ascii = vectors.iter().filter(|(_, v, _)| !v.is_ascii()).count();
    let infinite = vectors
        .iter()
        .filter(|(_, _, e)| *e == Some(f64::INFINITY))
        .count();
    let none = vectors.iter().filter(|(_, _, e)| e.is_none()).count();
    assert!(
        non_ascii >= 10 && infinite >= 1 && none >= 50,
        "{non_ascii} {infinite} {none}"
    );
    // Every non-ASCII value is invalid.
    for (_, v, e) in &vectors {
        assert!(v.is_ascii() || e.is_none(), "{} expects {e:?}", show(v));
    }
}

#[test]
fn a_non_ascii_byte_anywhere_makes_a_value_invalid() {
    for (now, value, _) in vectors() {
        for at in 0..=value.len() {
            for b in [0x80, 0xa0, 0xc2, 0xc4, 0xe2, 0xef, 0xf0, 0xff] {
                let mut v = value.clone();
                v.insert(at, b);
                assert_eq!(parse(&v, now), None, "{:02x?}", v);
                if at < value.len() {
                    let mut v = value.clone();
                    v[at] = b;
                    assert_eq!(parse(&v, now), None, "{:02x?}", v);
                }
            }
        }
    }
}
