//! The LLM judges: which prompt, how it is filled, and how a reply is read.
//!
//! Four judges, per PRISM-FORMAT.md: semantic equivalence (temperature 0; a reply containing YES
//! means correct), math equivalence (`{"correct": 0|1}`), the code rubric (four 0-10 scores, the
//! total recomputed here) and the claim audit (`total_claims`, `hallucinated_claims`,
//! `hallucination_rate`). JSON is read after stripping code fences, from the whole reply or else
//! from the first `{...}` that holds the required keys. An unreadable reply is asked again, up to
//! [`ATTEMPTS`] times; then the fallback applies.

use serde_json::Value;

use super::rules::Verdict;
use crate::dataset::{Dataset, Item, Task};
use crate::provider::{ChatRequest, Message, Params};

/// How many times a judge is asked before its fallback applies.
pub(crate) const ATTEMPTS: u32 = 3;

/// One judge, defined in one place: its name, PRISM's temperature for it, which prompt files
/// it uses, how its reply is read, and what an unreadable reply scores.
pub struct JudgeDef {
    pub name: &'static str,
    pub temperature: f64,
    /// Whether a prompt named after the task (`prompts/judges/<task id>.md`) comes first.
    pub per_task: bool,
    /// Generic prompt files, in order of preference.
    pub prompts: &'static [&'static str],
    /// Reads a reply; `None` when it holds no usable answer (the judge is asked again).
    pub read: fn(&str) -> Option<Verdict>,
    /// The detail of the fallback score (always 0) when no reply could be read.
    pub fallback: &'static str,
}

/// A judge: a copyable handle on its definition.
#[derive(Clone, Copy)]
pub struct JudgeKind(pub &'static JudgeDef);

impl JudgeKind {
    /// Semantic equivalence: temperature 0; a reply containing YES means correct.
    pub const EQUIVALENCE: JudgeKind = JudgeKind(&JudgeDef {
        name: "semantic_equivalence",
        temperature: 0.0,
        per_task: false,
        prompts: &["semantic_equivalence"],
        read: read_equivalence,
        fallback: "judge unreadable: fallback incorrect",
    });
    /// Semantic equivalence read strictly ([`Reading::Strict`]): the same prompt, a reply
    /// must say exactly one of yes / no.
    pub const EQUIVALENCE_STRICT: JudgeKind = JudgeKind(&JudgeDef {
        name: "semantic_equivalence",
        temperature: 0.0,
        per_task: false,
        prompts: &["semantic_equivalence"],
        read: read_equivalence_strict,
        fallback: "judge unreadable: fallback incorrect",
    });
    /// Math equivalence: `{"correct": 0|1}`.
    pub const MATH: JudgeKind = JudgeKind(&JudgeDef {
        name: "math_equivalence",
        temperature: 0.1,
        per_task: false,
        prompts: &["math_equivalence"],
        read: read_math,
        fallback: "judge unreadable: fallback incorrect",
    });
    /// The code rubric: four 0-10 scores, the total recomputed here.
    pub const CODE: JudgeKind = JudgeKind(&JudgeDef {
        name: "code_rubric",
        temperature: 0.1,
        per_task: true,
        prompts: &["RE-MRF-Code_Generation", "RE-MRF-Code"],
        read: read_code,
        fallback: "judge unreadable: fallback total 0",
    });
    /// The claim audit: hallucinated claims out of all claims.
    pub const CLAIMS: JudgeKind = JudgeKind(&JudgeDef {
        name: "claim_audit",
        temperature: 0.1,
        per_task: true,
        prompts: &["RE-IIF"],
        read: read_claims,
        fallback: "judge unreadable: fallback rate 1.0",
    });

    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub fn temperature(self) -> f64 {
        self.0.temperature
    }

    /// The score when the judge never gave a readable reply.
    pub fn fallback(self) -> Verdict {
        Verdict::fail(self.0.fallback)
    }
}

impl PartialEq for JudgeKind {
    fn eq(&self, other: &JudgeKind) -> bool {
        self.0.name == other.0.name
    }
}

impl JudgeKind {
    /// This judge under `reading` (only the equivalence judge's replies are read two ways).
    pub fn read_as(self, reading: Reading) -> JudgeKind {
        match reading {
            Reading::Strict if self == JudgeKind::EQUIVALENCE => JudgeKind::EQUIVALENCE_STRICT,
            _ => self,
        }
    }
}

impl std::fmt::Debug for JudgeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

/// A question for a judge: its kind and the filled prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeAsk {
    pub kind: JudgeKind,
    pub prompt: String,
}

