//! Reading what self-detection gets back: whether a generated sentence carries the object phrase
//! (the true one must, the false one must not and must keep the rest), and whether a detector's
//! reply is a clean yes or no.

use std::sync::LazyLock;

use regex::Regex;
use unicode_normalization::UnicodeNormalization;

use crate::store::Answer;

/// Words of a text for comparing phrases: lower case, accents dropped (a model writing
/// "Brasilia" for "Brasília" keeps the object), punctuation as spaces.
pub(crate) fn words(s: &str) -> Vec<String> {
    let folded: String = s
        .nfkd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    folded.split_whitespace().map(str::to_string).collect()
}

/// Where `phrase` occurs in `text` as whole words (word positions).
fn occurrences(text: &[String], phrase: &[String]) -> Vec<usize> {
    if phrase.is_empty() || phrase.len() > text.len() {
        return Vec::new();
    }
    (0..=text.len() - phrase.len())
        .filter(|&i| text[i..i + phrase.len()] == *phrase)
        .collect()
}

/// Whether `text` contains the object phrase as whole words (case, accents and punctuation
/// aside: "Ulm" is in "born in Ulm, Germany", "Ulm" is not in "Ulmer").
pub(crate) fn contains_phrase(text: &str, phrase: &str) -> bool {
    !occurrences(&words(text), &words(phrase)).is_empty()
}

/// `sentence` with every whole-word occurrence of `object` (any case) replaced by `decoy`: the
/// false sentence of a `swap` run. Occurrences spelled differently (accents) stay, and the
/// false-sentence check then sets the triple aside.
pub(crate) fn swap_phrase(sentence: &str, object: &str, decoy: &str) -> String {
    if object.trim().is_empty() {
        return sentence.to_string();
    }
    let re = Regex::new(&format!(
        r"(?i)(^|[^\p{{L}}\p{{N}}]){}([^\p{{L}}\p{{N}}]|$)",
        regex::escape(object.trim())
    ));
    match re {
        // Twice: a match consumes the separator after it, so "Rome, Rome" needs a second pass.
        Ok(re) => {
            let once = re.replace_all(sentence, |c: &regex::Captures| {
                format!("{}{decoy}{}", &c[1], &c[2])
            });
            re.replace_all(&once, |c: &regex::Captures| {
                format!("{}{decoy}{}", &c[1], &c[2])
            })
            .into_owned()
        }
        Err(_) => sentence.to_string(),
    }
}

/// Why a true sentence fails its check, if it does: empty, without the object, or the source
/// sentence copied word for word (no paraphrase).
pub(crate) fn check_true(sentence: &str, object: &str, source: Option<&str>) -> Result<(), String> {
    if sentence.trim().is_empty() {
        return Err("empty".into());
    }
    if !contains_phrase(sentence, object) {
        return Err(format!("does not contain the object {object:?}"));
    }
    // The paper asks for a paraphrase: the source sentence copied word for word (case and
    // punctuation aside) is one that failed, asked again like a missing object.
    if let Some(src) = source
        && !words(src).is_empty()
        && words(src) == words(sentence)
    {
        return Err("copies the source sentence word for word".into());
    }
    Ok(())
}

/// How much of the true sentence (the object aside) the false one must keep.
pub(crate) const KEEP_AT_LEAST: f64 = 0.6;

