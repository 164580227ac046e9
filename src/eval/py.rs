//! Python's own string predicates, where the official evaluators' results hang on them and
//! Rust's differ: whitespace (`str.split`, `str.strip`, `re`'s `\s`), word characters (`re`'s
//! `\w` and `\b`), and `str.isupper` / `str.islower`. PRISM-FORMAT.md names each.

use unicode_properties::UnicodeGeneralCategory;

/// Python's `str.isspace` for one character (and `re`'s `\s`): Unicode's White_Space, as Rust
/// has it, plus the information separators U+001C..U+001F.
pub(crate) fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()`.
pub(crate) fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Python's `str.split()`: the non-empty runs between whitespace.
pub(crate) fn split(s: &str) -> impl Iterator<Item = &str> {
    s.split(is_space).filter(|w| !w.is_empty())
}

/// `re`'s `\w` on a `str` pattern: `str.isalnum()` or `_`, that is a letter (Lu, Ll, Lt, Lm,
/// Lo) or a number (Nd, Nl, No) of any script. Rust's `is_alphanumeric` also takes the marks
/// that are Other_Alphabetic (a Devanagari vowel sign), which Python does not. The categories
/// are the `regex` crate's (Unicode 16), not `unicode-properties`' (Unicode 17): a character
/// assigned only in Unicode 17 (U+058B, an Armenian modifier letter) is unassigned, so not a
/// word character, for every Python a PRISM evaluator runs on (3.11: Unicode 14; 3.13: 15.1).
pub(crate) fn is_word(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    static WORD: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let word = WORD.get_or_init(|| regex::Regex::new(r"^[\p{L}\p{N}]$").expect("a fixed pattern"));
    word.is_match(c.encode_utf8(&mut [0; 4]))
}

/// A title-case letter (category Lt: `ǅ`, `ᾈ`), which fails both `isupper` and `islower`.
fn is_title(c: char) -> bool {
    !c.is_ascii() && c.general_category() == unicode_properties::GeneralCategory::TitlecaseLetter
}

/// Python's `str.isupper`: some upper-case character, none lower-case or title-case.
pub(crate) fn is_upper(s: &str) -> bool {
    s.chars().any(char::is_uppercase) && !s.chars().any(|c| c.is_lowercase() || is_title(c))
}

/// Python's `str.islower`: some lower-case character, none upper-case or title-case.
pub(crate) fn is_lower(s: &str) -> bool {
    s.chars().any(char::is_lowercase) && !s.chars().any(|c| c.is_uppercase() || is_title(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each value here is what Python 3 gives (`"a\x1fb".split()` and so on).
    #[test]
    fn as_python_has_them() {
        assert_eq!(
            split("a\u{1f}b\u{1c} c").collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert_eq!(strip("\u{1e} x \u{85}"), "x");
        assert!(is_word('是') && is_word('é') && is_word('_') && is_word('Ж') && is_word('²'));
        assert!(!is_word('。') && !is_word('\u{093F}') && !is_word('-'));
        // Unassigned before Unicode 17 (a fuzz input): not a word character, as in Python.
        assert!(!is_word('\u{058B}') && !is_word('\u{058C}'));
        assert!(is_lower("abc") && !is_lower("ǅa") && !is_lower("ABC") && !is_lower("123"));
        assert!(is_upper("ABC 1") && !is_upper("ǅA") && !is_upper("Abc"));
    }
}
