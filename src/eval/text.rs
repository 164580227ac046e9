//! Text normalisation shared by the rule evaluators, exactly as PRISM-FORMAT.md defines it.

/// "normal": whitespace collapsed, trimmed, lower-cased.
pub(crate) fn normal(s: &str) -> String {
    collapse(s, &NORMAL)
}

/// "loose": normal, then the characters `. , ; : ! ? ' " ( ) [ ] { }` removed, whitespace
/// collapsed again.
pub(crate) fn loose(s: &str) -> String {
    collapse(s, &LOOSE)
}

/// In an ASCII byte map: the byte is whitespace (Python's `str.isspace` in ASCII: tab to
/// carriage return, the separators U+001C..U+001F and space; unlike `u8::is_ascii_whitespace`
/// it includes the vertical tab).
const SPACE: u8 = 0x80;
/// In an ASCII byte map: the byte is removed.
const DROP: u8 = 0x81;

/// What each ASCII byte becomes: its lower case, or [`SPACE`], or [`DROP`] for the bytes in
/// `drops`. 256 entries, so indexing by any byte needs no bounds check.
const fn ascii_map(drops: &[u8]) -> [u8; 256] {
    let mut t = [DROP; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = (b as u8).to_ascii_lowercase();
        b += 1;
    }
    let mut w = b'\t';
    while w <= b'\r' {
        t[w as usize] = SPACE;
        w += 1;
    }
    t[b' ' as usize] = SPACE;
    // Python's `str.split()` also splits on the information separators U+001C..U+001F.
    let mut w = 0x1c;
    while w <= 0x1f {
        t[w] = SPACE;
        w += 1;
    }
    let mut i = 0;
    while i < drops.len() {
        t[drops[i] as usize] = DROP;
        i += 1;
    }
    t
}

static NORMAL: [u8; 256] = ascii_map(b"");
static LOOSE: [u8; 256] = ascii_map(b".,;:!?'\"()[]{}");

/// The words of `s` lower-cased, without the characters `map` marks [`DROP`], joined by one space (a word left empty is left out). One pass and one
/// allocation: every answer is scored as it arrives, and answers run to kilobytes.
/// Lower-casing word by word equals lower-casing the joined text (the only context-dependent
/// mapping, a final sigma, looks no further than the word), so the result is the
/// definition's, as the tests check against it.
fn collapse(s: &str, map: &[u8; 256]) -> String {
    if s.is_ascii() {
        return collapse_ascii(s, map);
    }
    // Every character removed is ASCII: the map says which.
    let drop = |c: char| c.is_ascii() && map[c as usize] == DROP;
    let mut out = String::with_capacity(s.len());
    for word in super::py::split(s) {
        let start = out.len();
        if start > 0 {
            out.push(' ');
        }
        let mark = out.len();
        if word.is_ascii() {
            out.extend(
                word.bytes()
                    .map(|b| char::from(b.to_ascii_lowercase()))
                    .filter(|&c| !drop(c)),
            );
        } else {
            out.extend(word.to_lowercase().chars().filter(|&c| !drop(c)));
        }
        if out.len() == mark {
            out.truncate(start);
        }
    }
    out
}

/// [`collapse`] of an ASCII text (most answers), a byte at a time through `map`, in one pass:
/// a byte kept after whitespace, with something kept before it, is preceded by one space. The
/// result is never longer than the text (a space stands for at least one whitespace byte), so
/// it is written into a buffer of the text's length, without a capacity check per byte. (A
/// branch-free body and a separate loop per word were both tried: more instructions.)
fn collapse_ascii(s: &str, map: &[u8; 256]) -> String {
    let mut out = vec![0u8; s.len()];
    let (mut n, mut space) = (0, false);
    for &b in s.as_bytes() {
        let m = map[usize::from(b)];
        if m < SPACE {
            if space {
                out[n] = b' ';
                n += 1;
                space = false;
            }
            out[n] = m;
            n += 1;
        } else if m == SPACE {
            space = n > 0;
        }
    }
    out.truncate(n);
    // ASCII in, ASCII out: the check cannot fail (and costs a fast pass, not unsafe code).
    String::from_utf8(out).unwrap_or_default()
}

