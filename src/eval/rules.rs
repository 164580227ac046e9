//! The rule evaluators that need no judge: exact, fuzzy, choice, abstain, truth_label and
//! word_range, each exactly per PRISM-FORMAT.md. A score is in [0, 1]; each comes with the detail
//! a user needs to see why (the extracted letter, the label found, the word count).

use std::sync::{LazyLock, OnceLock};

use regex::Regex;

use super::py;
use super::text::{digit_runs, loose, normal};

/// A score with its explanation.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub score: f64,
    pub detail: String,
}

impl Verdict {
    pub fn pass(detail: impl Into<String>) -> Verdict {
        Verdict::new(true, detail)
    }

    pub fn fail(detail: impl Into<String>) -> Verdict {
        Verdict::new(false, detail)
    }

    pub(crate) fn new(ok: bool, detail: impl Into<String>) -> Verdict {
        Verdict {
            score: if ok { 1.0 } else { 0.0 },
            detail: detail.into(),
        }
    }
}

pub(crate) fn exact(response: &str, answer: &str) -> Verdict {
    let ok = normal(response) == normal(answer);
    Verdict::new(
        ok,
        if ok {
            "matches the answer".to_string()
        } else {
            format!("expected {}", crate::text::quoted(&normal(answer)))
        },
    )
}

pub(crate) fn fuzzy(response: &str, answer: &str) -> Verdict {
    let (r, a) = (loose(response), loose(answer));
    if r.is_empty() || a.is_empty() {
        return Verdict::new(false, "empty after normalisation");
    }
    if r == a {
        return Verdict::new(true, "equal");
    }
    if r.contains(&a) || a.contains(&r) {
        return Verdict::new(true, "one contains the other");
    }
    let ad = digit_runs(&a);
    if !ad.is_empty() && ad == digit_runs(&r) {
        return Verdict::new(true, "same numbers");
    }
    Verdict::new(false, format!("expected {}", crate::text::quoted(&a)))
}

/// The option letter a response chooses, exactly as PRISM-FORMAT.md spells the official
/// extraction: the response stripped and split on `\n`; five patterns searched in the last five
/// lines joined (the topmost match of the first pattern that matches decides, as `re.search`
/// has it); then a line that is only the letter, from the end; then a line of the last ten that
/// ends in a standalone letter, from the end; then the last standalone letter anywhere.
/// Whitespace, word characters and "standalone" are Python's (`super::py`): the B of `答案是B。`
/// is glued to a letter, and no choice.
pub fn extract_choice(response: &str, n_options: usize) -> Option<char> {
    let n = crate::taxonomy::choice_letters(n_options);
    let allowed = |c: char| c.is_ascii_uppercase() && ((c as u8 - b'A') as usize) < n;
    let single = |t: &str| {
        let mut cs = t.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) if allowed(c) => Some(c),
            _ => None,
        }
    };
    let text = py::strip(response);
    let lines: Vec<&str> = text.split('\n').collect();
    let last5 = &lines[lines.len().saturating_sub(5)..];
    // 1. `^\s*([A-D])\s*$`: a line holding only the letter.
    if let Some(c) = last5.iter().find_map(|l| single(py::strip(l))) {
        return Some(c);
    }
    // 2. `^\s*\*\*([A-D])\*\*\s*$`: a line holding only `**X**`.
    if let Some(c) = last5.iter().find_map(|l| {
        let t = py::strip(l).strip_prefix("**")?.strip_suffix("**")?;
        single(t)
    }) {
        return Some(c);
    }
    let tail = last5.join("\n");
    // 3. `\*\*([A-D])\*\*` anywhere in the tail, the leftmost.
    let b = tail.as_bytes();
    if let Some(c) = (0..b.len().saturating_sub(4)).find_map(|i| {
        let c = char::from(b[i + 2]);
        (&b[i..i + 2] == b"**" && allowed(c) && &b[i + 3..i + 5] == b"**").then_some(c)
    }) {
        return Some(c);
    }
    // 4 and 5. `[Tt]he answer is` / `[Aa]nswer`, colons and whitespace, asterisks, the letter.
    let (answer_is, answer) = answer_patterns(n);
    for re in [answer_is, answer] {
        if let Some(c) = re.captures(&tail).and_then(|m| m[1].chars().next()) {
            return Some(c);
        }
    }
    // Then from the end: a line that is `^\**([A-D])\**[.):]?$` (no space before the `.`).
    if let Some(c) = lines.iter().rev().find_map(|l| {
        let t = py::strip(l).trim_start_matches('*');
        let c = t.chars().next().filter(|&c| allowed(c))?;
        matches!(t[1..].trim_start_matches('*'), "" | "." | ")" | ":").then_some(c)
    }) {
        return Some(c);
    }
    // Then the last ten lines from the end: `\b([A-D])[.。]?\s*$` (a stripped line can only
    // end in the letter, or in the letter and one `.` or `。`).
    if let Some(c) = lines.iter().rev().take(10).find_map(|l| {
        let t = py::strip(l);
        let t = t
            .strip_suffix('.')
            .or_else(|| t.strip_suffix('。'))
            .unwrap_or(t);
        let c = t.chars().next_back().filter(|&c| allowed(c))?;
        let before = t[..t.len() - 1].chars().next_back();
        (!before.is_some_and(py::is_word)).then_some(c)
    }) {
        return Some(c);
    }
    // Finally the last standalone letter anywhere: `re.findall(r"\b([A-D])\b", ...)[-1]`.
    let mut last = None;
    let mut prev: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if allowed(c)
            && !prev.is_some_and(py::is_word)
            && !chars.peek().is_some_and(|&n| py::is_word(n))
        {
            last = Some(c);
        }
        prev = Some(c);
    }
    last
}

