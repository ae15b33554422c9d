//! A reader for the JSON subset of the vector files shared with the
//! JavaScript tests (objects, arrays, strings with escapes, numbers, null),
//! so that the crate's tests need no JSON dependency. Used by
//! retry_after_vectors.rs, server_wait_vectors.rs and policy_vectors.rs.
#![allow(dead_code)] // each test file uses its own part

#[derive(Debug)]
pub enum Json {
    Null,
    Bool(bool),
    Num(f64),
    /// WTF-8: the file's strings may hold lone surrogates.
    Str(Vec<u8>),
    Arr(Vec<Json>),
    Obj(Vec<(Vec<u8>, Json)>),
}

impl Json {
    pub fn get(&self, key: &str) -> &Json {
        match self {
            Json::Obj(fields) => fields
                .iter()
                .find(|(k, _)| k == key.as_bytes())
                .map(|(_, v)| v)
                .unwrap_or_else(|| panic!("no {key:?}")),
            _ => panic!("not an object: {self:?}"),
        }
    }
    /// The field `key`, if the object has it.
    pub fn field(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(fields) => fields
                .iter()
                .find(|(k, _)| k == key.as_bytes())
                .map(|(_, v)| v),
            _ => panic!("not an object: {self:?}"),
        }
    }
    pub fn boolean(&self) -> bool {
        match self {
            Json::Bool(b) => *b,
            _ => panic!("not a boolean: {self:?}"),
        }
    }
    pub fn arr(&self) -> &[Json] {
        match self {
            Json::Arr(items) => items,
            _ => panic!("not an array: {self:?}"),
        }
    }
    pub fn num(&self) -> f64 {
        match self {
            Json::Num(n) => *n,
            _ => panic!("not a number: {self:?}"),
        }
    }
    pub fn bytes(&self) -> &[u8] {
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
            b't' if self.s[self.at..].starts_with(b"true") => {
                self.at += 4;
                Json::Bool(true)
            }
            b'f' if self.s[self.at..].starts_with(b"false") => {
                self.at += 5;
                Json::Bool(false)
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

/// The value `text` holds.
pub fn parse(text: &str) -> Json {
    Reader {
        s: text.as_bytes(),
        at: 0,
    }
    .value()
}

impl Json {
    /// A string as UTF-8 text.
    pub fn str(&self) -> &str {
        std::str::from_utf8(self.bytes()).expect("UTF-8")
    }
}
