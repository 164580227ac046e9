//! An answer in sentences, each with its byte span in the answer (so a screen draws it in
//! place). Prose is cut at Unicode sentence boundaries (UAX #29, `unicode-segmentation`),
//! which keep numbers like "3.5" whole and do not cut before a lower-case word ("U.S. army");
//! a boundary after a known abbreviation ("Dr.", "e.g.") or initials ("U.S.", "J.") is taken
//! back. A list item is a sentence of its own (or several, when it holds several); a fenced code
//! block is one unit, never cut inside; a blank line always ends a sentence.

use unicode_segmentation::UnicodeSegmentation;

/// One sentence: its text (the answer's bytes `start..end`, without the spaces around it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Sentence {
    pub text: String,
    pub start: usize,
    pub end: usize,
}

/// Words after which a full stop rarely ends a sentence (lower-case, with their dot).
const ABBREVIATIONS: &[&str] = &[
    "mr.", "mrs.", "ms.", "dr.", "prof.", "st.", "sr.", "jr.", "vs.", "e.g.", "i.e.", "cf.",
    "fig.", "approx.", "inc.", "ltd.", "co.", "corp.", "dept.", "est.", "gen.", "gov.", "lt.",
    "col.", "sgt.", "capt.", "rev.", "vol.", "pp.", "p.", "ca.", "jan.", "feb.", "mar.", "apr.",
    "aug.", "sept.", "sep.", "oct.", "nov.", "dec.", "mt.", "ft.", "al.",
];

