//! One response to one verdict: the evaluator of the item's task decides, by rule where it can,
//! else by asking a judge. Pure: no I/O here; whoever calls a judge feeds its reply back through
//! [`judge::read`](super::judge::read).

use std::sync::LazyLock;

use regex::Regex;

use super::judge::{self, JudgeAsk, JudgeKind};
use super::rules::{self, Verdict};
use super::text::{is_failed, loose};
use super::{formats, ifeval, language};
use crate::dataset::{Dataset, Item};
use crate::taxonomy::Evaluator;

/// What the rules say about a response.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Settled without a judge.
    Done(Verdict),
    /// Needs this judge (the rule could not settle it).
    Judge(JudgeAsk),
    /// Needs a judge, but the dataset has no prompt for it (nor do we): left unscored.
    NoPrompt(JudgeKind),
}

/// How the reason of a failed answer that never had a response begins (an item a responses file
/// or an import left out): its score's detail says so.
pub const NO_RESPONSE: &str = "no response in ";

/// Scores a response by rule, or says which judge must decide.
pub fn step(ds: &Dataset, item: &Item, response: Option<&str>) -> Step {
    let ev = ds.task_of(item).evaluator;
    let Some(r) = response.filter(|r| !is_failed(Some(r))) else {
        return Step::Done(Verdict::fail(match response {
            Some(r) if r.starts_with("ERROR:") => "failed response (API error)",
            _ => "failed response (empty)",
        }));
    };
    let answer = item.answer.as_deref().unwrap_or("");
    let judged = |kind: JudgeKind| match judge::ask(ds, item, kind, r) {
        Some(a) => Step::Judge(a),
        None => Step::NoPrompt(kind),
    };
    let v = match ev {
        Evaluator::Exact => rules::exact(r, answer),
        Evaluator::Fuzzy => rules::fuzzy(r, answer),
        Evaluator::Choice => rules::choice(r, answer, item.options.as_ref().map_or(0, |o| o.len())),
        Evaluator::Abstain => rules::abstain(r),
        Evaluator::TruthLabel => rules::truth_label(r, answer),
        Evaluator::WordRange => match item.word_range {
            Some([lo, hi]) => rules::word_range(r, lo, hi),
            None => Verdict::fail("item has no word_range"),
        },
        Evaluator::DataFormat => match item.format.as_deref() {
            Some(f) => formats::data_format(r, f),
            None => Verdict::fail("item has no format"),
        },
        Evaluator::Language => match item.language.as_deref() {
            Some(want) => {
                let want = language::canonical(want);
                match language::detect(r) {
                    Some(got) => Verdict::new(
                        got == want,
                        format!(
                            "detected {}, expected {}",
                            language::name(got),
                            language::name(&want)
                        ),
                    ),
                    None => Verdict::fail("no language detected"),
                }
            }
            None => Verdict::fail("item has no language"),
        },
        Evaluator::Ifeval => ifeval::ifeval(
            r,
            item.instruction_id.as_deref(),
            item.kwargs.as_deref(),
            &item.question,
        ),
        Evaluator::FactJudge => match (yes_no(r), yes_no(answer)) {
            (Some(a), Some(b)) if a == b => Verdict::pass(format!("both say {a}")),
            _ => return judged(JudgeKind::EQUIVALENCE),
        },
        Evaluator::AnswerMatch => {
            if rules::abstain(r).score == 1.0 {
                Verdict::fail("abstained")
            } else {
                let (la, lr) = (loose(answer), loose(r));
                if !la.is_empty() && lr.contains(&la) {
                    Verdict::pass("contains the answer")
                } else {
                    return judged(JudgeKind::EQUIVALENCE);
                }
            }
        }
        Evaluator::JudgeEquiv => return judged(JudgeKind::EQUIVALENCE),
        Evaluator::JudgeMath => return judged(JudgeKind::MATH),
        Evaluator::JudgeCode => return judged(JudgeKind::CODE),
        Evaluator::JudgeClaims => return judged(JudgeKind::CLAIMS),
    };
    Step::Done(v)
}

/// What the rule alone says where it has a verdict yet the judge decides: a fact_judge answer
/// that commits to the opposite yes/no of the reference is wrong by the words (PRISM still asks
/// the judge, which may read "Yes, that is a myth" as agreeing with "No."). `None` elsewhere.
/// Never a score: the judge's verdict stands; the pair only tells review where to look.
pub fn rule_verdict(ds: &Dataset, item: &Item, response: Option<&str>) -> Option<f64> {
    let r = response.filter(|r| !is_failed(Some(r)))?;
    match ds.task_of(item).evaluator {
        Evaluator::FactJudge => match (yes_no(r), yes_no(item.answer.as_deref()?)) {
            (Some(a), Some(b)) if a != b => Some(0.0),
            _ => None,
        },
        _ => None,
    }
}