/// The runs of ASCII digits in `s`, in order.
pub(crate) fn digit_runs(s: &str) -> Vec<&str> {
    s.split(|c: char| !c.is_ascii_digit())
        .filter(|r| !r.is_empty())
        .collect()
}

/// A failed response scores 0: missing, empty or only whitespace, or an API error written as
/// `ERROR: ...` by the official scripts.
pub(crate) fn is_failed(response: Option<&str>) -> bool {
    match response {
        None => true,
        Some(r) => super::py::strip(r).is_empty() || r.starts_with("ERROR:"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_and_loose_forms() {
        assert_eq!(normal("  Lisbon,\n  PORTUGAL "), "lisbon, portugal");
        assert_eq!(loose("  \"Lisbon\", (Portugal)! "), "lisbon portugal");
        assert_eq!(loose("a . b"), "a b");
        assert_eq!(
            digit_runs("19,213 people in 2011"),
            vec!["19", "213", "2011"]
        );
        assert!(is_failed(Some("ERROR: HTTP 500")));
        assert!(is_failed(Some(" \n")));
        assert!(is_failed(None));
        assert!(!is_failed(Some("x")));
        // Python's whitespace: the information separators split words (`"a\x1fb".split()`).
        assert_eq!(normal("a\u{1f}b"), "a b");
        assert_eq!(normal("Ä\u{1c}b\u{85}C"), "ä b c");
        assert!(is_failed(Some("\u{1e}\u{1f}")));
    }

    /// Python's `str.split()`, written apart: White_Space and U+001C..U+001F.
    fn py_words(s: &str) -> Vec<&str> {
        s.split(|c: char| c.is_whitespace() || matches!(c, '\u{1c}'..='\u{1f}'))
            .filter(|w| !w.is_empty())
            .collect()
    }

    /// The definitions, written as PRISM-FORMAT.md states them.
    fn normal_by_definition(s: &str) -> String {
        py_words(s).join(" ").to_lowercase()
    }

    fn loose_by_definition(s: &str) -> String {
        let stripped: String = normal_by_definition(s)
            .chars()
            .filter(|c| !".,;:!?'\"()[]{}".contains(*c))
            .collect();
        py_words(&stripped).join(" ")
    }

    /// Every ASCII character, alone, inside a word and between words, through the byte maps.
    #[test]
    fn every_ascii_character_maps_as_the_definitions_say() {
        for b in 0u8..128 {
            let c = char::from(b);
            for s in [
                format!("{c}"),
                format!("Ab{c}Cd"),
                format!("x {c} Y"),
                format!("{c}{c}z"),
            ] {
                assert_eq!(normal(&s), normal_by_definition(&s), "{s:?}");
                assert_eq!(loose(&s), loose_by_definition(&s), "{s:?}");
            }
        }
    }

    #[test]
    fn one_pass_forms_equal_the_definitions() {
        use rand::{Rng, SeedableRng};
        let pieces = [
            "a", "B", "Paris", "ΟΔΟΣ", "ΣΑΣ", "Σ", "σ", "İ", "ẞ", "Ǆ", "ǅ", "东京", ".", ",", "'",
            "\"", "(", ")", "[", "]", "{", "}", "!?", "-", "…", " ", "  ", "\n", "\t", "\u{a0}",
            "\u{3000}", "\u{85}", "\u{2028}", "\u{b}", "\u{c}", "\r", "\u{1f}", "é", "É", "ﬁ", "K",
            "Å", "1", "x.y", ":)",
        ];
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..20_000 {
            let n = rng.random_range(0..12);
            let s: String = (0..n)
                .map(|_| pieces[rng.random_range(0..pieces.len())])
                .collect();
            assert_eq!(normal(&s), normal_by_definition(&s), "{s:?}");
            assert_eq!(loose(&s), loose_by_definition(&s), "{s:?}");
        }
    }
}