/// Patterns 4 and 5 of the extraction for `n` letters (4 to 8), made once each. Only the first
/// letter of the words may change case; `\s` is Python's (with U+001C..U+001F).
fn answer_patterns(n: usize) -> (&'static Regex, &'static Regex) {
    static MADE: [OnceLock<(Regex, Regex)>; 9] = [const { OnceLock::new() }; 9];
    let (a, b) = MADE[n.min(8)].get_or_init(|| {
        let last = char::from(b'A' + (n.clamp(1, 8) - 1) as u8);
        let run = r"[:\s\x{1C}-\x{1F}]*\**";
        (
            Regex::new(&format!("[Tt]he answer is{run}([A-{last}])")).expect("a fixed pattern"),
            Regex::new(&format!("[Aa]nswer{run}([A-{last}])")).expect("a fixed pattern"),
        )
    });
    (a, b)
}

pub(crate) fn choice(response: &str, answer: &str, n_options: usize) -> Verdict {
    let want = answer.trim();
    match extract_choice(response, n_options) {
        // The extracted letter is always one of the allowed ones, so an answer beyond them (a
        // ninth option, "AA") never matches.
        Some(c) => Verdict::new(
            want.len() == 1 && want.starts_with(c),
            format!("extracted {c}, expected {want}"),
        ),
        None => Verdict::new(false, "no option letter found"),
    }
}

/// Whether `text` upper-cased contains `needle` (upper-case ASCII that starts with a
/// character case does not change, such as `[`). An ASCII text is searched as it is, without
/// the upper-cased copy; any other is upper-cased first, as Python's `.upper()` would (`ı`
/// becomes `I`, `ﬁ` becomes `FI`).
fn contains_upper(text: &str, needle: &str) -> bool {
    let n = needle.as_bytes();
    if text.is_ascii() && n.first().is_some_and(|b| !b.is_ascii_alphabetic()) {
        let t = text.as_bytes();
        memchr::memchr_iter(n[0], t).any(|i| {
            t.get(i..i + n.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(n))
        })
    } else {
        text.to_uppercase().contains(needle)
    }
}

pub(crate) fn abstain(response: &str) -> Verdict {
    static ONLY: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)^\W*NO_INFO\W*$").expect("a fixed pattern"));
    let ok = contains_upper(response, "[NO_INFO]") || ONLY.is_match(response.trim());
    Verdict::new(
        ok,
        if ok {
            "abstained"
        } else {
            "answered instead of abstaining"
        },
    )
}

