//! Reading what models reply in detection: a pair check's verdict (conflict or consistent), its
//! explanation and the quoted phrases; AutoHall's true/false classification; and whether a
//! reference is a refusal without content. Anything that cannot be read is `None`, counted by the
//! caller as unparsed, never guessed.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::dataset::claims::Truth;

/// A pair check's reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairReading {
    /// The two answers cannot both be true.
    pub conflict: bool,
    pub explanation: String,
    /// The clashing phrase of the answer under test, and of the sample.
    pub quote_a: Option<String>,
    pub quote_b: Option<String>,
}

/// One verdict word found in a text, where it starts.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hit {
    at: usize,
    conflict: bool,
}

/// Phrases that say "they contradict" or "they do not". Negated forms come first: at the same
/// position the longer, negated match wins.
static VERDICTS: LazyLock<Vec<(Regex, bool)>> = LazyLock::new(|| {
    let r = |p: &str| Regex::new(&format!("(?i){p}")).expect("a fixed pattern");
    vec![
        // "consistent" family, including negations of "contradict"/"conflict".
        (
            r(r"\b(?:do|does|did)\s*(?:not|n't)\s+(?:contradict|conflict|clash)"),
            false,
        ),
        (
            r(r"\b(?:don't|doesn't|didn't)\s+(?:contradict|conflict|clash)"),
            false,
        ),
        (
            r(
                r"\b(?:are|is)\s*(?:not|n't)\s+(?:contradictory|in\s+conflict|conflicting|inconsistent|incompatible)",
            ),
            false,
        ),
        (
            r(
                r"\b(?:aren't|isn't)\s+(?:contradictory|in\s+conflict|conflicting|inconsistent|incompatible)",
            ),
            false,
        ),
        (
            r(
                r"\bno\s+(?:real\s+|actual\s+|direct\s+)?(?:contradiction|conflict|inconsistency)s?\b",
            ),
            false,
        ),
        (r(r"\bnot\s+contradictory\b"), false),
        (r(r"\b(?:is|are)\s+not\s+(?:a\s+)?contradictions?\b"), false),
        (r(r"\bnot\s+a\s+contradiction\b"), false),
        (r(r"\bnot\s+mutually\s+exclusive\b"), false),
        // "They contradict each other, but they can both be true" says both: with the words
        // below it holds a verdict of each kind and is read as none. "Cannot both be true"
        // (the question's own definition of a contradiction) says conflict.
        (
            r(r"\b(?:cannot|can't|can\s+not)\s+both\s+be\s+true\b"),
            true,
        ),
        (r(r"\bcan\s+(?:both\s+)?be\s+(?:both\s+)?true\b"), false),
        (r(r"\bcan\s+be\s+reconciled\b"), false),
        (r(r"\bnon[- ]?contradictory\b"), false),
        (r(r"\bneither\s+contradict"), false),
        // "conflict" family, including negations of "consistent"/"agree".
        (
            r(r"\b(?:are|is)\s*(?:not|n't)\s+(?:consistent|compatible|in\s+agreement)"),
            true,
        ),
        (
            r(r"\b(?:aren't|isn't)\s+(?:consistent|compatible|in\s+agreement)"),
            true,
        ),
        (r(r"\b(?:do|does)\s*(?:not|n't)\s+agree"), true),
        (r(r"\b(?:don't|doesn't)\s+agree"), true),
        (r(r"\bnot\s+consistent\b"), true),
        (r(r"\binconsistent\b"), true),
        (r(r"\bincompatible\b"), true),
        (r(r"\bcontradict(?:s|ed|ing|ion|ions|ory)?\b"), true),
        (r(r"\bconflict(?:s|ed|ing)?\b"), true),
        (r(r"\bclash(?:es|ed)?\b"), true),
        (r(r"\bconsistent\b"), false),
        (r(r"\bcompatible\b"), false),
        (r(r"\b(?:they|both|answers)\s+agree\b"), false),
        (r(r"\bin\s+agreement\b"), false),
    ]
});

/// Every verdict phrase of `text`, in order, overlapping matches resolved to the earliest and
/// then the longest.
fn hits(text: &str) -> Vec<Hit> {
    let mut all: Vec<(usize, usize, bool)> = Vec::new();
    for (re, conflict) in VERDICTS.iter() {
        for m in re.find_iter(text) {
            all.push((m.start(), m.end(), *conflict));
        }
    }
    all.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut out = Vec::new();
    let mut end = 0;
    for (s, e, c) in all {
        if s >= end {
            out.push(Hit { at: s, conflict: c });
            end = e;
        }
    }
    out
}