impl JudgeAsk {
    pub fn request(&self) -> ChatRequest {
        ChatRequest {
            messages: vec![Message::user(self.prompt.clone())],
            params: Params {
                temperature: Some(self.kind.temperature()),
                ..Params::default()
            },
        }
    }
}

/// Our own judge prompts, used when the dataset has none (the sample data's, compiled in).
/// Looked up once into a map: every answer a rule cannot decide asks for one, and the
/// compiled-in directory is found by walking it and comparing paths.
fn builtin(stem: &str) -> Option<&'static str> {
    static BY_STEM: std::sync::LazyLock<std::collections::HashMap<&'static str, &'static str>> =
        std::sync::LazyLock::new(|| {
            crate::dataset::SAMPLE_DATA
                .get_dir("prompts/judges")
                .into_iter()
                .flat_map(|d| d.files())
                .filter(|f| f.path().extension().is_some_and(|e| e == "md"))
                .filter_map(|f| Some((f.path().file_stem()?.to_str()?, f.contents_utf8()?)))
                .collect()
        });
    BY_STEM.get(stem).copied()
}

/// The judge prompt template for a task: the user's own wording of this judge
/// (`--judge-template`), else the dataset's own `prompts/judges/*.md` when present (by task
/// id for the per-task judges), else ours.
pub(crate) fn template<'a>(ds: &'a Dataset, task: &Task, kind: JudgeKind) -> Option<&'a str> {
    if let Some(own) = ds.prompts.judge_overrides.get(kind.name()) {
        return Some(own);
    }
    let own = kind.0.per_task.then_some(task.id.as_str());
    let stems = || own.into_iter().chain(kind.0.prompts.iter().copied());
    stems()
        .find_map(|s| ds.prompts.judges.get(s).map(String::as_str))
        .or_else(|| stems().find_map(builtin))
}

/// Replaces `{name}` placeholders in one pass, so braces in the values (or the JSON examples in
/// the template) are never touched.
pub(crate) fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out =
        String::with_capacity(template.len() + values.iter().map(|v| v.1.len()).sum::<usize>());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let hit = after.find('}').and_then(|close| {
            let name = &after[..close];
            values
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (close, *v))
        });
        match hit {
            Some((close, v)) => {
                out.push_str(v);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Builds the judge question for an item's response.
pub(crate) fn ask(ds: &Dataset, item: &Item, kind: JudgeKind, response: &str) -> Option<JudgeAsk> {
    let task = ds.task_of(item);
    let t = template(ds, task, kind)?;
    let prompt = fill(
        t,
        &[
            ("question", &item.question),
            ("model_answer", response),
            ("reference", item.answer.as_deref().unwrap_or("")),
            ("test_input", item.test_input.as_deref().unwrap_or("")),
            ("test_output", item.test_output.as_deref().unwrap_or("")),
        ],
    );
    Some(JudgeAsk { kind, prompt })
}

/// Reads a judge's reply; `None` when it holds no usable answer (ask again).
pub(crate) fn read(kind: JudgeKind, reply: &str) -> Option<Verdict> {
    (kind.0.read)(reply)
}

/// How an equivalence judge's reply is read: PRISM's way (a `YES` anywhere in the upper-cased
/// reply means the same meaning, whatever else it says: what PRISM-exact scores need), or
/// strictly (the reply must hold exactly one of the whole words yes / no; anything else is
/// unreadable and asked again, then the fallback).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Reading {
    #[default]
    Prism,
    Strict,
}

impl Reading {
    pub fn as_str(self) -> &'static str {
        match self {
            Reading::Prism => "prism",
            Reading::Strict => "strict",
        }
    }
}