/// The single label in a response, if exactly one is there.
pub(crate) fn truth_label_of(response: &str) -> Option<&'static str> {
    let up = response.to_uppercase();
    let found: Vec<&'static str> = ["[TRUE]", "[FALSE]", "[NO_INFO]"]
        .into_iter()
        .filter(|l| up.contains(l))
        .collect();
    match found.len() {
        1 => Some(found[0]),
        0 => {
            static BARE: LazyLock<Regex> = LazyLock::new(|| {
                Regex::new(r"^\W*(TRUE|FALSE|NO_INFO)\W*$").expect("a fixed pattern")
            });
            BARE.captures(up.trim()).map(|c| match &c[1] {
                "TRUE" => "[TRUE]",
                "FALSE" => "[FALSE]",
                _ => "[NO_INFO]",
            })
        }
        _ => None,
    }
}

pub(crate) fn truth_label(response: &str, answer: &str) -> Verdict {
    let want = answer.trim().to_uppercase();
    match truth_label_of(response) {
        Some(l) => Verdict::new(l == want, format!("label {l}, expected {want}")),
        None => Verdict::new(false, "no single label found"),
    }
}

pub(crate) fn word_range(response: &str, min: i64, max: i64) -> Verdict {
    let n = super::py::split(response).count() as i64;
    Verdict::new(
        (min..=max).contains(&n),
        format!("{n} words, allowed {min}-{max}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_fuzzy() {
        assert_eq!(exact(" 206 \n", "206").score, 1.0);
        assert_eq!(exact("206 bones", "206").score, 0.0);
        assert_eq!(
            fuzzy("The answer is Lisbon, Portugal.", "Lisbon, Portugal").score,
            1.0
        );
        assert_eq!(
            fuzzy("Portugal", "Lisbon, Portugal").score,
            1.0,
            "reference contains it"
        );
        assert_eq!(
            fuzzy("I count 3 apples plus 4 pears", "3 apples and 4 pears").score,
            1.0,
            "same digit runs"
        );
        // Loose forms drop the comma: 19,213 is the run 19213, not 19 and 213.
        assert_eq!(fuzzy("about 19 213 of them", "19,213").score, 0.0);
        assert_eq!(fuzzy("19,214", "19,213").score, 0.0);
        assert_eq!(fuzzy("...", "x").score, 0.0);
    }

    #[test]
    fn choice_follows_the_extraction_order() {
        assert_eq!(extract_choice("Reasoning...\nB", 4), Some('B'));
        assert_eq!(extract_choice("**C**", 4), Some('C'));
        assert_eq!(extract_choice("I pick **D** here", 4), Some('D'));
        assert_eq!(extract_choice("The answer is: **A**", 4), Some('A'));
        assert_eq!(extract_choice("Answer: C", 4), Some('C'));
        assert_eq!(extract_choice("B)\nmore words here", 4), Some('B'));
        assert_eq!(extract_choice("so the best option is D.", 4), Some('D'));
        assert_eq!(extract_choice("A seems wrong, C is right", 4), Some('C'));
        assert_eq!(extract_choice("no letters here", 4), None);
        // Letters beyond the allowed set are ignored (E with four options).
        assert_eq!(extract_choice("E", 4), None);
        assert_eq!(extract_choice("E", 5), Some('E'));
        // Two-option questions still allow A-D.
        assert_eq!(extract_choice("C", 2), Some('C'));
        assert_eq!(choice("B", "B", 2).score, 1.0);
        assert_eq!(choice("x", "B", 2).detail, "no option letter found");
        // At most eight letters, A-H, however many options the item has.
        assert_eq!(extract_choice("H", 12), Some('H'));
        assert_eq!(extract_choice("I", 12), None);
        assert_eq!(extract_choice("The answer is J.", 12), None);
        assert_eq!(choice("J", "J", 12).score, 0.0);
        assert_eq!(choice("I\nso it is I", "I", 9).score, 0.0);
        assert_eq!(choice("H", "H", 9).score, 1.0);
        // An answer that is not one letter never matches.
        assert_eq!(choice("A", "AA", 200).score, 0.0);
        assert_eq!(choice("A", " A ", 4).score, 1.0);
    }

    #[test]
    fn a_letter_beside_a_character_python_does_not_know_stands_alone() {
        // U+058B was assigned in Unicode 17, after every Python PRISM's evaluators run on: for
        // them it is not a word character, so the A beside it is a standalone letter (the
        // choice fuzz target found prism reading it as a letter of a word).
        assert_eq!(extract_choice("\u{058B}A\u{FFFD}", 65), Some('A'));
        assert_eq!(extract_choice("\u{058B}A", 4), Some('A'));
        assert_eq!(extract_choice("xA", 4), None);
    }

    #[test]
    fn several_choices_in_the_tail_the_topmost_wins_as_in_prisms_code() {
        // PRISM's extract_choice re.searches the joined last five lines, so the first match in
        // that tail decides (PRISM-FORMAT.md, "Choice"), whatever its docstring says.
        assert_eq!(extract_choice("A\nB\nC\nD\nE\nF", 2), Some('B'));
        assert_eq!(choice("A\nB\nC\nD\nE\nF", "B", 2).score, 1.0);
        assert_eq!(extract_choice("A\nB\nC\nD", 4), Some('A'));
        assert_eq!(extract_choice("Answer: A\nAnswer: C", 4), Some('A'));
        assert_eq!(extract_choice("**A**\n**C**", 4), Some('A'));
        assert_eq!(extract_choice("I like **B** and **D**", 4), Some('B'));
        assert_eq!(
            extract_choice("The answer is C\nno, the answer is D", 4),
            Some('C')
        );
        // Lines above the tail do not count for the first patterns: the letter line A is the
        // sixth from the end, so the tail's `Answer: D` decides.
        assert_eq!(extract_choice("A\n1\n2\n3\n4\nAnswer: D", 4), Some('D'));
        // The tail is searched as one text: "The answer is" and its letter on the next line.
        // (Line by line, the fallback would take the D that ends the last line.)
        assert_eq!(extract_choice("so.\nThe answer is\nB, not D", 4), Some('B'));
        // The fallbacks still scan from the end: a line that is only the letter with `)`.
        assert_eq!(extract_choice("B)\nC)", 4), Some('C'));
    }

    #[test]
    fn abstain_and_truth_labels() {
        assert_eq!(abstain("I don't know. [no_info]").score, 1.0);
        assert_eq!(abstain("  NO_INFO. ").score, 1.0);
        assert_eq!(abstain("The winner was X").score, 0.0);
        // Upper-cased as Python does: a dotless ı is an I there too.
        assert_eq!(abstain("Je ne sais pas [no_ınfo]").score, 1.0);
        for t in [
            "[No_Info]",
            "x[NO_INFO",
            "[NO_INFO]x",
            "é [no_info]",
            "ß",
            "",
            "[no_info",
            "ﬁ [nO_iNfO]",
            "[NO_INF0]",
        ] {
            assert_eq!(
                contains_upper(t, "[NO_INFO]"),
                t.to_uppercase().contains("[NO_INFO]"),
                "{t:?}"
            );
        }
        assert_eq!(truth_label("[TRUE] because...", "[TRUE]").score, 1.0);
        assert_eq!(truth_label("false", "[FALSE]").score, 1.0);
        assert_eq!(truth_label("[TRUE] or [FALSE]", "[TRUE]").score, 0.0);
        assert_eq!(truth_label("It is true that", "[TRUE]").score, 0.0);
    }

    #[test]
    fn word_ranges_are_inclusive() {
        assert_eq!(word_range("one two three", 3, 5).score, 1.0);
        assert_eq!(word_range("one two", 3, 5).score, 0.0);
        assert_eq!(
            word_range("a b c d e f", 3, 5).detail,
            "6 words, allowed 3-5"
        );
    }
}
