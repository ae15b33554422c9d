//! The server-named-wait vectors shared with the JavaScript package
//! (`serverWait` in js/retry-after.js, checked by
//! tests/fetch/retry-after.test.mjs): `server_wait` must give exactly these
//! results, to the bit. The file is inside the crate, so the crate's tests
//! stay self-contained; tests/json reads it without a JSON dependency.

use crate::json;

use json::Json;
use std::cell::RefCell;

use proptest::prelude::*;
use wasm_backoff_core::{SERVER_WAIT_HEADERS, server_wait, spent_wait};

const VECTORS: &str = include_str!("server_wait_vectors.json");

struct Case {
    headers: Vec<(String, String)>,
    expected: Option<f64>,
    note: String,
}

/// (now, cases).
fn vectors() -> (f64, Vec<Case>) {
    let top = json::parse(VECTORS);
    (top.get("now").num(), cases_of(top.get("cases")))
}

/// The cases of one group (`cases`, `spent`).
fn cases_of(group: &Json) -> Vec<Case> {
    group
        .arr()
        .iter()
        .map(|case| {
            let [headers, expected, note] = case.arr() else {
                panic!("a case is [headers, expected, note]: {case:?}")
            };
            let note = note.str().to_string();
            let Json::Obj(headers) = headers else {
                panic!("{note}: headers is an object")
            };
            let headers = headers
                .iter()
                .map(|(name, value)| {
                    (
                        String::from_utf8(name.clone()).unwrap(),
                        value.str().to_string(),
                    )
                })
                .collect();
            let expected = match expected {
                Json::Null => None,
                Json::Num(n) => Some(*n),
                Json::Str(s) if s == b"Infinity" => Some(f64::INFINITY),
                _ => panic!("{note}: bad expectation {expected:?}"),
            };
            Case {
                headers,
                expected,
                note,
            }
        })
        .collect()
}

/// `server_wait` over a case's headers, and the names it asked for.
fn run(headers: &[(String, String)], now: f64) -> (Option<f64>, Vec<String>) {
    let asked = RefCell::new(Vec::new());
    let got = server_wait(
        |name| {
            asked.borrow_mut().push(name.to_string());
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        },
        now,
    );
    (got, asked.into_inner())
}

#[test]
fn server_wait_gives_every_vector_exactly() {
    let (now, cases) = vectors();
    assert!(cases.len() >= 40, "only {} cases read", cases.len());
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            let (got, _) = run(&c.headers, now);
            // To the bit: f64 == would not tell 0.0 from -0.0.
            (got.map(f64::to_bits) != c.expected.map(f64::to_bits)).then(|| {
                format!(
                    "{} {:?}: got {got:?}, want {:?}",
                    c.note, c.headers, c.expected
                )
            })
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
fn get_is_asked_lowercase_names_once_each_in_order_until_one_names_a_wait() {
    let (now, cases) = vectors();
    for c in &cases {
        let (got, asked) = run(&c.headers, now);
        assert!(
            SERVER_WAIT_HEADERS
                .starts_with(&asked.iter().map(String::as_str).collect::<Vec<_>>()[..]),
            "{}: asked {asked:?}",
            c.note
        );
        if got.is_none() {
            assert_eq!(asked.len(), SERVER_WAIT_HEADERS.len(), "{}", c.note);
        }
        assert!(asked.iter().all(|n| *n == n.to_ascii_lowercase()));
    }
}

#[test]
fn the_vectors_cover_every_header_and_outcome() {
    let (_, cases) = vectors();
    for name in SERVER_WAIT_HEADERS {
        let winning = cases
            .iter()
            .filter(|c| c.expected.is_some() && c.headers.iter().any(|(n, _)| n == name))
            .count();
        assert!(winning >= 1, "no case where {name} names a wait");
    }
    for c in &cases {
        for (n, _) in &c.headers {
            assert!(SERVER_WAIT_HEADERS.contains(&n.as_str()), "{}: {n}", c.note);
        }
    }
    let count = |f: fn(Option<f64>) -> bool| cases.iter().filter(|c| f(c.expected)).count();
    assert!(count(|e| e.is_none()) >= 10);
    assert!(count(|e| e == Some(f64::INFINITY)) >= 2);
    assert!(count(|e| e == Some(0.0)) >= 3);
}

/// Any value of any header, at any clock: no panic, never NaN or negative.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9 \t.,;=tres\"a-z-]{0,24}",
        "\\PC{0,12}",
        "[0-9]{1,400}(\\.[0-9]{1,40})?",
    ]
}

proptest! {
    #[test]
    fn any_header_values_give_a_wait_or_none(
        values in proptest::collection::vec(proptest::option::of(value()), 8),
        now in prop_oneof![Just(1_795_435_200_000.0), Just(f64::NAN), Just(f64::INFINITY), any::<f64>()],
    ) {
        let got = server_wait(
            |name| {
                let i = SERVER_WAIT_HEADERS.iter().position(|n| *n == name)?;
                values[i].as_deref()
            },
            now,
        );
        prop_assert!(got.is_none_or(|w| w >= 0.0), "{got:?}");
    }
}

#[test]
fn spent_wait_gives_every_spent_vector() {
    let top = json::parse(VECTORS);
    let now = top.get("now").num();
    let cases = cases_of(top.get("spent"));
    assert!(cases.len() >= 12);
    for c in &cases {
        let get = |name: &str| {
            c.headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(spent_wait(get, now), c.expected, "{}", c.note);
    }
}