/// The one of yes/no a text commits to (whole words, any case); a text with both commits to
/// neither.
pub fn yes_no(s: &str) -> Option<&'static str> {
    static YES: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)\byes\b").expect("a fixed pattern"));
    static NO: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)\bno\b").expect("a fixed pattern"));
    match (YES.is_match(s), NO.is_match(s)) {
        (true, false) => Some("yes"),
        (false, true) => Some("no"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ds() -> Dataset {
        crate::dataset::load_sample().dataset
    }

    fn at<'a>(ds: &'a Dataset, id: &str) -> &'a Item {
        ds.item_by_id(id).unwrap()
    }

    #[test]
    fn yes_no_commitment() {
        assert_eq!(yes_no("No. He excelled"), Some("no"));
        assert_eq!(yes_no("YES, it is"), Some("yes"));
        assert_eq!(yes_no("yes and no"), None);
        assert_eq!(yes_no("Nobody knows; eyes"), None, "whole words only");
    }

    #[test]
    fn the_rule_has_a_verdict_only_where_answer_and_reference_commit_opposite() {
        let ds = ds();
        let myth = at(&ds, "KE-FD-Myths-0001"); // reference: "No. He excelled ..."
        assert_eq!(
            rule_verdict(&ds, myth, Some("Yes, that is a myth.")),
            Some(0.0)
        );
        assert_eq!(rule_verdict(&ds, myth, Some("No, that is a myth.")), None);
        assert_eq!(rule_verdict(&ds, myth, Some("It is a myth.")), None);
        assert_eq!(rule_verdict(&ds, myth, Some("Yes and no.")), None);
        assert_eq!(rule_verdict(&ds, myth, None), None);
        let open = ds
            .items
            .iter()
            .find(|i| ds.task_of(i).evaluator != Evaluator::FactJudge)
            .unwrap();
        assert_eq!(rule_verdict(&ds, open, Some("Yes")), None);
    }

    #[test]
    fn judged_evaluators_settle_by_rule_when_they_can() {
        let ds = ds();
        let myth = at(&ds, "KE-FD-Myths-0001");
        // fact_judge: both say no → correct without a judge.
        assert!(
            matches!(step(&ds, myth, Some("No, that is a myth.")), Step::Done(v) if v.score == 1.0)
        );
        // Disagreeing or uncommitted → the semantic judge, with the answer and reference filled in.
        match step(&ds, myth, Some("Yes, he failed.")) {
            Step::Judge(a) => {
                assert_eq!(a.kind, JudgeKind::EQUIVALENCE);
                assert!(a.prompt.contains("Yes, he failed."));
                assert!(a.prompt.contains("He excelled at mathematics"));
            }
            other => panic!("{other:?}"),
        }
        let open = at(&ds, "KM-DSK-OpenScience-0001");
        // answer_match: containment on loose forms; abstaining scores 0; else the judge.
        assert!(
            matches!(step(&ds, open, Some("It is Carbon Dioxide.")), Step::Done(v) if v.score == 1.0)
        );
        assert!(matches!(step(&ds, open, Some("[NO_INFO]")), Step::Done(v) if v.score == 0.0));
        assert!(matches!(step(&ds, open, Some("CO2")), Step::Judge(_)));
        // Failed responses score 0 before any judge is asked.
        assert!(
            matches!(step(&ds, myth, Some("ERROR: HTTP 429")), Step::Done(v) if v.score == 0.0 && v.detail.contains("API error"))
        );
        assert!(matches!(step(&ds, myth, None), Step::Done(v) if v.score == 0.0));
    }

    #[test]
    fn language_and_choice_through_the_dispatch() {
        let ds = ds();
        let fr = at(&ds, "IFE-LgC-Languages-0001");
        assert!(
            matches!(step(&ds, fr, Some("Aujourd'hui il fait très beau, allons nous promener dans le parc.")), Step::Done(v) if v.score == 1.0 && v.detail == "detected French, expected French")
        );
        assert!(
            matches!(step(&ds, fr, Some("The weather is lovely today, let us walk in the park.")), Step::Done(v) if v.score == 0.0)
        );
        let syl = at(&ds, "RE-LF-Syllogisms-0001");
        assert!(
            matches!(step(&ds, syl, Some("Reasoning...\nC")), Step::Done(v) if v.detail == "extracted C, expected C")
        );
    }
}