/// What an equivalence judge's reply says, word by word (beside PRISM's reading of it): the
/// replies PRISM's rule reads without noticing anything odd ("Yes. No.", "No, not as of
/// yesterday", an escape sequence and a broken JSON) are told apart here and marked wherever
/// verdicts are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ReplyWords {
    /// The whole word yes, and no `no`.
    Yes,
    /// The whole word no, and no `YES` anywhere.
    No,
    /// Both words: PRISM reads "same meaning".
    Both,
    /// Neither word nor a `YES` inside one: PRISM reads "different meaning".
    Neither,
    /// `YES` only inside another word ("yesterday", "eyes"): PRISM reads "same meaning".
    YesInsideWord,
}

impl ReplyWords {
    pub(crate) fn of(reply: &str) -> ReplyWords {
        let upper = reply.to_uppercase();
        let (mut yes, mut no) = (false, false);
        for w in upper.split(|c: char| !c.is_alphanumeric()) {
            yes |= w == "YES";
            no |= w == "NO";
        }
        match (yes, no) {
            (true, true) => ReplyWords::Both,
            (true, false) => ReplyWords::Yes,
            (false, _) if upper.contains("YES") => ReplyWords::YesInsideWord,
            (false, true) => ReplyWords::No,
            (false, false) => ReplyWords::Neither,
        }
    }

    /// What people should know of the reply beside its verdict (`None`: it says one thing).
    pub(crate) fn mark(self) -> Option<&'static str> {
        match self {
            ReplyWords::Yes | ReplyWords::No => None,
            ReplyWords::Both => Some("reply holds both yes and no"),
            ReplyWords::Neither => Some("reply holds neither yes nor no"),
            ReplyWords::YesInsideWord => Some("reply's only YES is inside a word"),
        }
    }

    /// Same meaning under the strict reading; `None`: it decides nothing.
    pub(crate) fn strict(self) -> Option<bool> {
        match self {
            ReplyWords::Yes => Some(true),
            ReplyWords::No => Some(false),
            _ => None,
        }
    }
}

/// The mark of an equivalence judge's stored reply (for verdicts and scores kept before the
/// mark was written into their detail); `None` for other judges' replies and clear ones.
pub(crate) fn reply_mark(evaluator: &str, reply: Option<&str>) -> Option<&'static str> {
    if !uses_equivalence(evaluator) {
        return None;
    }
    ReplyWords::of(reply?).mark()
}

/// Whether an evaluator's judge is the semantic-equivalence judge.
pub(crate) fn uses_equivalence(evaluator: &str) -> bool {
    matches!(evaluator, "fact_judge" | "judge_equiv" | "answer_match")
}

fn read_equivalence(reply: &str) -> Option<Verdict> {
    read_equivalence_as(reply, Reading::Prism)
}

fn read_equivalence_strict(reply: &str) -> Option<Verdict> {
    read_equivalence_as(reply, Reading::Strict)
}

/// Reads an equivalence reply; a reply PRISM's rule reads without its saying one clear thing
/// keeps its verdict (PRISM's) with the mark in the detail.
pub(crate) fn read_equivalence_as(reply: &str, reading: Reading) -> Option<Verdict> {
    let t = reply.trim();
    if t.is_empty() {
        return None;
    }
    let words = ReplyWords::of(t);
    let same = match reading {
        Reading::Prism => t.to_uppercase().contains("YES"),
        Reading::Strict => words.strict()?,
    };
    let mut detail = if same {
        "judge: same meaning".to_string()
    } else {
        "judge: different meaning".to_string()
    };
    if let Some(m) = words.mark() {
        detail.push_str(&format!(" ({m})"));
    }
    Some(Verdict::new(same, detail))
}

fn read_math(reply: &str) -> Option<Verdict> {
    let v = json_with(reply, &["correct"])?;
    let c = number(&v["correct"])?;
    let ok = c >= 0.5;
    Some(Verdict::new(
        ok,
        if ok {
            "judge: equivalent"
        } else {
            "judge: not equivalent"
        },
    ))
}