/// Why a false sentence fails its check, if it does: the object phrase must be gone (every
/// occurrence), the sentence must differ, and at least [`KEEP_AT_LEAST`] of the true sentence's
/// other words must still be there.
pub(crate) fn check_false(false_s: &str, true_s: &str, object: &str) -> Result<(), String> {
    if false_s.trim().is_empty() {
        return Err("empty".into());
    }
    if contains_phrase(false_s, object) {
        return Err(format!("still contains the object {object:?}"));
    }
    let t = words(true_s);
    let obj = words(object);
    let mut rest: Vec<&String> = Vec::new();
    let occ = occurrences(&t, &obj);
    let mut i = 0;
    while i < t.len() {
        if occ.contains(&i) {
            i += obj.len();
            continue;
        }
        rest.push(&t[i]);
        i += 1;
    }
    if rest.is_empty() {
        return Ok(());
    }
    let f: std::collections::HashSet<String> = words(false_s).into_iter().collect();
    let kept = rest.iter().filter(|w| f.contains(**w)).count() as f64 / rest.len() as f64;
    if kept < KEEP_AT_LEAST {
        return Err(format!(
            "keeps {:.0}% of the rest of the sentence (at least {:.0}% needed)",
            kept * 100.0,
            KEEP_AT_LEAST * 100.0
        ));
    }
    Ok(())
}

/// The first line of a generated sentence, without a label the model may echo ("Sentence:",
/// "New sentence:") or wrapping quotes.
pub(crate) fn clean_sentence(reply: &str) -> String {
    static LABEL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^\s*(?:new\s+|false\s+|true\s+|rewritten\s+)?sentence\s*:\s*")
            .expect("a fixed pattern")
    });
    let line = reply
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let line = LABEL.replace(line, "");
    line.trim()
        .trim_matches(|c| matches!(c, '"' | '“' | '”' | '*' | '`'))
        .trim()
        .to_string()
}

/// A direct reply: a clean yes or no is its first word (markdown, punctuation and an echoed
/// `Answer:` aside) with no other yes/no after it ("No, it is accurate." is a clean no; "Yes and
/// no", "I think yes" and "The answer is no" are not), and nothing after it saying the opposite
/// about false information ("No, the sentence contains false information." contradicts itself).
/// Anything else is [`Answer::Unparsed`].
pub(crate) fn read_direct(reply: &str) -> Answer {
    let a = first_word_answer(reply);
    match (a, says_false_information(reply)) {
        (Answer::Yes, Some(false)) | (Answer::No, Some(true)) => Answer::Unparsed,
        _ => a,
    }
}

/// What the reply's words say about false information, if they say it: "contains false
/// information" is `true`, "does not contain false information" (or "no false information")
/// `false`; both, or neither, `None`.
fn says_false_information(reply: &str) -> Option<bool> {
    static NEG: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\b(?:does\s+not|doesn'?t|do\s+not|don'?t|no|not\s+any|without)\s+(?:contain\s+(?:any\s+)?)?(?:false|incorrect|wrong)\s+information").expect("a fixed pattern")
    });
    static POS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\b(?:contains?|has|includes?)\s+(?:some\s+)?(?:false|incorrect|wrong)\s+information").expect("a fixed pattern")
    });
    let neg = NEG.is_match(reply);
    // A "contains false information" inside a negation ("does not contain ...") is not one.
    let pos = POS.find_iter(reply).any(|m| {
        let mut from = m.start().saturating_sub(12);
        while !reply.is_char_boundary(from) {
            from -= 1;
        }
        !NEG.is_match(&reply[from..m.end()])
    });
    match (pos, neg) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ => None,
    }
}

fn first_word_answer(reply: &str) -> Answer {
    let mut w = words(reply);
    // An echoed label ("Answer: yes") is not part of the answer.
    if w.first().is_some_and(|x| x == "answer") {
        w.remove(0);
    }
    match w.first().map(String::as_str) {
        Some(first @ ("yes" | "no")) => {
            let other = if first == "yes" { "no" } else { "yes" };
            if w[1..].iter().any(|x| x == other) {
                Answer::Unparsed
            } else if first == "yes" {
                Answer::Yes
            } else {
                Answer::No
            }
        }
        _ => Answer::Unparsed,
    }
}

