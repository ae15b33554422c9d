//! The `Retry-After` vectors shared with the JavaScript parser
//! (js/retry-after.js, checked by tests/js/retry-after.test.mjs): both must
//! give exactly these results. A value's characters reach the Rust parser as
//! their UTF-8 bytes (a lone surrogate as its WTF-8 bytes): any non-ASCII
//! character makes a value invalid on both sides.
//!
//! The crate has no JSON dependency; the few lines of `Json` below read the
//! subset the file uses (objects, arrays, strings with escapes, numbers, null).

use wasm_backoff_core::retry_after::parse;

const VECTORS: &str = include_str!("retry_after_vectors.json");

#[derive(Debug)]
enum Json {
    Null,
    Num(f64),
    /// WTF-8: the file's strings may hold lone surrogates.
    Str(Vec<u8>),
    Arr(Vec<Json>),
    Obj(Vec<(Vec<u8>, Json)>),
}

impl Json {
    fn get(&self, key: &str) -> &Json {
        match self {
            Json::Obj(fields) => fields
                .iter()
                .find(|(k, _)| k == key.as_bytes())
                .map(|(_, v)| v)
                .unwrap_or_else(|| panic!("no {key:?}")),
            _ => panic!("not an object: {self:?}"),
        }
    }
    fn arr(&self) -> &[Json] {
        match self {
            Json::Arr(items) => items,
            _ => panic!("not an array: {self:?}"),
        }
    }
    fn num(&self) -> f64 {
        match self {
            Json::Num(n) => *n,
            _ => panic!("not a number: {self:?}"),
        }
    }
    fn bytes(&self) -> &[u8] {
        match self {
            Json::Str(s) => s,
            _ => panic!("not a string: {self:?}"),
        }
    }
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
    fn hex4(&mut self) -> u32 {
        let h = std::str::from_utf8(&self.s[self.at..self.at + 4]).unwrap();
        self.at += 4;
        u32::from_str_radix(h, 16).unwrap()
    }
    fn string(&mut self) -> Vec<u8> {
        assert!(self.eat(b'"'), "string expected at {}", self.at);
        let mut out = Vec::new();
        loop {
            let c = self.s[self.at];
            self.at += 1;
            match c {
                b'"' => return out,
                b'\\' => {
                    let e = self.s[self.at];
                    self.at += 1;
                    let mut cp = match e {
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => 10,
                        b'r' => 13,
                        b't' => 9,
                        b'u' => self.hex4(),
                        _ => e as u32, // \" \\ \/
                    };
                    // A surrogate pair is one character; a lone surrogate stays as it is.
                    if (0xd800..0xdc00).contains(&cp) && self.s[self.at..].starts_with(b"\\u") {
                        let save = self.at;
                        self.at += 2;
                        let lo = self.hex4();
                        if (0xdc00..0xe000).contains(&lo) {
                            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                        } else {
                            self.at = save;
                        }
                    }
                    wtf8(cp, &mut out);
                }
                _ => out.push(c),
            }
        }
    }
}

/// UTF-8 encoding, surrogates included (WTF-8).
fn wtf8(cp: u32, out: &mut Vec<u8>) {
    match cp {
        0..=0x7f => out.push(cp as u8),
        0x80..=0x7ff => out.extend([0xc0 | (cp >> 6) as u8, 0x80 | (cp & 63) as u8]),
        0x800..=0xffff => out.extend([
            0xe0 | (cp >> 12) as u8,
            0x80 | (cp >> 6 & 63) as u8,
            0x80 | (cp & 63) as u8,
        ]),
        _ => out.extend([
            0xf0 | (cp >> 18) as u8,
            0x80 | (cp >> 12 & 63) as u8,
            0x80 | (cp >> 6 & 63) as u8,
            0x80 | (cp & 63) as u8,
        ]),
    }
}

/// (now, value, expected) for every case of every group.
fn vectors() -> Vec<(f64, Vec<u8>, Option<f64>)> {
    let json = Reader {
        s: VECTORS.as_bytes(),
        at: 0,
    }
    .value();
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