fn read_code(reply: &str) -> Option<Verdict> {
    let keys = ["correctness", "completeness", "efficiency", "readability"];
    let v = json_with(reply, &keys)?;
    let mut parts = [0.0; 4];
    for (p, k) in parts.iter_mut().zip(keys) {
        *p = number(&v[k])?.clamp(0.0, 10.0);
    }
    let total = code_total(parts);
    Some(Verdict {
        score: total as f64 / 5.0,
        detail: format!(
            "judge: correctness {}, completeness {}, efficiency {}, readability {} → total {total}/5",
            parts[0], parts[1], parts[2], parts[3]
        ),
    })
}

fn read_claims(reply: &str) -> Option<Verdict> {
    let v = json_with(
        reply,
        &["total_claims", "hallucinated_claims", "hallucination_rate"],
    )?;
    let total = number(&v["total_claims"])?;
    let bad = number(&v["hallucinated_claims"])?;
    let rate = number(&v["hallucination_rate"])?;
    let score = if total > 0.0 {
        1.0 - (bad / total).clamp(0.0, 1.0)
    } else {
        (1.0 - rate).clamp(0.0, 1.0)
    };
    Some(Verdict {
        score,
        detail: format!("judge: {bad} of {total} claims hallucinated"),
    })
}

/// The code total on 0-5: round(sum / 40 × 5), halves to even, from sub-scores clamped to 0-10.
pub(crate) fn code_total(parts: [f64; 4]) -> u32 {
    let sum: f64 = parts.iter().map(|p| p.clamp(0.0, 10.0)).sum();
    (sum / 40.0 * 5.0).round_ties_even() as u32
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().trim_end_matches('%').parse().ok(),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
    .filter(|n: &f64| n.is_finite())
}

/// The reply's JSON object holding `keys`: the whole text after stripping code fences, else the
/// first balanced `{...}` (in the order they open, braces inside JSON strings skipped) that
/// parses and holds them.
///
/// Linear in the reply: one pass finds every balanced span, each is parsed once, spans nested
/// deeper than [`MAX_NESTING`] are not tried, and parsing fails fast on text that is not JSON.
/// (Scanning again from every `{` took 18.5 s on a reply of 100,000 `{`.)
pub(crate) fn json_with(reply: &str, keys: &[&str]) -> Option<Value> {
    let has = |v: &Value| v.is_object() && keys.iter().all(|k| v.get(k).is_some());
    let stripped = strip_fences(reply);
    if let Ok(v) = serde_json::from_str::<Value>(stripped.trim())
        && has(&v)
    {
        return Some(v);
    }
    balanced_spans(&stripped)
        .into_iter()
        .find_map(|(start, end)| {
            serde_json::from_str::<Value>(&stripped[start..=end])
                .ok()
                .filter(has)
        })
}

/// Objects nested deeper than this inside a reply are not tried on their own.
pub(crate) const MAX_NESTING: usize = 32;

/// Every balanced `{...}` span of `s`, by where it opens. Quotes count only inside braces (prose
/// around the JSON may hold a stray `"`).
fn balanced_spans(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut open: Vec<usize> = Vec::new();
    let mut spans = Vec::new();
    let (mut in_str, mut esc) = (false, false);
    for (i, &c) in b.iter().enumerate() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' if !open.is_empty() => in_str = true,
            b'{' => open.push(i),
            b'}' => {
                if let Some(start) = open.pop()
                    && open.len() < MAX_NESTING
                {
                    spans.push((start, i));
                }
            }
            _ => {}
        }
    }
    spans.sort_unstable();
    spans
}

