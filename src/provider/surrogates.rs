//! Lone UTF-16 surrogate escapes in SSE JSON. A server that cuts its text into events by UTF-16
//! code units can end one event's text with the high half of a pair (`"A\ud83d"`) and start the
//! next with the low half (`"\ude00B"`). serde_json rightly refuses each as invalid, which would
//! fail the whole answer as a broken stream. [`repair`] joins such a pair across events into the
//! character it encodes, and turns any other lone half into U+FFFD, so the answer is kept.

use std::borrow::Cow;

pub(super) struct Repaired<'a> {
    /// The event's JSON, valid where surrogates are concerned.
    pub text: Cow<'a, str>,
    /// The `prev` high half was joined with a low half opening a string of this event.
    pub joined: bool,
    /// A high half that closes a string of this event: the next event may bring its low half.
    pub pending: Option<u16>,
}

/// `data` with its lone surrogate escapes resolved; `prev` is the high half the last event
/// ended with, if any.
pub(super) fn repair(data: &str, prev: Option<u16>) -> Repaired<'_> {
    // Fast path: no `\ud8..`-`\udf..` escape at all (nearly every event).
    if !has_surrogate_escape(data) {
        return Repaired {
            text: Cow::Borrowed(data),
            joined: false,
            pending: None,
        };
    }
    let b = data.as_bytes();
    let mut out = String::with_capacity(data.len());
    let (mut joined, mut pending) = (false, None);
    let (mut i, mut copied) = (0, 0);
    let mut in_string = false;
    // Where the current string's content starts (just after its opening quote).
    let mut string_start = 0;
    // The last string that closed, and the key of the value being read (a string followed by
    // `:`): only the answer's text (`content`, `text`) may carry a half over to the next
    // event; a half at the end of any other string (a token in `logprobs`) is U+FFFD there, so
    // a token never changes the answer.
    let mut last_closed = (0, 0);
    let (mut key, mut value_key) = (None::<(usize, usize)>, None::<(usize, usize)>);
    while i < b.len() {
        match b[i] {
            b'"' => {
                if in_string {
                    last_closed = (string_start, i);
                    key = None;
                } else {
                    value_key = key.take();
                }
                in_string = !in_string;
                string_start = i + 1;
                i += 1;
            }
            b':' if !in_string => {
                key = Some(last_closed);
                i += 1;
            }
            c if !in_string && !c.is_ascii_whitespace() => {
                key = None;
                i += 1;
            }
            b'\\' if in_string => {
                let Some(unit) = escape_at(b, i) else {
                    i += 2; // any other escape (\n, \", \\): skip both bytes
                    continue;
                };
                let end = i + 6;
                let next = escape_at(b, end);
                let replacement: Option<String> = match unit {
                    0xD800..=0xDBFF => match next {
                        // A proper pair: left as it is.
                        Some(lo) if (0xDC00..=0xDFFF).contains(&lo) => {
                            i = end + 6;
                            continue;
                        }
                        _ if b.get(end) == Some(&b'"')
                            && value_key
                                .is_some_and(|(a, z)| matches!(&b[a..z], b"content" | b"text")) =>
                        {
                            pending = Some(unit);
                            Some(String::new())
                        }
                        _ => Some("\\ufffd".into()),
                    },
                    0xDC00..=0xDFFF => match prev {
                        // Only the answer's text may take the half over: a low half opening
                        // another string (a role, a token) leaves the high one alone (U+FFFD).
                        Some(hi)
                            if i == string_start
                                && !joined
                                && value_key.is_some_and(|(a, z)| {
                                    matches!(&b[a..z], b"content" | b"text")
                                }) =>
                        {
                            joined = true;
                            let c = 0x10000
                                + ((u32::from(hi) - 0xD800) << 10)
                                + (u32::from(unit) - 0xDC00);
                            Some(char::from_u32(c).map_or("\\ufffd".into(), String::from))
                        }
                        _ => Some("\\ufffd".into()),
                    },
                    _ => None,
                };
                if let Some(r) = replacement {
                    out.push_str(&data[copied..i]);
                    out.push_str(&r);
                    copied = end;
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    out.push_str(&data[copied..]);
    Repaired {
        text: Cow::Owned(out),
        joined,
        pending,
    }
}

fn has_surrogate_escape(data: &str) -> bool {
    // By backslash, then the bytes after it: a searcher for the two bytes `\u` was built anew
    // for every chunk of every answer, and cost more than the search.
    memchr::memchr_iter(b'\\', data.as_bytes()).any(|i| {
        data.as_bytes().get(i + 1) == Some(&b'u')
            && matches!(data.as_bytes().get(i + 2), Some(b'd' | b'D'))
            && matches!(
                data.as_bytes().get(i + 3),
                Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
            )
    })
}

/// The code unit of a `\uXXXX` escape starting at `i`, if there is one.
fn escape_at(b: &[u8], i: usize) -> Option<u16> {
    if b.get(i) != Some(&b'\\') || b.get(i + 1) != Some(&b'u') {
        return None;
    }
    let hex = std::str::from_utf8(b.get(i + 2..i + 6)?).ok()?;
    u16::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(json: &str) -> String {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        v["content"].as_str().unwrap().to_string()
    }

    #[test]
    fn a_half_at_the_end_of_a_token_never_reaches_the_answer() {
        // The half closes a token string of `logprobs`, not the text: U+FFFD there, nothing
        // carried over to the next event (whose text would then get a U+FFFD).
        let a = repair(
            r#"{"content":"AB","logprobs":{"content":[{"token":"\ud83d","logprob":-1}]}}"#,
            None,
        );
        assert_eq!(a.pending, None);
        let v: serde_json::Value = serde_json::from_str(&a.text).unwrap();
        assert_eq!(v["content"], "AB");
        assert_eq!(v["logprobs"]["content"][0]["token"], "\u{FFFD}");
        // The answer's own text still carries its half over.
        let b = repair(r#"{"delta":{"text":"A\ud83d"}}"#, None);
        assert_eq!(b.pending, Some(0xD83D));
    }

    #[test]
    fn a_low_half_opening_another_string_never_takes_the_pending_high_half() {
        let r = repair(r#"{"delta":{"role":"\ude00","content":"B"}}"#, Some(0xD83D));
        assert!(!r.joined);
        let v: serde_json::Value = serde_json::from_str(&r.text).unwrap();
        assert_eq!(v["delta"]["role"], "\u{FFFD}");
        assert_eq!(v["delta"]["content"], "B");
    }

    #[test]
    fn a_pair_split_across_events_is_joined_and_lone_halves_become_fffd() {
        let a = repair(r#"{"content":"A\ud83d"}"#, None);
        assert_eq!(a.pending, Some(0xD83D));
        assert_eq!(content(&a.text), "A");
        let b = repair(r#"{"content":"\ude00B"}"#, a.pending);
        assert!(b.joined);
        assert_eq!(content(&b.text), "\u{1F600}B");
        // A whole pair inside one event is untouched (and borrowed when nothing else is odd).
        let whole = repair(r#"{"content":"x\ud83d\ude00y"}"#, None);
        assert_eq!(content(&whole.text), "x\u{1F600}y");
        // Lone halves in the middle of text, or a low half with no high before it.
        assert_eq!(
            content(&repair(r#"{"content":"a\ud83db"}"#, None).text),
            "a\u{FFFD}b"
        );
        assert_eq!(
            content(&repair(r#"{"content":"\ude00b"}"#, None).text),
            "\u{FFFD}b"
        );
        assert_eq!(
            content(&repair(r#"{"content":"a\uDE00"}"#, None).text),
            "a\u{FFFD}"
        );
        // An escaped backslash before `ud83d` is text, not an escape.
        let lit = repair(r#"{"content":"\\ud83d"}"#, None);
        assert_eq!(content(&lit.text), "\\ud83d");
        assert_eq!(lit.pending, None);
        // No surrogate escape: the input itself.
        assert!(matches!(
            repair(r#"{"content":"\u00e9"}"#, None).text,
            Cow::Borrowed(_)
        ));
    }
}
