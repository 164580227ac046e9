//! The common OpenAI stream chunk read in one pass, without serde.
//!
//! A run reads tens of thousands of chunks a second (35 for an answer of 2 KB), and serde's
//! typed parse of one, every ignored field tokenized on the way, was the largest single cost of
//! a job (about an eighth of `prism run`'s CPU). Nearly every chunk a server sends has one
//! shape: a flat object of scalars around `"choices":[{"index":0,"delta":{"content":"…"},
//! "finish_reason":null}]`. [`openai`] reads exactly that shape and answers `None` for
//! anything else (nested values outside the choice, several choices, log-probabilities, usage,
//! an error, escaped keys, exponents, surrogate escapes, duplicate fields, malformed JSON), and
//! the caller then parses the chunk with serde as before. So it never decides what serde would
//! not: what it accepts, serde reads to the same content and finish reason (checked against
//! serde by `provider::chunk_check`: its tests and the `openai_chunk` fuzz target).

use std::borrow::Cow;

/// What a chunk of the common shape says: its first choice's content and finish reason.
#[derive(Debug, PartialEq, Eq, Default)]
pub(crate) struct Scanned<'a> {
    /// `false` when `choices` is missing or `null`.
    pub choice: bool,
    pub content: Option<Cow<'a, str>>,
    pub finish_reason: Option<&'a str>,
}

/// `data` read as the common chunk shape, or `None` (parse it with serde).
pub(crate) fn openai(data: &str) -> Option<Scanned<'_>> {
    let mut s = Scan {
        b: data.as_bytes(),
        src: data,
        i: 0,
    };
    let mut out = Scanned::default();
    let mut seen_choices = false;
    s.ws();
    s.eat(b'{')?;
    s.members(|s, key| {
        match key {
            "choices" => {
                if std::mem::replace(&mut seen_choices, true) {
                    return None; // serde: duplicate field
                }
                if s.null() {
                    return Some(());
                }
                s.eat(b'[')?;
                s.ws();
                choice(s, &mut out)?;
                s.ws();
                s.eat(b']') // one choice only; more are left to serde
            }
            // Present and null is absent to serde; anything else is serde's to read.
            "usage" | "error" => s.null().then_some(()),
            _ => s.scalar(),
        }
    })?;
    s.ws();
    (s.i == s.b.len()).then_some(out)
}

/// The one choice: `delta` (an object of scalars), `finish_reason`, `logprobs` only as null,
/// other scalars ignored.
fn choice<'a>(s: &mut Scan<'a>, out: &mut Scanned<'a>) -> Option<()> {
    out.choice = true;
    let (mut delta, mut finish, mut logprobs, mut index) = (false, false, false, false);
    s.eat(b'{')?;
    s.members(|s, key| match key {
        "delta" => {
            if std::mem::replace(&mut delta, true) {
                return None;
            }
            if s.null() {
                return Some(());
            }
            let mut content = false;
            s.eat(b'{')?;
            s.members(|s, key| match key {
                "content" => {
                    if std::mem::replace(&mut content, true) {
                        return None;
                    }
                    out.content = s.string_or_null()?;
                    Some(())
                }
                _ => s.scalar(),
            })
        }
        "finish_reason" => {
            if std::mem::replace(&mut finish, true) {
                return None;
            }
            out.finish_reason = match s.string_or_null()? {
                None => None,
                Some(Cow::Borrowed(r)) => Some(r),
                Some(Cow::Owned(_)) => return None, // escaped: rare, serde's
            };
            Some(())
        }
        "logprobs" => {
            if std::mem::replace(&mut logprobs, true) {
                return None;
            }
            s.null().then_some(())
        }
        // The legacy completions' `text`: serde's.
        "text" => None,
        // Choice 0 is the answer; any other index (or a duplicate, or `null`) is serde's to
        // judge.
        "index" => {
            if std::mem::replace(&mut index, true) {
                return None;
            }
            s.lit(b"0").then_some(())
        }
        _ => s.scalar(),
    })
}

struct Scan<'a> {
    b: &'a [u8],
    src: &'a str,
    i: usize,
}