fn strip_fences(s: &str) -> String {
    s.lines()
        .filter(|l| !l.trim_start().starts_with("```"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_total_rounds_halves_to_even() {
        // 16/40*5 = 2.0; 20/40*5 = 2.5 → 2; 28/40*5 = 3.5 → 4; 36/40*5 = 4.5 → 4.
        assert_eq!(code_total([4.0, 4.0, 4.0, 4.0]), 2);
        assert_eq!(code_total([5.0, 5.0, 5.0, 5.0]), 2);
        assert_eq!(code_total([7.0, 7.0, 7.0, 7.0]), 4);
        assert_eq!(code_total([9.0, 9.0, 9.0, 9.0]), 4);
        assert_eq!(code_total([10.0, 10.0, 10.0, 10.0]), 5);
        // Out-of-range sub-scores are clamped first.
        assert_eq!(code_total([15.0, 10.0, 10.0, -3.0]), 4);
        // The judge's own total is ignored.
        let v = read(
            JudgeKind::CODE,
            r#"{"correctness":5,"completeness":5,"efficiency":5,"readability":5,"total":5}"#,
        )
        .unwrap();
        assert_eq!(v.score, 0.4);
    }

    #[test]
    fn json_is_found_in_fenced_chatty_and_broken_replies() {
        let keys = ["correct"];
        assert!(json_with("```json\n{\"correct\": 1}\n```", &keys).is_some());
        assert!(
            json_with(
                "Sure! Here it is: {\"correct\": 0} Hope that helps {x}",
                &keys
            )
            .is_some()
        );
        assert!(json_with("{\"other\": 1} then {\"correct\": 1}", &keys).is_some());
        assert!(json_with("{\"note\": \"a } in a string\", \"correct\": 1}", &keys).is_some());
        assert!(json_with("{\"correct\": 1", &keys).is_none(), "truncated");
        assert!(json_with("I think it is correct.", &keys).is_none());
        assert_eq!(
            read(JudgeKind::MATH, "{\"correct\": \"1\"}").unwrap().score,
            1.0
        );
        assert!(read(JudgeKind::MATH, "{\"correct\": null}").is_none());
    }

    #[test]
    fn json_search_stays_linear_on_hostile_replies() {
        let keys = ["correct"];
        // 100,000 unclosed braces: no balanced span at all, one pass.
        assert!(json_with(&"{".repeat(100_000), &keys).is_none());
        assert!(balanced_spans(&"{".repeat(100_000)).is_empty());
        // Deep nesting: only the outer 32 levels are candidates, each parsed once.
        let deep = format!("{}{}", "{".repeat(50_000), "}".repeat(50_000));
        assert_eq!(balanced_spans(&deep).len(), MAX_NESTING);
        assert!(json_with(&deep, &keys).is_none());
        // Many flat objects before the answer: each tried once, the answer found.
        let flat = format!("{}{{\"correct\": 1}}", "{\"x\": 1} ".repeat(20_000));
        assert_eq!(json_with(&flat, &keys).unwrap()["correct"], 1);
        // The answer inside an object that is not JSON, and after a stray quote in prose.
        assert_eq!(
            json_with("He said \"ok. { note: {\"correct\": 0} }", &keys).unwrap()["correct"],
            0
        );
        // Braces in strings do not count.
        assert_eq!(
            json_with("{\"a\": \"}{\", \"correct\": 1}", &keys).unwrap()["correct"],
            1
        );
    }

    #[test]
    fn claims_and_equivalence() {
        let v = read(
            JudgeKind::CLAIMS,
            r#"{ "total_claims": 6, "hallucinated_claims": 2, "hallucination_rate": 0.9 }"#,
        )
        .unwrap();
        assert!((v.score - (1.0 - 2.0 / 6.0)).abs() < 1e-12);
        let v = read(
            JudgeKind::CLAIMS,
            r#"{ "total_claims": 0, "hallucinated_claims": 0, "hallucination_rate": 0.25 }"#,
        )
        .unwrap();
        assert_eq!(v.score, 0.75);
        let v = read(
            JudgeKind::CLAIMS,
            r#"{ "total_claims": 2, "hallucinated_claims": 5, "hallucination_rate": 1 }"#,
        )
        .unwrap();
        assert_eq!(v.score, 0.0);
        assert_eq!(read(JudgeKind::EQUIVALENCE, "YES").unwrap().score, 1.0);
        assert_eq!(read(JudgeKind::EQUIVALENCE, "No.").unwrap().score, 0.0);
        assert!(read(JudgeKind::EQUIVALENCE, "  ").is_none());
    }

    /// PRISM's reading (YES anywhere) stays, for PRISM-exact scores; what it reads without
    /// noticing is marked, and the strict reading decides only a reply that says one thing.
    #[test]
    fn equivalence_replies_that_say_two_things_or_none_are_marked() {
        let cases: [(&str, f64, Option<&str>, Option<bool>); 8] = [
            ("YES", 1.0, None, Some(true)),
            ("no.", 0.0, None, Some(false)),
            ("Yes. No.", 1.0, Some("both yes and no"), None),
            (
                "No, it was not reported as of yesterday.",
                1.0,
                Some("inside a word"),
                None,
            ),
            (
                "\u{1b}]0;x\u{7}{\"verdict\": NaN}",
                0.0,
                Some("neither yes nor no"),
                None,
            ),
            ("The eyes have it", 1.0, Some("inside a word"), None),
            ("```json\n{\"same\": \"yes\"}\n```", 1.0, None, Some(true)),
            ("Not equivalent", 0.0, Some("neither"), None),
        ];
        for (reply, prism, mark, strict) in cases {
            let v = read(JudgeKind::EQUIVALENCE, reply).unwrap();
            assert_eq!(v.score, prism, "{reply:?}");
            match mark {
                Some(m) => assert!(v.detail.contains(m), "{reply:?}: {}", v.detail),
                None => assert!(!v.detail.contains('('), "{reply:?}: {}", v.detail),
            }
            let s = read(JudgeKind::EQUIVALENCE.read_as(Reading::Strict), reply);
            assert_eq!(s.map(|v| v.score == 1.0), strict, "{reply:?} strictly");
            assert_eq!(
                reply_mark("fact_judge", Some(reply)).is_some(),
                mark.is_some(),
                "{reply:?}"
            );
        }
        assert_eq!(reply_mark("judge_math", Some("Yes. No.")), None);
        assert_eq!(JudgeKind::CLAIMS.fallback().score, 0.0);
    }

    #[test]
    fn placeholders_are_filled_once_and_literally() {
        let t = "Q: {question}\nA: {model_answer}\nJSON: {\"total\": 0-5}\n{unknown}";
        let out = fill(
            t,
            &[("question", "2+2"), ("model_answer", "{question} is {4}")],
        );
        assert_eq!(
            out,
            "Q: 2+2\nA: {question} is {4}\nJSON: {\"total\": 0-5}\n{unknown}"
        );
    }
}

#[cfg(test)]
mod template_tests {
    use super::*;

    #[test]
    fn the_releases_own_judge_prompts_come_first_then_ours() {
        let mini =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/prism-mini");
        let ds = crate::dataset::load_path(&mini).unwrap().dataset;
        let task = ds
            .tasks
            .iter()
            .find(|t| t.id == "RE-IIF-Summarize")
            .unwrap();
        let t = template(&ds, task, JudgeKind::CLAIMS).unwrap();
        assert_eq!(
            t, ds.prompts.judges["RE-IIF-Summarize"],
            "the per-task prompt of the release"
        );
        let code = ds
            .tasks
            .iter()
            .find(|t| t.id == "RE-MRF-Code_Generation")
            .unwrap();
        assert!(
            template(&ds, code, JudgeKind::CODE)
                .unwrap()
                .contains("[TEST INPUT]")
        );
        // The sample data has no per-task claim prompt: our generic one.
        let sample = crate::dataset::load_sample().dataset;
        let summ = sample
            .tasks
            .iter()
            .find(|t| t.evaluator == crate::taxonomy::Evaluator::JudgeClaims)
            .unwrap();
        let ours = template(&sample, summ, JudgeKind::CLAIMS).unwrap();
        assert!(ours.contains("You audit texts for invented content."));
        // A dataset without judge prompts falls back to ours too.
        let mut bare = sample.clone();
        bare.prompts.judges.clear();
        assert_eq!(template(&bare, summ, JudgeKind::CLAIMS).unwrap(), ours);
        assert!(
            template(&bare, summ, JudgeKind::EQUIVALENCE)
                .unwrap()
                .contains("{model_answer}")
        );
    }
}
