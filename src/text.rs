//! Text hygiene for anything drawn on the terminal.
//!
//! Dataset text (and, later, model output) is untrusted: an escape sequence in it could move the
//! cursor, change colours or retitle the terminal. Everything is passed through [`sanitize`]
//! before it reaches a widget.

use std::borrow::Cow;

/// Removes control characters (ANSI escapes included) except newlines; tabs become spaces.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() && c != '\n') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            '\u{1b}' => skip_escape(&mut chars),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// One line: sanitized, with line breaks folded to spaces (for list previews).
pub fn one_line(s: &str) -> String {
    let clean = sanitize(s);
    let mut out = String::with_capacity(clean.len().min(512));
    let mut last_space = false;
    for c in clean.chars() {
        let c = if c.is_whitespace() { ' ' } else { c };
        if c == ' ' && last_space {
            continue;
        }
        last_space = c == ' ';
        out.push(c);
        // Previews are one row; never build a megabyte string for them.
        if out.len() > 1024 {
            break;
        }
    }
    out.trim().to_string()
}

/// Skips the rest of an escape sequence: CSI (`ESC [ ... final`), OSC (`ESC ] ... BEL|ST`),
/// or a two-character escape.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        }
        Some(']') | Some('P') | Some('_') | Some('^') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                    chars.next();
                    break;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_escapes_and_controls_but_keeps_text() {
        assert_eq!(sanitize("plain"), "plain");
        assert_eq!(sanitize("a\u{1b}[31mred\u{1b}[0m b"), "ared b");
        assert_eq!(sanitize("x\u{1b}]0;title\u{7}y"), "xy");
        assert_eq!(sanitize("x\u{1b}]8;;http://e\u{1b}\\y"), "xy");
        assert_eq!(sanitize("tab\there\r\n\u{0}"), "tab    here\n");
        assert_eq!(sanitize("中文 ok"), "中文 ok");
    }

    #[test]
    fn one_line_folds_whitespace() {
        assert_eq!(one_line("  a\n\nb\t c "), "a b c");
    }
}
