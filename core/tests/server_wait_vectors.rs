//! The server-named-wait vectors shared with the JavaScript package
//! (`serverWait` in js/retry-after.js, checked by
//! tests/js/retry-after.test.mjs): `server_wait` must give exactly these
//! results, to the bit. The file is inside the crate, so the crate's tests
//! stay self-contained; the few lines of `Json` below read the subset it
//! uses (objects, arrays, strings, numbers, null) without a JSON dependency.

use std::cell::RefCell;

use proptest::prelude::*;
use wasm_backoff_core::{server_wait, SERVER_WAIT_HEADERS};

const VECTORS: &str = include_str!("server_wait_vectors.json");

#[derive(Debug)]
enum Json {
    Null,
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

struct Reader<'a> {
    s: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn peek(&mut self) -> u8 {
        while self.s[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
        self.s[self.at]
    }
    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == c;
        self.at += hit as usize;
        hit
    }
    fn value(&mut self) -> Json {
        match self.peek() {
            b'{' => Json::Obj(self.list(b'}', |r| {
                let k = r.string();
                assert!(r.eat(b':'), "':' expected at {}", r.at);
                (k, r.value())
            })),
            b'[' => Json::Arr(self.list(b']', Self::value)),
            b'"' => Json::Str(self.string()),
            b'n' if self.s[self.at..].starts_with(b"null") => {
                self.at += 4;
                Json::Null
            }
            _ => {
                let start = self.at;
                while matches!(
                    self.s[self.at],
                    b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                ) {
                    self.at += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.at]).unwrap();
                Json::Num(
                    text.parse()
                        .unwrap_or_else(|_| panic!("bad value at {start}")),
                )
            }
        }
    }
    fn list<T>(&mut self, end: u8, mut item: impl FnMut(&mut Self) -> T) -> Vec<T> {
        self.at += 1;
        let mut items = Vec::new();
        if self.eat(end) {
            return items;
        }
        loop {
            items.push(item(self));
            if self.eat(end) {
                return items;
            }
            assert!(self.eat(b','), "',' expected at {}", self.at);
        }
    }
    /// A string; the file's escapes are `\"`, `\\`, `\/`, `\t`, `\n` and
    /// `\u` of a BMP character (anything else is refused).
    fn string(&mut self) -> String {
        assert!(self.eat(b'"'), "string expected at {}", self.at);
        let mut out = Vec::new();
        loop {
            let c = self.s[self.at];
            self.at += 1;
            match c {
                b'"' => return String::from_utf8(out).expect("UTF-8"),
                b'\\' => {
                    let e = self.s[self.at];
                    self.at += 1;
                    let ch = match e {
                        b'"' | b'\\' | b'/' => e as char,
                        b't' => '\t',
                        b'n' => '\n',
                        b'u' => {
                            let h = std::str::from_utf8(&self.s[self.at..self.at + 4]).unwrap();
                            self.at += 4;
                            char::from_u32(u32::from_str_radix(h, 16).unwrap())
                                .expect("a BMP character, not a surrogate")
                        }
                        _ => panic!("escape \\{} not read here", e as char),
                    };
                    out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                }
                _ => out.push(c),
            }
        }
    }
}

struct Case {
    headers: Vec<(String, String)>,
    expected: Option<f64>,
    note: String,
}

/// (now, cases).
fn vectors() -> (f64, Vec<Case>) {
    let Json::Obj(top) = (Reader {
        s: VECTORS.as_bytes(),
        at: 0,
    })
    .value() else {
        panic!("the file is an object")
    };
    let field = |k: &str| &top.iter().find(|(n, _)| n == k).expect(k).1;
    let Json::Num(now) = field("now") else {
        panic!("now is a number")
    };
    let Json::Arr(cases) = field("cases") else {
        panic!("cases is an array")
    };
    let cases = cases
        .iter()
        .map(|case| {
            let Json::Arr(case) = case else {
                panic!("a case is an array: {case:?}")
            };
            let [Json::Obj(headers), expected, Json::Str(note)] = &case[..] else {
                panic!("a case is [headers, expected, note]: {case:?}")
            };
            let headers = headers
                .iter()
                .map(|(name, value)| match value {
                    Json::Str(v) => (name.clone(), v.clone()),
                    _ => panic!("{note}: a header value is a string"),
                })
                .collect();
            let expected = match expected {
                Json::Null => None,
                Json::Num(n) => Some(*n),
                Json::Str(s) if s == "Infinity" => Some(f64::INFINITY),
                _ => panic!("{note}: bad expectation {expected:?}"),
            };
            Case {
                headers,
                expected,
                note: note.clone(),
            }
        })
        .collect();
    (*now, cases)
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
