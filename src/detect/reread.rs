//! Reading a run's stored replies again with today's readers. A verdict is read from the judge's
//! reply when it arrives and stored; when the readers learn (an echo of the question is no
//! verdict; "they contradict, but can both be true" is not a conflict), runs made before keep
//! the verdicts they got then, and their numbers overstate or understate. Every reply is kept
//! beside its verdict, and the request is rebuilt from what the run recorded (its wordings, the
//! answer, the sample), so a run can be read again without asking any model.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::parse::{read_pair_to, read_truth_to};
use super::prompts;
use super::stored::Stored;
use crate::dataset::claims::Truth;
use crate::store::{Class, DetectRun, DetectWrite, Verdict};

/// What reading again changed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Reread {
    /// Pair replies read again (those with a reply and a verdict that is not a failed call).
    pub pairs: usize,
    /// How many moved, by (before, after).
    pub pair_changes: BTreeMap<String, usize>,
    /// Classification replies read again.
    pub classifications: usize,
    pub class_changes: BTreeMap<String, usize>,
    /// The writes that store the new readings (verdicts, explanations and quotes).
    #[serde(skip)]
    pub writes: Vec<DetectWrite>,
}

impl Reread {
    pub fn changed(&self) -> usize {
        self.pair_changes.values().sum::<usize>() + self.class_changes.values().sum::<usize>()
    }
}

/// Reads every stored pair and classification reply of `run` again.
pub fn reread(run: &DetectRun, stored: &Stored) -> Reread {
    let cfg = &run.config;
    let mut out = Reread::default();
    let targets: HashMap<u32, _> = stored.targets.iter().map(|t| (t.idx, t)).collect();
    let samples: HashMap<(u32, u32, u32), &str> = stored
        .samples
        .iter()
        .filter_map(|s| Some(((s.target, s.round, s.k), s.text.as_deref()?)))
        .collect();
    for p in &stored.pairs {
        let (Some(reply), Some(t)) = (&p.reply, targets.get(&p.target)) else {
            continue;
        };
        if p.verdict == Verdict::Failed {
            continue;
        }
        let (Some(answer), Some(sample)) = (&t.answer, samples.get(&(p.target, p.round, p.k)))
        else {
            continue;
        };
        let req = prompts::pair_check_with(
            &cfg.templates,
            p.wording,
            &super::run::pair_question(run.kind, t),
            answer,
            sample,
        );
        let reading = read_pair_to(reply, prompts::text_of(&req));
        let verdict = match &reading {
            Some(r) if r.conflict => Verdict::Conflict,
            Some(_) => Verdict::Consistent,
            None => Verdict::Unparsed,
        };
        out.pairs += 1;
        if verdict != p.verdict {
            *out.pair_changes
                .entry(format!("{} → {}", p.verdict.as_str(), verdict.as_str()))
                .or_default() += 1;
        }
        let mut new = p.clone();
        new.verdict = verdict;
        new.explanation = reading.as_ref().map(|r| r.explanation.clone());
        new.quote_a = reading.as_ref().and_then(|r| r.quote_a.clone());
        new.quote_b = reading.as_ref().and_then(|r| r.quote_b.clone());
        if new != *p {
            out.writes.push(DetectWrite::Pair(new));
        }
    }
    for t in &stored.targets {
        let (Some(reply), Some(answer), Some(old)) = (&t.class_reply, &t.answer, t.class) else {
            continue;
        };
        let req = prompts::classification_with(&cfg.templates, &t.question, answer);
        let class = match read_truth_to(reply, prompts::text_of(&req)) {
            Some(Truth::True) => Class::True,
            Some(Truth::False) => Class::False,
            None => Class::Unparsed,
        };
        out.classifications += 1;
        if class != old {
            *out.class_changes
                .entry(format!("{} → {}", old.as_str(), class.as_str()))
                .or_default() += 1;
            out.writes.push(DetectWrite::Class {
                run: run.id.clone(),
                target: t.idx,
                class: Ok(class),
                reply: Some(reply.clone()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::test_support::{pair, target};
    use crate::store::{DetectConfig, DetectKind, RunStatus, SampleRecord};

    /// Verdicts stored by an older reader: "contradict, but can both be true" taken for a
    /// conflict, an echo of the question taken for one, and "not entirely true" for true. Read
    /// again, each moves; a reply read the same way stays, and a failed call is left alone.
    #[test]
    fn older_verdicts_are_read_again_from_their_replies() {
        let run = DetectRun {
            id: "d".into(),
            created_at: 0,
            kind: DetectKind::Claims,
            dataset: "x".into(),
            config: DetectConfig {
                k: 4,
                ..DetectConfig::default()
            },
            status: RunStatus::Finished,
        };
        let mut t = target(0, Truth::True, Class::True);
        t.question = "The Arctic is warming.".into();
        t.answer = Some("A study in Nature reports the Arctic warms fast.".into());
        t.class_reply = Some("The claim is not entirely true.".into());
        let sample = |k: u32| SampleRecord {
            run_id: "d".into(),
            target: 0,
            round: 0,
            k,
            variant: 1,
            text: Some(format!("Sample {k} says the Arctic is cooling.")),
            error: None,
            attempts: 1,
            cached: false,
            created_at: 0,
        };
        let with = |k: u32, v: Verdict, reply: &str| {
            let mut p = pair(0, 0, k, v);
            p.reply = Some(reply.into());
            p
        };
        let req = prompts::pair_check(
            &super::super::run::pair_question(DetectKind::Claims, &t),
            t.answer.as_deref().unwrap(),
            "Sample 1 says the Arctic is cooling.",
        );
        let echo = format!(
            "{} Do the two answers contradict",
            &prompts::text_of(&req)[..60]
        );
        let stored = Stored {
            targets: vec![t],
            samples: (0..4).map(sample).collect(),
            entailments: vec![],
            pairs: vec![
                with(
                    0,
                    Verdict::Conflict,
                    "The two answers do contradict each other, but they can both be true.",
                ),
                with(1, Verdict::Conflict, &echo),
                with(
                    2,
                    Verdict::Conflict,
                    "Yes. One says warming, the other cooling.",
                ),
                {
                    let mut p = pair(0, 0, 3, Verdict::Failed);
                    p.reply = Some("Yes.".into());
                    p
                },
            ],
        };
        let r = reread(&run, &stored);
        assert_eq!((r.pairs, r.classifications), (3, 1));
        assert_eq!(
            r.pair_changes,
            BTreeMap::from([("conflict → unparsed".to_string(), 2)])
        );
        assert_eq!(
            r.class_changes,
            BTreeMap::from([("true → false".to_string(), 1)])
        );
        assert_eq!(r.changed(), 3);
        // Read again once more, nothing moves.
        let mut again = stored.clone();
        for w in &r.writes {
            match w {
                DetectWrite::Pair(p) => {
                    let i = again.pairs.iter().position(|x| x.k == p.k).unwrap();
                    again.pairs[i] = p.clone();
                }
                DetectWrite::Class { class, .. } => {
                    again.targets[0].class = class.clone().ok();
                }
                _ => unreachable!(),
            }
        }
        assert_eq!(reread(&run, &again).changed(), 0);
    }
}