/// The verdict a short text gives, if it gives exactly one kind.
fn verdict_of(text: &str) -> Option<bool> {
    static YES: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)^\W*(yes|no)\b").expect("a fixed pattern"));
    let t = text.trim();
    let kinds: Vec<bool> = hits(t).iter().map(|h| h.conflict).collect();
    if let Some(&first) = kinds.first()
        && kinds.iter().all(|k| *k == first)
    {
        return Some(first);
    }
    if kinds.is_empty() {
        // "Yes." / "No, ..." answer the question "do they contradict?"; "Yes and no", "Yes or
        // No" (the format repeated) answer nothing.
        static BOTH: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"(?i)^\W*(?:yes\W+(?:and|or)?\W*no|no\W+(?:and|or)?\W*yes)\b")
                .expect("a fixed pattern")
        });
        if BOTH.is_match(t) {
            return None;
        }
        // "The answer is "Yes"" gives it too.
        static ANSWER_IS: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r#"(?i)^\W*(?:so\s+)?(?:the\s+|my\s+)?(?:answer|verdict)\s+is\W*(yes|no)\b"#)
                .expect("a fixed pattern")
        });
        return YES
            .captures(t)
            .or_else(|| ANSWER_IS.captures(t))
            .map(|c| c[1].eq_ignore_ascii_case("yes"));
    }
    None
}

fn refusal(text: &str) -> bool {
    static REFUSE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\b(?:i\s+(?:cannot|can't|can not|am unable to|'m unable to|am not able to)\s+(?:determine|tell|say|decide|judge|compare|answer|assess|evaluate)|unable to determine|cannot be determined|not enough information|insufficient information)").expect("a fixed pattern")
    });
    REFUSE.is_match(text)
}

fn json_object(reply: &str) -> Option<serde_json::Map<String, Value>> {
    let keys: &[&[&str]] = &[
        &["verdict"],
        &["contradiction"],
        &["contradict"],
        &["conflict"],
        &["contradictory"],
    ];
    for k in keys {
        if let Some(Value::Object(m)) = crate::eval::judge::json_with(reply, k) {
            return Some(m);
        }
    }
    None
}

fn json_verdict(m: &serde_json::Map<String, Value>) -> Option<bool> {
    for (key, negate) in [
        ("verdict", false),
        ("contradiction", false),
        ("contradict", false),
        ("conflict", false),
        ("contradictory", false),
        ("consistent", true),
    ] {
        match m.get(key) {
            Some(Value::Bool(b)) => return Some(*b != negate),
            Some(Value::String(s)) => {
                let v = match s.trim().to_ascii_lowercase().as_str() {
                    "yes" | "true" => Some(true),
                    "no" | "false" => Some(false),
                    _ => verdict_of(s),
                };
                if let Some(v) = v {
                    return Some(v != negate);
                }
            }
            _ => {}
        }
    }
    None
}

fn clean_quote(q: &str) -> Option<String> {
    let t = q
        .trim()
        .trim_matches(|c| matches!(c, '"' | '\'' | '“' | '”' | '‘' | '’' | '`'))
        .trim();
    let none = ["", "none", "n/a", "na", "-", "null"];
    (!none.contains(&t.to_ascii_lowercase().as_str())).then(|| t.to_string())
}

/// Reads a pair check's reply to `prompt`: what the reply copies from the prompt (the question
/// repeated, the answers quoted back) is no verdict, so the verdict is read from the rest
/// (`eval::echo`); the quotes and an `Explanation:` line are read from the whole reply.
pub fn read_pair_to(reply: &str, prompt: &str) -> Option<PairReading> {
    let own = crate::eval::echo::without_echo(reply, prompt);
    read_pair_parts(reply, &own)
}

/// Reads AutoHall's classification reply to `prompt`, the copied parts left out (a reply that
/// repeats `"Answer: True" or "Answer: False"` gave neither).
pub fn read_truth_to(reply: &str, prompt: &str) -> Option<Truth> {
    read_truth(&crate::eval::echo::without_echo(reply, prompt))
}

/// Reads a pair check's reply. `None` when it holds no verdict, or holds both without saying
/// which one is the answer.
pub fn read_pair(reply: &str) -> Option<PairReading> {
    read_pair_parts(reply, reply)
}

