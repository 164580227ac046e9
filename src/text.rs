//! Text hygiene for anything drawn on the terminal.
//!
//! Dataset text and model output are untrusted: an escape sequence in them could move the
//! cursor, change colours or retitle the terminal. Everything is passed through [`sanitize`]
//! before it reaches a widget.

use std::borrow::Cow;

/// Unicode format characters that change how text is shown without being seen: the bidi
/// controls (U+202A-U+202E, U+2066-U+2069, U+200E/F, U+061C) that can make `evil.exe` read as
/// `exe.live`, zero-width spaces and joiners, word joiners and invisible operators, the BOM, the
/// soft hyphen, the interlinear annotation marks and the tag characters.
pub fn is_hidden_format(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{061C}' | '\u{180E}'
        | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{206F}'
        | '\u{FEFF}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{E0000}'..='\u{E007F}')
}

/// Whether every byte of `s` is printable ASCII or one that `keep` allows: such text has
/// nothing to clean or escape. Most answers and events are ASCII; this checks them 64 bytes at
/// a time without an early exit (so the compiler vectorizes it), where a walk of their chars
/// asked two Unicode questions per character.
fn plain_ascii(s: &str, keep: impl Fn(u8) -> bool) -> bool {
    s.as_bytes().chunks(64).all(|chunk| {
        chunk
            .iter()
            .fold(true, |ok, &b| ok & ((0x20..0x7F).contains(&b) | keep(b)))
    })
}

fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n') || is_hidden_format(c)
}

/// Removes control characters (ANSI escapes included) except newlines, and the invisible format
/// characters of [`is_hidden_format`]; tabs become spaces.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if plain_ascii(s, |b| b == b'\n') || !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            '\u{1b}' => skip_escape(&mut chars),
            c if unsafe_char(c) => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// JSON text for a terminal: the invisible format characters (bidi controls, zero-width
/// characters) and the control characters serde_json leaves raw (DEL, C1) written as `\uXXXX`
/// escapes. The JSON means the same (they decode to the same characters), but none of them acts
/// on the terminal it is printed to.
pub fn json_for_terminal(json: &str) -> Cow<'_, str> {
    // serde_json escapes C0 controls only: DEL and the C1 controls (U+0080-U+009F, where
    // U+009B is a one-character CSI) are written raw unless escaped here.
    let escaped = |c: char| is_hidden_format(c) || c.is_control() && !c.is_ascii_whitespace();
    if plain_ascii(json, |b| matches!(b, b'\t' | b'\n' | 0x0C | b'\r'))
        || !json.chars().any(escaped)
    {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if escaped(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`sanitize`] for one line of terminal output (CLI messages, table cells): newlines become
/// spaces too.
pub fn clean_line(s: &str) -> Cow<'_, str> {
    if plain_ascii(s, |_| false) || !s.chars().any(|c| unsafe_char(c) || c == '\n') {
        return Cow::Borrowed(s);
    }
    Cow::Owned(sanitize(s).replace('\n', " "))
}

/// `println!` for text that may hold strings of outside origin (dataset ids, model names, error
/// messages from servers): formatted, then [`sanitize`]d, so no escape sequence or bidi control
/// reaches the terminal.
#[macro_export]
macro_rules! say {
    ($($t:tt)*) => { $crate::text::out(&format!("{}\n", $crate::text::sanitize(&format!($($t)*)))) };
}

/// Writes to stdout. A reader that went away (`prism runs | head`) ends the process quietly
/// with the shell's code for it (141, as SIGPIPE would), instead of a panic: what was printed
/// was what the reader wanted.
pub fn out(text: &str) {
    use std::io::{IsTerminal, Write};
    static TERMINAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    // On a terminal every path strips escapes (a CSV's model name, a run id from a shared
    // store); piped or redirected, the bytes are the data's own.
    let text = if *TERMINAL.get_or_init(|| std::io::stdout().is_terminal()) {
        sanitize(text)
    } else {
        Cow::Borrowed(text)
    };
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_all(text.as_bytes()).and_then(|()| o.flush())
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        std::process::exit(141);
    }
}

/// `println!` and `print!` through [`out`]: a reader that went away ends the process quietly
/// instead of a panic. Sanitised only when stdout is a terminal (see [`out`]; JSON goes
/// through `json_for_terminal` either way).
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => { $crate::text::out(&format!("{}\n", format_args!($($t)*))) };
}

#[macro_export]
macro_rules! outp {
    ($($t:tt)*) => { $crate::text::out(&format!($($t)*)) };
}