/// The sentences of `answer`, in order. Pieces with no letter or digit (a lone dash, a list
/// marker) are not sentences.
pub fn split(answer: &str) -> Vec<Sentence> {
    let mut out = Vec::new();
    for (start, end, kind) in blocks(answer) {
        match kind {
            Block::Code => push(&mut out, answer, start, end),
            Block::Prose => prose(&mut out, answer, start, end),
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Block {
    Prose,
    Code,
}

/// The answer's blocks: fenced code, list items, and paragraphs (lines between blank lines).
fn blocks(answer: &str) -> Vec<(usize, usize, Block)> {
    let mut out = Vec::new();
    let mut para: Option<(usize, usize)> = None;
    let mut code: Option<usize> = None;
    let mut at = 0;
    for line in answer.split_inclusive('\n') {
        let (start, end) = (at, at + line.len());
        at = end;
        let t = line.trim();
        if let Some(c) = code {
            if t.starts_with("```") {
                out.push((c, end, Block::Code));
                code = None;
            }
            continue;
        }
        let fence = t.starts_with("```");
        // A Markdown heading is a line of its own: a paragraph ends before it and after it.
        let heading = t.starts_with('#');
        if (fence || t.is_empty() || is_list_item(t) || heading)
            && let Some((s, e)) = para.take()
        {
            out.push((s, e, Block::Prose));
        }
        if fence {
            code = Some(start);
        } else if heading {
            out.push((start, end, Block::Prose));
        } else if is_list_item(t) {
            para = Some((start, end));
        } else if !t.is_empty() {
            para = Some(para.map_or((start, end), |(s, _)| (s, end)));
        }
    }
    if let Some(c) = code {
        out.push((c, answer.len(), Block::Code));
    }
    if let Some((s, e)) = para {
        out.push((s, e, Block::Prose));
    }
    out
}

/// "- x", "* x", "+ x", "1. x", "2) x".
fn is_list_item(t: &str) -> bool {
    if let Some(rest) = t.strip_prefix(['-', '*', '+', '•']) {
        return rest.starts_with(' ');
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0
        && digits < 4
        && matches!(t.as_bytes().get(digits), Some(b'.' | b')'))
        && t.as_bytes().get(digits + 1) == Some(&b' ')
}

fn prose(out: &mut Vec<Sentence>, answer: &str, start: usize, end: usize) {
    // A line break inside a paragraph is a space here (UAX #29 ends a sentence at every line
    // break); one byte for one, so the spans stay the answer's.
    let block = answer[start..end].replace(['\n', '\r'], " ");
    let mut from: Option<usize> = None;
    let pieces: Vec<(usize, &str)> = block.split_sentence_bound_indices().collect();
    for (i, (off, piece)) in pieces.iter().enumerate() {
        let s = *from.get_or_insert(*off);
        let next = pieces.get(i + 1).map(|(_, p)| *p);
        if next.is_some_and(|n| continues(piece, n)) {
            continue;
        }
        push(out, answer, start + s, start + off + piece.len());
        from = None;
    }
}

/// Whether the boundary after `piece` is to be taken back: it ends with an abbreviation or
/// initials ("etc." only before a lower-case word).
fn continues(piece: &str, next: &str) -> bool {
    // A list's marker ("1.", "2)") is the start of its item, not a sentence.
    let t = piece.trim();
    if !t.contains(char::is_whitespace) && is_list_item(&format!("{t} x")) {
        return true;
    }
    let Some(last) = piece.split_whitespace().last() else {
        return false;
    };
    let last = last
        .trim_start_matches(['(', '"', '\'', '“', '‘'])
        .to_lowercase();
    if ABBREVIATIONS.contains(&last.as_str()) {
        return true;
    }
    if last == "etc." {
        return next.trim_start().starts_with(char::is_lowercase);
    }
    // "No. 5" (a number); "No. It was..." is an answer and its reason, two sentences.
    if last == "no." {
        return next.trim_start().starts_with(|c: char| c.is_ascii_digit());
    }
    // Initials: "U.S.", "a.m." (letters each followed by a dot).
    let b = last.as_bytes();
    let initials = b.len() >= 2
        && b.len() <= 8
        && b.chunks(2)
            .all(|c| c.len() == 2 && c[0].is_ascii_alphabetic() && c[1] == b'.');
    if !initials {
        return false;
    }
    if b.len() > 2 {
        return true;
    }
    // One letter ("J.") is an initial when the piece is nothing else ("J. K. Rowling") or
    // follows a name ("John F. Kennedy"); "A is B. C is D." is two sentences.
    let words: Vec<&str> = piece.split_whitespace().collect();
    words.len() == 1
        || words
            .get(words.len().wrapping_sub(2))
            .is_some_and(|w| w.starts_with(char::is_uppercase))
            && next.trim_start().starts_with(char::is_uppercase)
}

/// Adds `answer[start..end]` without the spaces around it, when it holds a letter or digit.
fn push(out: &mut Vec<Sentence>, answer: &str, start: usize, end: usize) {
    let raw = &answer[start..end];
    let lead = raw.len() - raw.trim_start().len();
    let text = raw.trim();
    if !text.chars().any(char::is_alphanumeric) {
        return;
    }
    let s = start + lead;
    out.push(Sentence {
        text: text.to_string(),
        start: s,
        end: s + text.len(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(a: &str) -> Vec<String> {
        split(a).into_iter().map(|s| s.text).collect()
    }

    #[test]
    fn numbers_abbreviations_and_initials_do_not_cut() {
        assert_eq!(
            texts("Pi is about 3.14 in value. Dr. Smith moved to the U.S. in 1990. He left."),
            [
                "Pi is about 3.14 in value.",
                "Dr. Smith moved to the U.S. in 1990.",
                "He left."
            ]
        );
        assert_eq!(
            texts("Fruits, e.g. apples, are sweet. J. K. Rowling wrote it! Did she? Yes."),
            [
                "Fruits, e.g. apples, are sweet.",
                "J. K. Rowling wrote it!",
                "Did she?",
                "Yes."
            ]
        );
        assert_eq!(
            texts("It has cats, dogs, etc. and birds. It ends etc. Then more."),
            [
                "It has cats, dogs, etc. and birds.",
                "It ends etc.",
                "Then more."
            ]
        );
        // "No." answers a question; "No. 5" is a number.
        assert_eq!(
            texts("No. He excelled at it. He wore No. 23 then."),
            ["No.", "He excelled at it.", "He wore No. 23 then."]
        );
    }

    #[test]
    fn a_heading_is_a_line_of_its_own() {
        assert_eq!(
            texts("# Output Format\nAnswer in a few words.\nIt wraps\nhere."),
            [
                "# Output Format",
                "Answer in a few words.",
                "It wraps\nhere."
            ]
        );
    }

    #[test]
    fn spans_point_into_the_answer() {
        let a = "  Paris is the capital.\n\nIt is in France.  ";
        let s = split(a);
        assert_eq!(s.len(), 2);
        for x in &s {
            assert_eq!(&a[x.start..x.end], x.text);
        }
        let u = "Ünïcödé first. 東京は首都です。次の文。";
        for x in split(u) {
            assert_eq!(&u[x.start..x.end], x.text);
        }
        assert_eq!(texts(u), ["Ünïcödé first.", "東京は首都です。", "次の文。"]);
    }

    #[test]
    fn list_items_and_code_blocks_are_units() {
        let a = "Steps:\n- Boil water\n- Add tea. Wait.\n1. First\n2) Second\n\n```\nlet x = 1. y = 2.\nfoo();\n```\nDone.";
        assert_eq!(
            texts(a),
            [
                "Steps:",
                "- Boil water",
                "- Add tea.",
                "Wait.",
                "1. First",
                "2) Second",
                "```\nlet x = 1. y = 2.\nfoo();\n```",
                "Done."
            ]
        );
        // A line break inside a paragraph does not end a sentence; a blank line does.
        assert_eq!(
            texts("The tower is\n330 metres tall.\n\nno full stop here\nNext"),
            ["The tower is\n330 metres tall.", "no full stop here\nNext"]
        );
        // An unclosed fence runs to the end.
        assert_eq!(texts("A.\n```\ncode. more"), ["A.", "```\ncode. more"]);
    }

    #[test]
    fn nothing_to_say_is_no_sentence() {
        assert!(split("").is_empty());
        assert!(split("  \n - \n...").is_empty());
        assert_eq!(texts("—\n\nOK"), ["OK"]);
        // A single letter after a lower-case word ends its sentence.
        assert_eq!(texts("A is B. C is D."), ["A is B.", "C is D."]);
        assert_eq!(
            texts("John F. Kennedy spoke. Then he left."),
            ["John F. Kennedy spoke.", "Then he left."]
        );
    }
}
