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
mod tests;