/// `full` is the reply as given, `own` what is left of it once the echoes are out: the verdict
/// comes from `own`; JSON fields, quotes and an explanation line from `full` (a quote copies an
/// answer by design).
fn read_pair_parts(full: &str, own: &str) -> Option<PairReading> {
    static VERDICT_LINE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?im)^\W*(?:final\s+)?(?:verdict|answer|decision|judgement|judgment|conclusion)\s*[:\-–]\s*(.+)$").expect("a fixed pattern")
    });
    static EXPLANATION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?im)^\W*(?:explanation|reason|why|rationale)\s*[:\-–]\s*(.+)$")
            .expect("a fixed pattern")
    });
    static QUOTE_A: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?im)^\W*quote\s*(?:a|1|from\s+answer\s+a)\s*[:\-–]\s*(.*)$")
            .expect("a fixed pattern")
    });
    static QUOTE_B: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?im)^\W*quote\s*(?:b|2|from\s+answer\s+b)\s*[:\-–]\s*(.*)$")
            .expect("a fixed pattern")
    });
    let full = full.trim();
    let reply = own.trim();
    if reply.is_empty() && json_object(full).is_none() {
        return None;
    }
    // 1. JSON.
    if let Some(m) = json_object(full)
        && let Some(conflict) = json_verdict(&m)
    {
        let s = |k: &[&str]| {
            k.iter()
                .find_map(|k| m.get(*k).and_then(Value::as_str))
                .and_then(clean_quote)
        };
        return Some(PairReading {
            conflict,
            explanation: s(&["explanation", "reason", "rationale"]).unwrap_or_default(),
            quote_a: s(&["quote_a", "a_quote", "quote_from_a", "phrase_a"]),
            quote_b: s(&["quote_b", "b_quote", "quote_from_b", "phrase_b"]),
        });
    }
    // Words that name the format's parts are no verdict: a reply echoing "the conflicting
    // phrase from answer A" says nothing about whether there is one. Quote lines are left out,
    // and so is a quoted question: 'The answer to the question "Which of the two answers
    // contradicts the claim?" is "No."' answers a question nobody asked.
    static NOISE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?im)^\W*quote\s*(?:a|b|1|2|from\s+answer\s+[ab])\s*[:\-–].*$|\bconflicting\s+(?:phrase|quote|part|portion|word|text|sentence|passage)s?\b|["“][^"“”\n]{0,300}\?["”]"#).expect("a fixed pattern")
    });
    let prose = NOISE.replace_all(reply, " ");
    let reply: &str = &prose;
    // 2. A verdict line (the first that can be read).
    let mut conflict = VERDICT_LINE
        .captures_iter(reply)
        .find_map(|c| verdict_of(&c[1]));
    // 3. Prose: a first sentence that gives one verdict, else the last verdict phrase when every
    //    phrase agrees, or the conclusion's ("therefore ...") when they do not. A reply that says
    //    it cannot tell is no verdict, whatever words it uses.
    if conflict.is_none() && refusal(reply) {
        return None;
    }
    // A reply whose sentences open with both a Yes and a No ("Yes. ... No, they do not.") has
    // answered both ways: no verdict, unless a verdict line above settled it.
    static OPENS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?im)(?:^|[.!?]\s+)\W*(yes|no)\b").expect("a fixed pattern"));
    if conflict.is_none() {
        let mut opens = OPENS
            .captures_iter(reply)
            .map(|c| c[1].to_ascii_lowercase());
        if let Some(first) = opens.next()
            && opens.any(|o| o != first)
        {
            return None;
        }
    }
    if conflict.is_none() {
        let first = reply
            .split_inclusive(['.', '\n', '!'])
            .next()
            .unwrap_or(reply);
        conflict = verdict_of(first);
    }
    if conflict.is_none() && !refusal(reply) {
        let all = hits(reply);
        if let Some(h) = all.first()
            && all.iter().all(|x| x.conflict == h.conflict)
        {
            conflict = Some(h.conflict);
        } else if !all.is_empty() {
            static CONCLUDE: LazyLock<Regex> = LazyLock::new(|| {
                Regex::new(r"(?i)\b(?:therefore|thus|so|overall|in conclusion|in summary|hence)\b")
                    .expect("a fixed pattern")
            });
            if let Some(m) = CONCLUDE.find_iter(reply).last() {
                conflict = verdict_of(&reply[m.start()..]);
            }
        }
    }
    let conflict = conflict?;
    // The reason: an `Explanation:` line, else the prose without its quote lines and without
    // the leading verdict word (the prompt asks for "Yes or No", then one sentence, then the
    // quotes): "Yes. The dates differ." reads "The dates differ.".
    static LEAD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^\W*(?:yes|no|conflict(?:ing)?|consistent|contradict(?:s|ion|ory)?|(?:final\s+)?verdict\s*[:\-–]\s*\w+)\b[\s.,:;!)\-–]*").expect("a fixed pattern")
    });
    let explanation = EXPLANATION
        .captures(full)
        .map(|c| c[1].trim().to_string())
        .unwrap_or_else(|| {
            let prose = crate::text::one_line(reply);
            let prose = prose.trim();
            let rest = LEAD.replace(prose, "");
            let rest = if rest.trim().is_empty() {
                prose.into()
            } else {
                rest
            };
            rest.trim().chars().take(300).collect()
        });
    Some(PairReading {
        conflict,
        explanation,
        quote_a: QUOTE_A.captures(full).and_then(|c| clean_quote(&c[1])),
        quote_b: QUOTE_B.captures(full).and_then(|c| clean_quote(&c[1])),
    })
}