impl<'a> Scan<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    fn lit(&mut self, word: &[u8]) -> bool {
        let hit = self.b[self.i..].starts_with(word);
        if hit {
            self.i += word.len();
        }
        hit
    }

    fn null(&mut self) -> bool {
        self.lit(b"null")
    }

    /// The members of an object whose `{` was eaten, through its `}`: each key (unescaped keys
    /// only: serde compares a key after unescaping) handed to `f` with the value next.
    fn members(&mut self, mut f: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.ws();
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            self.ws();
            let key = match self.string()? {
                Cow::Borrowed(k) => k,
                Cow::Owned(_) => return None,
            };
            self.ws();
            self.eat(b':')?;
            self.ws();
            f(self, key)?;
            self.ws();
            match self.b.get(self.i)? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A value that is a string, a plain number or a literal; `None` for objects and arrays
    /// (serde's to skip).
    fn scalar(&mut self) -> Option<()> {
        match self.b.get(self.i)? {
            b'"' => self.string().map(drop),
            b't' => self.lit(b"true").then_some(()),
            b'f' => self.lit(b"false").then_some(()),
            b'n' => self.null().then_some(()),
            _ => self.number(),
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, at most 19 digits: what any reader takes as it is
    /// (exponents and longer numbers are serde's, with its range rules).
    fn number(&mut self) -> Option<()> {
        let start = self.i;
        let _ = self.eat(b'-');
        let digits = |s: &mut Self| {
            let from = s.i;
            while s.b.get(s.i).is_some_and(u8::is_ascii_digit) {
                s.i += 1;
            }
            s.i - from
        };
        let first = *self.b.get(self.i)?;
        let whole = digits(self);
        if whole == 0 || (first == b'0' && whole > 1) {
            return None;
        }
        if self.eat(b'.').is_some() && digits(self) == 0 {
            return None;
        }
        if matches!(self.b.get(self.i), Some(b'e' | b'E')) || self.i - start > 20 {
            return None;
        }
        Some(())
    }

    fn string_or_null(&mut self) -> Option<Option<Cow<'a, str>>> {
        if self.null() {
            return Some(None);
        }
        self.string().map(Some)
    }

    /// A JSON string at the cursor: borrowed when it has no escape, unescaped when it has.
    /// `None` for what JSON forbids in a string (a control character, an unknown escape) and
    /// for `\u` escapes of surrogates (serde's, which the stream's repair has already seen).
    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        let start = self.i;
        let mut owned: Option<String> = None;
        let mut copied = start;
        loop {
            // The next quote or backslash by memchr; a raw control character before it (JSON
            // forbids them in strings) by a branch-free pass over the span.
            let rel = memchr::memchr2(b'"', b'\\', &self.b[self.i..])?;
            let span = &self.b[self.i..self.i + rel];
            if span.iter().fold(0u8, |any, &c| any | u8::from(c < 0x20)) != 0 {
                return None;
            }
            self.i += rel;
            match self.b[self.i] {
                b'"' => {
                    let end = self.i;
                    self.i += 1;
                    return Some(match owned {
                        None => Cow::Borrowed(&self.src[start..end]),
                        Some(mut o) => {
                            o.push_str(&self.src[copied..end]);
                            Cow::Owned(o)
                        }
                    });
                }
                b'\\' => {
                    let o = owned.get_or_insert_with(String::new);
                    o.push_str(&self.src[copied..self.i]);
                    let c = match *self.b.get(self.i + 1)? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hex = self.src.get(self.i + 2..self.i + 6)?;
                            if !hex.bytes().all(|h| h.is_ascii_hexdigit()) {
                                return None;
                            }
                            let v = u32::from_str_radix(hex, 16).ok()?;
                            self.i += 4;
                            char::from_u32(v)? // surrogates are not chars: serde's
                        }
                        _ => return None,
                    };
                    o.push(c);
                    self.i += 2;
                    copied = self.i;
                }
                _ => unreachable!("memchr2 finds a quote or a backslash"),
            }
        }
    }
}