/// [`say!`] on stderr.
#[macro_export]
macro_rules! warn {
    ($($t:tt)*) => { eprintln!("{}", $crate::text::sanitize(&format!($($t)*))) };
}

/// A name (model, task) as one file or directory name: path separators and odd characters
/// become `_`, and `.`/`..`/empty become `_`, so it never leaves the directory it is joined to.
pub fn file_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s == "." || s == ".." {
        "_".into()
    } else {
        s
    }
}

/// Text of outside origin (a reference answer, a keyword from a dataset) in quotes, as it reads:
/// control and escape sequences stripped, on one line. `{:?}` would show `\u{1b}]0;…`, which
/// is safe but unreadable.
pub fn quoted(s: &str) -> String {
    format!("\"{}\"", clean_line(s))
}

/// `s` cut to `max` display columns, with `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    if s.width() <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw > max - 1 {
            break;
        }
        w += cw;
        out.push(c);
    }
    out.push('…');
    out
}

/// `s` broken into lines of at most `width` display columns, at spaces where it can (a word
/// longer than the width is cut).
pub fn wrap(s: &str, width: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthStr;
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in s.split_whitespace() {
        let sep = usize::from(!cur.is_empty());
        if cur.width() + sep + word.width() <= width {
            if sep == 1 {
                cur.push(' ');
            }
            cur.push_str(word);
            continue;
        }
        if !cur.is_empty() {
            lines.push(std::mem::take(&mut cur));
        }
        let mut w = word.to_string();
        while w.width() > width {
            let mut head = String::new();
            let mut hw = 0;
            for c in w.chars() {
                let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                if hw + cw > width {
                    break;
                }
                hw += cw;
                head.push(c);
            }
            if head.is_empty() {
                // A character wider than the line: it gets a line of its own.
                head = w.chars().next().map(String::from).unwrap_or_default();
            }
            let rest = w[head.len()..].to_string();
            lines.push(head);
            w = rest;
        }
        cur = w;
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// A table cell of exactly `width` columns: the text made safe and one line first (so what is
/// stripped later cannot shift the columns), cut with `…` or padded by display width (so wide
/// characters line up too).
pub fn cell(s: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    let clean = clean_line(s);
    let cut = truncate(&clean, width);
    let pad = width.saturating_sub(cut.width());
    format!("{cut}{}", " ".repeat(pad))
}

/// An argument as a POSIX shell reads it back: hints that name a command quote the paths they
/// repeat, so the command can be pasted as printed.
pub fn shell_quote(arg: &str) -> String {
    match shlex::try_quote(arg) {
        Ok(q) => q.into_owned(),
        // Only a NUL byte cannot be quoted; no path or name we print holds one.
        Err(_) => format!("{arg:?}"),
    }
}

/// Line numbers for a message: the first `max`, then how many more ("3, 9, 12 and 240 more").
pub fn number_list(ns: &[usize], max: usize) -> String {
    let shown: Vec<String> = ns.iter().take(max).map(usize::to_string).collect();
    let mut out = shown.join(", ");
    if ns.len() > max {
        out.push_str(&format!(" and {} more", ns.len() - max));
    }
    out
}

/// `v` with `decimals` digits after the point, never `-0.0`: a value that rounds to zero is
/// zero, whatever its sign.
pub fn fixed(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => s,
    }
}

/// A name from a store (a run's name, a tag) as a message shows it: one line, at most `max`
/// columns (cut with `…`): a name set elsewhere may be a megabyte long.
pub fn shown_name(s: &str, max: usize) -> String {
    truncate(&one_line(s), max)
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
    #[test]
    fn wrap_breaks_at_spaces_within_the_width_and_cuts_only_long_words() {
        use unicode_width::UnicodeWidthStr;
        assert_eq!(
            wrap("mark the item for a run", 10),
            vec!["mark the", "item for a", "run"]
        );
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 5), vec![""]);
        for l in wrap("名前です 名前です", 3) {
            assert!(l.width() <= 3 || l.chars().count() == 1, "{l}");
        }
        assert_eq!(wrap("名", 1), vec!["名"]);
    }

    #[test]
    fn cells_line_up_whatever_the_name_holds_and_quotes_read_as_text() {
        use unicode_width::UnicodeWidthStr;
        for name in [
            "ann",
            "bob\u{1b}[31mred\u{1b}[0m",
            "\u{1b}]0;pwned\u{7}x",
            "名前です",
            "a\nb",
        ] {
            let c = cell(name, 12);
            assert_eq!(sanitize(&c), c, "{name:?}");
            assert_eq!(c.width(), 12, "{name:?} -> {c:?}");
        }
        assert_eq!(cell("a-very-long-reviewer-name", 8), "a-very-…");
        assert_eq!(quoted("x\u{1b}]0;pwned\u{7}"), "\"x\"");
        assert_eq!(quoted("206"), "\"206\"");
    }

    use super::*;

    /// The ASCII fast paths pass a text exactly when the character walk finds nothing to do.
    #[test]
    fn the_ascii_fast_paths_agree_with_the_character_walk() {
        for b in 0u8..128 {
            let c = char::from(b);
            let s = format!("x{c}y").repeat(40); // past one 64-byte chunk
            let walk_sanitize = !s.chars().any(unsafe_char);
            let walk_json = !s
                .chars()
                .any(|c| is_hidden_format(c) || c.is_control() && !c.is_ascii_whitespace());
            let walk_line = !s.chars().any(|c| unsafe_char(c) || c == '\n');
            assert_eq!(plain_ascii(&s, |b| b == b'\n'), walk_sanitize, "{b}");
            assert_eq!(
                plain_ascii(&s, |b| matches!(b, b'\t' | b'\n' | 0x0C | b'\r')),
                walk_json,
                "{b}"
            );
            assert_eq!(plain_ascii(&s, |_| false), walk_line, "{b}");
            assert_eq!(matches!(sanitize(&s), Cow::Borrowed(_)), walk_sanitize);
            assert_eq!(matches!(json_for_terminal(&s), Cow::Borrowed(_)), walk_json);
            assert_eq!(matches!(clean_line(&s), Cow::Borrowed(_)), walk_line);
        }
        // Anything beyond ASCII takes the walk.
        assert!(!plain_ascii("caf\u{e9}", |b| b == b'\n'));
        assert_eq!(sanitize("a\u{202e}b"), "ab");
    }

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
    fn strips_bidi_and_zero_width_characters() {
        // "evil\u{202E}txt.exe" shows as "evilexe.txt" in a bidi-aware terminal.
        assert_eq!(sanitize("evil\u{202E}txt.exe"), "eviltxt.exe");
        assert_eq!(
            sanitize("a\u{200B}b\u{200D}c\u{FEFF}d\u{2066}e\u{2069}"),
            "abcde"
        );
        assert_eq!(sanitize("soft\u{00AD}hyphen"), "softhyphen");
        assert_eq!(clean_line("two\nlines\u{202E}"), "two lines");
        // Joiners inside emoji sequences are dropped too: the emoji still shows, split.
        assert_eq!(sanitize("👩\u{200D}💻"), "👩💻");
        assert!(matches!(sanitize("plain ünïcode"), Cow::Borrowed(_)));
    }

    #[test]
    fn c1_controls_and_del_are_escaped_in_json() {
        let v = serde_json::json!({"m": "a\u{9b}31mred\u{7f}\u{85}"});
        let printed = json_for_terminal(&v.to_string()).into_owned();
        assert!(!printed.chars().any(|c| c.is_control()), "{printed:?}");
        assert!(
            printed.contains("\\u009b") && printed.contains("\\u007f"),
            "{printed}"
        );
        let back: serde_json::Value = serde_json::from_str(&printed).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn json_keeps_its_meaning_but_not_the_controls() {
        let v = serde_json::json!({"id": "evil\u{202e}txt \u{e0041}"});
        let printed = json_for_terminal(&v.to_string()).into_owned();
        assert!(
            !printed.contains('\u{202e}') && !printed.contains('\u{e0041}'),
            "{printed}"
        );
        assert!(
            printed.contains("\\u202e") && printed.contains("\\udb40\\udc41"),
            "{printed}"
        );
        let back: serde_json::Value = serde_json::from_str(&printed).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn no_negative_zero_and_names_cut() {
        assert_eq!(fixed(-0.0, 1), "0.0");
        assert_eq!(fixed(-0.04, 1), "0.0");
        assert_eq!(fixed(-0.06, 1), "-0.1");
        assert_eq!(fixed(12.345, 2), "12.35");
        let long = "x".repeat(1 << 20);
        assert_eq!(shown_name(&long, 10).chars().count(), 10);
    }

    #[test]
    fn one_line_folds_whitespace() {
        assert_eq!(one_line("  a\n\nb\t c "), "a b c");
    }
}