/// Reads AutoHall's classification: true or false. "untrue", "not true", "isn't true" are false;
/// "not false" is true; "is false, not true" is false (the first verdict counts, after an
/// `Answer:` line when there is one). `None` when no verdict can be read.
pub fn read_truth(reply: &str) -> Option<Truth> {
    static ANSWER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?im)^\W*(?:final\s+)?(?:answer|verdict|classification|label|conclusion)\s*[:\-–]\s*(.+)$").expect("a fixed pattern")
    });
    static WORDS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\b(?:(not|isn't|is\s+not|aren't|never)\s+(?:a\s+)?(?:(?:entirely|completely|fully|totally|wholly|quite|necessarily|really|exactly|strictly|scientific)\s+)?(true|false|correct|accurate|incorrect|inaccurate|fact)|(untrue|true|false|incorrect|inaccurate|correct|accurate|misleading|supported|refuted))\b").expect("a fixed pattern")
    });
    let first_verdict = |t: &str| -> Option<Truth> {
        let c = WORDS.captures(t)?;
        let (negated, word) = match (c.get(1), c.get(2), c.get(3)) {
            (Some(_), Some(w), _) => (true, w.as_str()),
            (_, _, Some(w)) => (false, w.as_str()),
            _ => return None,
        };
        let positive = matches!(
            word.to_ascii_lowercase().as_str(),
            "true" | "correct" | "accurate" | "supported" | "fact"
        );
        Some(if positive != negated {
            Truth::True
        } else {
            Truth::False
        })
    };
    if let Some(Value::Object(m)) = crate::eval::judge::json_with(reply, &["answer"])
        .or_else(|| crate::eval::judge::json_with(reply, &["label"]))
        .or_else(|| crate::eval::judge::json_with(reply, &["classification"]))
    {
        for k in ["answer", "label", "classification"] {
            match m.get(k) {
                Some(Value::Bool(b)) => return Some(if *b { Truth::True } else { Truth::False }),
                Some(Value::String(s)) => {
                    if let Some(t) = first_verdict(s) {
                        return Some(t);
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(t) = ANSWER
        .captures_iter(reply)
        .find_map(|c| first_verdict(&c[1]))
    {
        return Some(t);
    }
    if refusal(reply) && !ANSWER.is_match(reply) {
        return None;
    }
    // Words that only name the question, never answer it, are not a verdict: "whether the
    // claim is true or not", "one would need accurate information" (AutoHall's released replies
    // abstain this way; reading "true" there counted an abstention as a verdict).
    static MENTION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\b(?:whether|if)\b[^.\n]{0,60}?\b(?:true|false|correct|accurate|incorrect|inaccurate)\b(?:\s+or\s+(?:not|false|true|incorrect|inaccurate))?|\b(?:need|needs|needed|require|requires|required)\b[^.\n]{0,30}?\b(?:accurate|correct|reliable|true|factual)\s+(?:information|data|sources?|facts?|knowledge)\b").expect("a fixed pattern")
    });
    let reply = &*MENTION.replace_all(reply, " ");
    // The verdict is the first sentence's; one that says both ("The claim is true, but it's not
    // a fact") gives none. "It is false, not true" says false twice.
    let first = reply
        .split_inclusive(['.', '\n', '!'])
        .find(|s| WORDS.is_match(s))?;
    let mut all = WORDS
        .find_iter(first)
        .filter_map(|m| first_verdict(m.as_str()));
    let verdict = all.next()?;
    if all.any(|v| v != verdict) {
        return None;
    }
    Some(verdict)
}

/// Whether a classification reply says the claim's truth cannot be determined ("it is not
/// possible to determine whether the claim is true or false"): an abstention, which
/// [`read_truth`] reads as neither (it names both) and which the import counts on its own.
pub fn says_undetermined(reply: &str) -> bool {
    static UNDETERMINED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\b(?:not\s+possible|impossible|cannot|can\s*not|can't|unable|not\s+able|difficult|hard|insufficient\s+information|not\s+enough\s+information)\b[^.\n]{0,20}?\b(?:determine|determined|verify|verified|say|tell|judge|assess|confirm|conclude)\b|\b(?:unclear|uncertain|not\s+clear)\s+(?:whether|if)\b|\bwould\s+need\b[^.\n]{0,30}?\binformation\b").expect("a fixed pattern")
    });
    UNDETERMINED.is_match(reply)
}

/// Whether a generated reference is a refusal without content ("I cannot provide a specific
/// reference"): a refusal phrase, and fewer than a dozen words outside the refusing sentences.
pub fn is_refusal(reference: &str) -> bool {
    static REFUSE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\b(?:i\s*(?:cannot|can't|can not|could not|couldn't|am unable to|'m unable to|am not able to|'m not able to|do not have|don't have|was unable to)|i\s+apologi[sz]e|i'm sorry|as an ai|unable to (?:provide|find|locate|access)|no (?:specific|reliable|verifiable) (?:reference|source)s?|not aware of any)").expect("a fixed pattern")
    });
    let text = reference.trim();
    if text.is_empty() {
        return true;
    }
    if !REFUSE.is_match(text) {
        return false;
    }
    let rest: usize = text
        .split_inclusive(['.', '!', '?', '\n', ':', ';'])
        .filter(|s| !REFUSE.is_match(s))
        .map(|s| s.split_whitespace().count())
        .sum();
    rest < 12
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_is_the_sentence_without_the_verdict_word_and_the_quotes() {
        let r = read_pair("Yes. The dates differ.\nQuote A: \"1969\"\nQuote B: \"1971\"").unwrap();
        assert!(r.conflict);
        assert_eq!(r.explanation, "The dates differ.");
        assert_eq!(r.quote_a.as_deref(), Some("1969"));
        let r = read_pair("No, both say Paris.\nQuote A: \"\"\nQuote B: \"\"").unwrap();
        assert_eq!(r.explanation, "both say Paris.");
        // An Explanation line wins; a reply that is only the verdict keeps it as the reason.
        let r = read_pair("Yes\nExplanation: A says 1969.\nQuote A: 1969").unwrap();
        assert_eq!(r.explanation, "A says 1969.");
        assert_eq!(read_pair("Yes.").unwrap().explanation, "Yes.");
    }

    /// What small models reply to the pair check when they answer nothing: the question copied
    /// back (the reply that read as CONFLICT because it holds "contradict"), the format
    /// repeated, both answers, only the answers quoted. And what they reply when they do answer,
    /// around an echo.
    #[test]
    fn an_echo_of_the_prompt_is_no_verdict() {
        let req = crate::detect::prompts::pair_check(
            "Is the following claim true? Claim: Global warming is driven by the sun.",
            "The claim is false; the warming since 1950 is driven by greenhouse gases.",
            "Solar activity has been flat since 1950 while temperatures rose.",
        );
        let prompt = crate::detect::prompts::text_of(&req);
        let none = [
            "Claim: Global warming is driven by the sun. Do the two answers contradict each other, so that they cannot both be true? Differences in",
            "Do the two answers contradict each other, so that they cannot both be true?",
            "Differences in wording, detail or length are not contradictions.",
            "Yes or No",
            "Yes and no.",
            "First write Yes or No. Then explain why in one sentence.",
            "Answer A: The claim is false; the warming since 1950 is driven by greenhouse gases.\nAnswer B: Solar activity has been flat since 1950 while temperatures rose.",
            "Yes. The answers contradict. No, they do not.",
            // Real replies: a question the model asked itself, the question made a statement
            // three times (Gemma 3 270M, cut at 64 tokens).
            "The answer to the question \"Which of the two answers contradicts the claim?\" is \"No.\"",
            "  The two answers contradict each other, so that they cannot both be true.\n\nAnswer:  The two answers contradict each other, so that they cannot both be true.\n\nAnswer:  The two answers contradict each other",
        ];
        for reply in none {
            assert_eq!(read_pair_to(reply, prompt), None, "{reply:?}");
        }
        let read = [
            // Real SmolLM2 replies on Climate-FEVER claims.
            ("The answer is \"Yes\"", true),
            (
                "The two answers do not contradict each other, but rather highlight differences in wording, detail, or length.",
                false,
            ),
            ("No, they do not contradict each other.", false),
            (
                "Yes, the two answers contradict each other, so they cannot both be true.",
                true,
            ),
            (
                "Do the two answers contradict each other, so that they cannot both be true? No.",
                false,
            ),
            (
                "Yes. A blames greenhouse gases and B does not contradict that.\nQuote A: \"driven by greenhouse gases\"",
                true,
            ),
        ];
        for (reply, conflict) in read {
            let got = read_pair_to(reply, prompt).map(|r| r.conflict);
            assert_eq!(got, Some(conflict), "{reply:?}");
        }
        // A quote copies an answer by design: it is kept.
        let r = read_pair_to(
            "Yes.\nQuote A: \"the warming since 1950 is driven by greenhouse gases\"\nQuote B: \"Solar activity has been flat since 1950 while temperatures rose\"",
            prompt,
        )
        .unwrap();
        assert_eq!(
            r.quote_a.as_deref(),
            Some("the warming since 1950 is driven by greenhouse gases")
        );
    }

    #[test]
    fn a_classification_that_repeats_its_format_or_its_claim_is_read_from_the_rest() {
        let req = crate::detect::prompts::classification(
            "It is false that the Moon is made of rock.",
            "The Moon is made of rock, as samples from Apollo show.",
        );
        let prompt = crate::detect::prompts::text_of(&req);
        for reply in [
            "Answer on the first line with exactly \"Answer: True\" or \"Answer: False\", then give a one-sentence reason.",
            "Based on the reference, is the claim true or false?",
            "Claim: It is false that the Moon is made of rock.",
        ] {
            assert_eq!(read_truth_to(reply, prompt), None, "{reply:?}");
        }
        assert_eq!(
            read_truth_to(
                "Claim: It is false that the Moon is made of rock.\nAnswer: False",
                prompt
            ),
            Some(Truth::False)
        );
        assert_eq!(read_truth_to("Answer: True", prompt), Some(Truth::True));
    }

    /// Pair replies and their verdicts (true: conflict). 60 phrasings: the format asked for,
    /// JSON, verdicts first and last, both directions of "not", yes/no, refusals (None).
    const PAIRS: &[(&str, Option<bool>)] = &[
        (
            "Verdict: CONFLICT\nExplanation: A says 1969, B says 1971.\nQuote A: \"1969\"\nQuote B: \"1971\"",
            Some(true),
        ),
        (
            "Verdict: CONSISTENT\nExplanation: Both say Paris.\nQuote A: \"\"\nQuote B: \"\"",
            Some(false),
        ),
        ("verdict: conflict", Some(true)),
        // What SmolLM2 135M replies to the pair check (a verdict first, then noise).
        (
            "No, the two answers do not contradict each other. The phrases \"differences in wording, detail or length\" and \"conflict with each other\" are not contradictory.",
            Some(false),
        ),
        (
            "Yes.\nExplanation: the dates differ.\nQuote A: \"1969\"\nQuote B: \"1971\"",
            Some(true),
        ),
        // A small model echoing the format names no verdict.
        (
            "The conflicting phrase from answer A is \"the conflicting phrase from answer B\" (or \"the conflicting phrase from answer B\")",
            None,
        ),
        (
            "Verdict: CONFLICT or CONSISTENT\nExplanation: one sentence saying why",
            None,
        ),
        (
            "Quote A: \"they conflict\"\nQuote B: \"\"\nVerdict: consistent",
            Some(false),
        ),
        ("VERDICT - consistent", Some(false)),
        ("Final verdict: CONFLICT", Some(true)),
        ("Answer: consistent", Some(false)),
        ("Decision: the answers conflict.", Some(true)),
        ("Conclusion: they are consistent.", Some(false)),
        (
            "{\"verdict\": \"conflict\", \"explanation\": \"dates differ\", \"quote_a\": \"1969\", \"quote_b\": \"1971\"}",
            Some(true),
        ),
        (
            "{\"verdict\": \"consistent\", \"explanation\": \"same\"}",
            Some(false),
        ),
        (
            "```json\n{\"contradiction\": true, \"reason\": \"x\"}\n```",
            Some(true),
        ),
        ("{\"contradiction\": false}", Some(false)),
        ("{\"contradict\": \"yes\"}", Some(true)),
        ("{\"conflict\": \"no\"}", Some(false)),
        (
            "Sure! {\"verdict\": \"CONFLICT\", \"explanation\": \"differ\"} Hope this helps.",
            Some(true),
        ),
        (
            "{\"contradictory\": false, \"explanation\": \"same city\"}",
            Some(false),
        ),
        (
            "Yes, they contradict each other: one says 5, the other 7.",
            Some(true),
        ),
        ("No, they do not contradict each other.", Some(false)),
        ("Yes.", Some(true)),
        ("No.", Some(false)),
        ("yes", Some(true)),
        ("No - both say the same thing.", Some(false)),
        ("The two answers contradict each other.", Some(true)),
        ("The answers do not contradict each other.", Some(false)),
        (
            "They don't contradict each other; B adds detail.",
            Some(false),
        ),
        ("These answers are contradictory.", Some(true)),
        ("These answers are not contradictory.", Some(false)),
        ("There is a contradiction between A and B.", Some(true)),
        ("There is no contradiction between them.", Some(false)),
        ("There's no real conflict here.", Some(false)),
        ("The answers are consistent with each other.", Some(false)),
        (
            "The answers are not consistent: A says north, B says south.",
            Some(true),
        ),
        ("The answers aren't consistent.", Some(true)),
        ("They are inconsistent.", Some(true)),
        ("The statements are incompatible.", Some(true)),
        ("The statements are compatible.", Some(false)),
        ("Both answers agree on the date.", Some(false)),
        ("The answers do not agree on the capital.", Some(true)),
        ("They disagree? No: they are in agreement.", Some(false)),
        ("Answer A clashes with answer B over the year.", Some(true)),
        (
            "A claims 206 bones while B claims 300; they conflict.",
            Some(true),
        ),
        (
            "Looking at both: A mentions Lyon, B mentions Lyon too. They are consistent.",
            Some(false),
        ),
        (
            "After comparing the dates, I find that the answers contradict.",
            Some(true),
        ),
        (
            "B is more detailed but does not conflict with A.",
            Some(false),
        ),
        ("There are no contradictions.", Some(false)),
        (
            "Non-contradictory: both describe the same event.",
            Some(false),
        ),
        ("Neither contradicts the other.", Some(false)),
        ("A says yes, B says no, so they contradict.", Some(true)),
        (
            "At first they seem to conflict, but they are consistent. Therefore, consistent.",
            Some(false),
        ),
        (
            "Some details differ, but overall there is no contradiction.",
            Some(false),
        ),
        (
            "One could say they are consistent in tone, but they contradict on the facts. Thus they contradict.",
            Some(true),
        ),
        ("CONFLICT", Some(true)),
        ("CONSISTENT", Some(false)),
        ("I cannot determine whether they contradict.", None),
        ("Not enough information to decide.", None),
        ("", None),
        ("The answers are about different things.", None),
        ("Hmm.", None),
        ("I'm unable to assess this.", None),
        (
            "They might conflict or might be consistent; it is unclear.",
            None,
        ),
    ];

    #[test]
    fn pair_replies_are_read_in_sixty_phrasings() {
        assert!(PAIRS.len() >= 50);
        for (reply, want) in PAIRS {
            let got = read_pair(reply).map(|r| r.conflict);
            assert_eq!(got, *want, "{reply:?}");
        }
    }

    #[test]
    fn explanations_and_quotes_are_kept() {
        let r = read_pair(PAIRS[0].0).unwrap();
        assert_eq!(r.explanation, "A says 1969, B says 1971.");
        assert_eq!(r.quote_a.as_deref(), Some("1969"));
        assert_eq!(r.quote_b.as_deref(), Some("1971"));
        let r = read_pair(PAIRS[1].0).unwrap();
        assert_eq!((r.quote_a, r.quote_b), (None, None));
        let json = PAIRS
            .iter()
            .find(|p| p.0.starts_with("{\"verdict\": \"conflict\""))
            .unwrap();
        let r = read_pair(json.0).unwrap();
        assert_eq!(r.explanation, "dates differ");
        assert_eq!(r.quote_b.as_deref(), Some("1971"));
    }

    /// Classifications and their reading: 56 phrasings, both directions of "not", JSON, the
    /// answer first or last, refusals (None).
    const TRUTHS: &[(&str, Option<Truth>)] = &[
        (
            "Answer: True\nThe reference supports it.",
            Some(Truth::True),
        ),
        (
            "Answer: False\nThe reference says otherwise.",
            Some(Truth::False),
        ),
        ("answer: true", Some(Truth::True)),
        ("ANSWER: FALSE", Some(Truth::False)),
        ("Answer - True", Some(Truth::True)),
        ("Final answer: False.", Some(Truth::False)),
        ("Verdict: true", Some(Truth::True)),
        ("Classification: false", Some(Truth::False)),
        ("Label: True", Some(Truth::True)),
        ("True.", Some(Truth::True)),
        ("False.", Some(Truth::False)),
        ("true", Some(Truth::True)),
        ("FALSE", Some(Truth::False)),
        ("The claim is true.", Some(Truth::True)),
        ("The claim is false.", Some(Truth::False)),
        ("The claim is untrue.", Some(Truth::False)),
        ("The claim is not true.", Some(Truth::False)),
        ("The claim isn't true.", Some(Truth::False)),
        ("This is not false.", Some(Truth::True)),
        ("The claim is false, not true.", Some(Truth::False)),
        ("The claim is true, not false.", Some(Truth::True)),
        (
            "It is not true that the Sahara is in South America.",
            Some(Truth::False),
        ),
        ("The claim is correct.", Some(Truth::True)),
        ("The claim is incorrect.", Some(Truth::False)),
        ("The claim is not correct.", Some(Truth::False)),
        ("The statement is accurate.", Some(Truth::True)),
        ("The statement is inaccurate.", Some(Truth::False)),
        ("The statement is not accurate.", Some(Truth::False)),
        ("The claim is misleading.", Some(Truth::False)),
        (
            "The claim is supported by the reference.",
            Some(Truth::True),
        ),
        ("The claim is refuted by the reference.", Some(Truth::False)),
        (
            "Based on the reference, the claim is true. It matches the summary.",
            Some(Truth::True),
        ),
        (
            "Based on the reference the answer is: False",
            Some(Truth::False),
        ),
        (
            "After reading the reference, I conclude the claim is false.",
            Some(Truth::False),
        ),
        (
            "{\"answer\": \"True\", \"reason\": \"x\"}",
            Some(Truth::True),
        ),
        ("{\"answer\": \"false\"}", Some(Truth::False)),
        ("{\"answer\": true}", Some(Truth::True)),
        ("{\"answer\": false}", Some(Truth::False)),
        ("```json\n{\"label\": \"FALSE\"}\n```", Some(Truth::False)),
        ("{\"classification\": \"True\"}", Some(Truth::True)),
        (
            "The reference does not say much, but the claim is true.",
            Some(Truth::True),
        ),
        (
            "Reason: the claim contradicts the source.\nAnswer: False",
            Some(Truth::False),
        ),
        ("Reasoning first... Answer: True", Some(Truth::True)),
        ("**Answer: False**", Some(Truth::False)),
        ("Answer: **True**", Some(Truth::True)),
        ("The claim is never true.", Some(Truth::False)),
        (
            "That is not correct; the capital is Canberra.",
            Some(Truth::False),
        ),
        ("Yes, it is true.", Some(Truth::True)),
        ("No, that's false.", Some(Truth::False)),
        ("I cannot determine whether the claim is true.", None),
        ("Not enough information to say.", None),
        ("", None),
        ("The reference is about something else.", None),
        ("Hmm, hard to say.", None),
        ("I am unable to answer this.", None),
        ("Unclear.", None),
        // Released AutoHall replies that abstain while naming the question.
        ("It is unclear whether the claim is true or not.", None),
        ("One would need accurate information.", None),
        (
            "The question is whether it is true: it is false.",
            Some(Truth::False),
        ),
    ];

    #[test]
    fn classifications_are_read_in_fifty_phrasings_and_not_true_is_false() {
        assert!(TRUTHS.len() >= 50);
        for (reply, want) in TRUTHS {
            assert_eq!(read_truth(reply), *want, "{reply:?}");
        }
    }

    #[test]
    fn refusals_without_content_are_told_from_references() {
        for r in [
            "I cannot provide a specific reference for this claim.",
            "I'm sorry, but I can't browse the internet to find sources.",
            "As an AI, I do not have access to external databases. I apologize.",
            "I am unable to provide a reference.",
            "",
            "No specific reference available.",
        ] {
            assert!(is_refusal(r), "{r:?}");
        }
        for r in [
            "Title: The Structure of DNA. Source: Nature, 1953. Summary: Watson and Crick describe the double helix of DNA, with two strands wound around each other and bases pairing across.",
            "I cannot provide a link, but here is a summary: the Berlin Wall fell on 9 November 1989 after weeks of protests in East Germany, and border crossings opened that night.",
            "Title: Canberra. Source: Encyclopaedia. Summary: Canberra is the capital city of Australia.",
        ] {
            assert!(!is_refusal(r), "{r:?}");
        }
    }

    /// Replies that say both (seen in the hand-labelled fixture of real SmolLM2 replies) are
    /// no verdict; the question's own definition ("cannot both be true") is a conflict.
    #[test]
    fn a_reply_that_contradicts_itself_gives_no_verdict() {
        for reply in [
            "The two answers do contradict each other, but they can both be true.",
            "The two answers do contradict each other, but they can be reconciled by considering the context.",
            "The two answers contradict each other, but the first answer is not a contradiction.",
        ] {
            assert_eq!(read_pair(reply), None, "{reply:?}");
        }
        let c = |r: &str| read_pair(r).map(|p| p.conflict);
        assert_eq!(
            c("The two answers contradict each other, as they cannot both be true."),
            Some(true)
        );
        assert_eq!(
            c(
                "The answer is not a contradiction. The two answers are not mutually exclusive, and the two answers can both be true."
            ),
            Some(false)
        );
        // Classification: "not entirely true" is false; "true, but not a fact" says both.
        assert_eq!(
            read_truth("The claim is not entirely true."),
            Some(Truth::False)
        );
        assert_eq!(read_truth("The claim is true, but it's not a fact."), None);
        assert_eq!(read_truth("It is false, not true."), Some(Truth::False));
        assert_eq!(
            read_truth("The claim is not true. It has indeed grown, but it's not a fact."),
            Some(Truth::False)
        );
    }
}