/// A chain-of-thought reply: its last non-empty line must be the answer, `Answer: yes` or
/// `Answer: no` (or a clean yes/no alone); anything else is [`Answer::Unparsed`].
pub(crate) fn read_cot(reply: &str) -> Answer {
    static FINAL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^\W*(?:final\s+)?answer\W*[:\-]\W*(yes|no)\W*$").expect("a fixed pattern")
    });
    let Some(last) = reply.lines().map(str::trim).rfind(|l| !l.is_empty()) else {
        return Answer::Unparsed;
    };
    if let Some(c) = FINAL.captures(last) {
        return if c[1].eq_ignore_ascii_case("yes") {
            Answer::Yes
        } else {
            Answer::No
        };
    }
    match words(last).as_slice() {
        [w] if w == "yes" => Answer::Yes,
        [w] if w == "no" => Answer::No,
        _ => Answer::Unparsed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_direct_reply_that_contradicts_itself_is_unparsed() {
        let cases = [
            (
                "No, the sentence contains false information.",
                Answer::Unparsed,
            ),
            (
                "Yes, the sentence does not contain false information.",
                Answer::Unparsed,
            ),
            (
                "Yes. It contains false information: he was born in Ulm.",
                Answer::Yes,
            ),
            (
                "No, the sentence does not contain false information.",
                Answer::No,
            ),
            ("No. There is no false information here.", Answer::No),
            ("No, it doesn't contain any false information.", Answer::No),
            ("Yes, it has incorrect information.", Answer::Yes),
            (
                "No — ünïcödé does not contain false information.",
                Answer::No,
            ),
            ("Yes — ääääääää contains false information.", Answer::Yes),
        ];
        for (reply, want) in cases {
            assert_eq!(read_direct(reply), want, "{reply}");
        }
    }

    #[test]
    fn object_phrases_case_punctuation_accents_words() {
        assert!(contains_phrase("Einstein was born in ULM, Germany.", "Ulm"));
        assert!(!contains_phrase("The Ulmer Münster is tall.", "Ulm"));
        assert!(contains_phrase("Its capital is Brasilia.", "Brasília"));
        assert!(contains_phrase(
            "It was written by Gabriel Garcia Marquez in 1967.",
            "Gabriel García Márquez"
        ));
        assert!(!contains_phrase(
            "It was written by Gabriel Marquez.",
            "Gabriel García Márquez"
        ));
        assert!(contains_phrase("She joined NASA's team.", "NASA"));
        assert!(contains_phrase("He worked for the U.S. Navy.", "U.S. Navy"));
        assert!(!contains_phrase("", "x"));
    }

    #[test]
    fn swap_replaces_whole_words_in_any_case_and_passes_the_check() {
        let t = "Rome is the capital of Italy; rome, Rome!";
        let f = swap_phrase(t, "Rome", "Milan");
        assert_eq!(f, "Milan is the capital of Italy; Milan, Milan!");
        assert!(check_false(&f, t, "Rome").is_ok());
        // Not inside another word.
        assert_eq!(
            swap_phrase("Romeo left Rome.", "Rome", "Oslo"),
            "Romeo left Oslo."
        );
        // Regex characters in the object are literal.
        assert_eq!(
            swap_phrase("She codes in C++ daily.", "C++", "Rust"),
            "She codes in Rust daily."
        );
        // A different spelling stays, and the check says so.
        let f = swap_phrase("Born in Zürich.", "Zurich", "Basel");
        assert!(check_false(&f, "Born in Zürich.", "Zurich").is_err());
    }

    #[test]
    fn a_false_sentence_drops_every_occurrence_and_keeps_the_rest() {
        let t = "Ottawa is the capital of Canada, and Ottawa lies on a river.";
        assert!(
            check_false(
                "Toronto is the capital of Canada, and Toronto lies on a river.",
                t,
                "Ottawa"
            )
            .is_ok()
        );
        // One occurrence left: still contains it.
        assert!(
            check_false(
                "Toronto is the capital of Canada, and Ottawa lies on a river.",
                t,
                "Ottawa"
            )
            .is_err()
        );
        // The rest not kept.
        let e = check_false("Paris is lovely.", t, "Ottawa").unwrap_err();
        assert!(e.contains("keeps"), "{e}");
        assert!(check_false("", t, "Ottawa").is_err());
        // Multi-word object replaced by another.
        assert!(
            check_false(
                "Pride and Prejudice is a novel by Charlotte Bronte published in 1813.",
                "Pride and Prejudice is a novel by Jane Austen published in 1813.",
                "Jane Austen"
            )
            .is_ok()
        );
        assert!(
            check_true(
                "Pride and Prejudice is by jane austen.",
                "Jane Austen",
                None
            )
            .is_ok()
        );
        assert!(check_true("Pride and Prejudice is by Austen.", "Jane Austen", None).is_err());
        // A copy of the source sentence is no paraphrase; a rewording of it is.
        let src = Some("Pride and Prejudice was written by Jane Austen.");
        let e = check_true(
            "pride and prejudice was written by Jane Austen",
            "Jane Austen",
            src,
        );
        assert_eq!(e.unwrap_err(), "copies the source sentence word for word");
        assert!(check_true("Jane Austen wrote Pride and Prejudice.", "Jane Austen", src).is_ok());
    }

    #[test]
    fn sentences_are_cleaned() {
        assert_eq!(
            clean_sentence("Sentence: \"Ulm is where he was born.\"\nmore"),
            "Ulm is where he was born."
        );
        assert_eq!(
            clean_sentence("\n\n  New sentence: Bern is big."),
            "Bern is big."
        );
        assert_eq!(
            clean_sentence("**Canberra is the capital.**"),
            "Canberra is the capital."
        );
    }

    /// 44 phrasings: clean ones, chatty ones, both answers, none, CoT endings.
    #[test]
    fn replies_are_clean_or_unparsed() {
        use Answer::*;
        let direct: &[(&str, Answer)] = &[
            ("yes", Yes),
            ("no", No),
            ("Yes.", Yes),
            ("No.", No),
            ("YES", Yes),
            ("No, the sentence is accurate.", No),
            ("Yes, it contains false information.", Yes),
            ("**Yes**", Yes),
            ("\"No\"", No),
            ("  no  \n", No),
            ("Yes - Canberra is the capital, not Sydney.", Yes),
            ("No; everything checks out.", No),
            ("Yes and no.", Unparsed),
            ("Yes. No, wait.", Unparsed),
            ("I think yes.", Unparsed),
            ("The answer is no.", Unparsed),
            ("It does not contain false information.", Unparsed),
            ("", Unparsed),
            ("Maybe.", Unparsed),
            ("True", Unparsed),
            ("False", Unparsed),
            ("Answer: yes", Yes),
            ("yess", Unparsed),
            ("Nope", Unparsed),
        ];
        for (r, want) in direct {
            assert_eq!(read_direct(r), *want, "direct {r:?}");
        }
        let cot: &[(&str, Answer)] = &[
            ("1. Einstein: real.\n2. born in Ulm: true.\nAnswer: no", No),
            ("Units: ...\nAnswer: yes", Yes),
            ("Reasoning...\nFinal answer: Yes.", Yes),
            ("Reasoning...\nANSWER - no", No),
            ("Reasoning...\n\nAnswer: **no**\n\n", No),
            ("Reasoning...\nNo", No),
            ("Reasoning...\nYes.", Yes),
            ("Answer: yes\nBut actually the date is wrong.", Unparsed),
            ("Reasoning only, no verdict.", Unparsed),
            ("Answer: maybe", Unparsed),
            ("Answer: yes or no", Unparsed),
            ("", Unparsed),
            ("The answer is yes.", Unparsed),
            ("Answer: no, it is correct", Unparsed),
            ("1. true\n2. false\nAnswer: Yes", Yes),
            ("Answer:yes", Yes),
            ("answer : NO", No),
            ("Step 1 ...\nStep 2 ...\nTherefore, yes.", Unparsed),
            ("Answer: yes.\n", Yes),
            ("Answer: \"no\"", No),
        ];
        for (r, want) in cot {
            assert_eq!(read_cot(r), *want, "cot {r:?}");
        }
        assert!(direct.len() + cot.len() >= 40);
    }
}
