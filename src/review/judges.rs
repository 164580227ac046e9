//! The judge on trial: how far each LLM judge can be trusted, from what the store keeps (every
//! judge's verdict per answer and repeat, people's labels on answers, the scores that stand).
//!
//! - **Against people**: per judge and group (evaluator, dimension or sub-task), over the
//!   answers both the judge and people decided: accuracy, Cohen's kappa, the confusion counts
//!   (the judge says correct where people say hallucinated, and the reverse), each with a
//!   bootstrap 95% interval over answers, and n. People's verdict on an answer is what most of
//!   its reviewers' newest labels say ("can't tell" is no verdict; an even split is none).
//! - **Among judges**: Fleiss' kappa and Krippendorff's alpha (nominal) over the answers at
//!   least two judges decided.
//! - **Within a judge**: over the answers it was asked at least twice, the share whose
//!   verdicts were not all alike (it "flips" when asked again).
//! - **What the choice moves**: each model's rates and H-Score as stored (the panel's, or the
//!   one judge's) and under each judge alone (its verdicts in place of the judged scores).
//!
//! A judge's verdict on an answer is what most of its askings say (`eval::panel`).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::agreement::{self, Metric};
use super::pairs::{ac1_of, accuracy, boot, kappa};
use super::template_trial::{self, TemplatePair};
use crate::eval::judge;
use crate::eval::panel;
use crate::eval::summary::{Aggregator, Catalogue, ModelSummary, Point};
use crate::store::judging::newest_labels;
use crate::store::{AnswerLabel, JudgeVerdict, ScoreRecord};
use crate::taxonomy::Dimension;

/// An answer: its run and job.
type Key = (String, u32);

/// How the rows are grouped (besides the row of all answers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum By {
    #[default]
    Evaluator,
    Dimension,
    Task,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub by: By,
    /// Below this many answers decided by both, a cell says it has too few.
    pub min_labels: usize,
    pub resamples: usize,
    pub seed: u64,
    /// How the equivalence judge's stored replies are read (strictly: each reply read again,
    /// no judge asked).
    pub reading: judge::Reading,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            by: By::Evaluator,
            min_labels: 10,
            resamples: 1000,
            seed: 1,
            reading: judge::Reading::Prism,
        }
    }
}

pub use super::replies::Replies;
use super::replies::{replies, score_as};

pub use super::pairs::Est;

/// One judge against people on one group of answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VsPeople {
    pub judge: String,
    /// Answers both the judge and people decided.
    pub n: usize,
    pub too_few: bool,
    pub accuracy: Est,
    /// The share people call hallucinated.
    pub base_rate: Option<f64>,
    /// The accuracy of a judge that always says the commoner verdict: what `accuracy` must
    /// beat to mean anything on one-sided labels.
    pub constant_accuracy: Option<f64>,
    pub kappa: Est,
    /// Gwet's AC1: agreement beyond chance that holds up on one-sided labels.
    pub ac1: Est,
    /// Prevalence- and bias-adjusted kappa, `2·accuracy − 1`.
    pub pabak: Est,
    /// Of the answers people call hallucinated, the share the judge calls so too.
    pub tpr: Option<f64>,
    /// Of the answers people call correct, the share the judge calls correct.
    pub tnr: Option<f64>,
    /// The judge says correct, people say hallucinated (a hallucination the judge let pass).
    pub judge_correct_people_hallucinated: usize,
    /// The judge says hallucinated, people say correct.
    pub judge_hallucinated_people_correct: usize,
    pub both_hallucinated: usize,
    pub both_correct: usize,
    /// The answers where the two disagree (run, job), for people to look at.
    #[serde(skip)]
    pub disagreements: Vec<(String, u32)>,
    /// Their items, in the same order (what the list of disagreements names).
    #[serde(skip)]
    pub disagreement_items: Vec<String>,
}

/// The judges among themselves on one group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Among {
    /// Answers at least two judges decided.
    pub n: usize,
    pub fleiss_kappa: Option<f64>,
    pub krippendorff_alpha: Option<f64>,
}

/// One judge against itself, asked again, on one group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flips {
    pub judge: String,
    /// Answers it gave at least two readable verdicts on.
    pub n: usize,
    pub flipped: usize,
    pub share: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// `all`, or the evaluator, dimension or sub-task.
    pub name: String,
    /// Answers judged in this group.
    pub judged: usize,
    /// Of them, with a verdict of people.
    pub labelled: usize,
    pub vs_people: Vec<VsPeople>,
    pub among: Among,
    pub flips: Vec<Flips>,
}

/// A model's rates under one reading: as stored, or under one judge alone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reading {
    /// `stored` (the score as it stands) or a judge's name.
    pub under: String,
    /// KE, KM, RE, IFE hallucination rates (percent), with whether each covers every task.
    pub rates: [Option<(f64, bool)>; 4],
    pub h_score: Option<f64>,
    /// Judged answers this reading leaves unscored (the judge gave no verdict on them).
    pub unscored: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelReadings {
    pub model: String,
    pub readings: Vec<Reading>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trial {
    pub judges: Vec<String>,
    pub by: By,
    pub min_labels: usize,
    /// Answers with a verdict of people / with labels people could not tell / split evenly.
    pub people: PeopleCounts,
    pub groups: Vec<Group>,
    pub models: Vec<ModelReadings>,
    /// How the equivalence judge's replies were read here.
    pub reading: judge::Reading,
    /// Per judge, its equivalence replies that say two things or none.
    pub replies: Vec<Replies>,
    /// Each two wordings of one judge model (`--judge-template`) on the same labelled answers.
    pub templates: Vec<TemplatePair>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PeopleCounts {
    pub decided: usize,
    pub cant_tell: usize,
    pub split: usize,
}

/// People's verdict per answer (hallucinated or not), from each reviewer's newest label.
pub fn people_verdicts(labels: &[AnswerLabel]) -> (HashMap<Key, bool>, PeopleCounts) {
    let mut votes: HashMap<Key, (usize, usize, usize)> = HashMap::new();
    for l in newest_labels(labels) {
        let v = votes.entry((l.run_id.clone(), l.job_idx)).or_default();
        match l.label.hallucinated() {
            Some(true) => v.0 += 1,
            Some(false) => v.1 += 1,
            None => v.2 += 1,
        }
    }
    let mut counts = PeopleCounts::default();
    let mut out = HashMap::new();
    for (k, (h, c, _)) in votes {
        match h.cmp(&c) {
            std::cmp::Ordering::Greater => {
                out.insert(k, true);
            }
            std::cmp::Ordering::Less => {
                out.insert(k, false);
            }
            std::cmp::Ordering::Equal if h == 0 => counts.cant_tell += 1,
            std::cmp::Ordering::Equal => counts.split += 1,
        }
    }
    counts.decided = out.len();
    (out, counts)
}

/// One answer as the trial sees it.
struct Answer {
    group: String,
    item: String,
    /// Per judge (in `judges` order): its askings' scores.
    askings: Vec<Vec<Option<f64>>>,
}

impl Answer {
    fn verdict(&self, j: usize) -> Option<bool> {
        panel::judge_score(&self.askings[j]).map(|s| s < 0.5)
    }
}

fn group_of(by: By, v: &JudgeVerdict) -> String {
    match by {
        By::Evaluator => v.evaluator.clone(),
        By::Task => v.task_id.clone(),
        By::Dimension => crate::eval::metrics::dimension_of(&v.task_id)
            .map_or_else(|| "?".to_string(), |d| d.code().to_string()),
    }
}

/// The trial of every judge in `verdicts`.
/// The trial of a store's judges: every run's judged answers, or one run's.
pub fn of_store(
    db: &crate::store::Db,
    run: Option<&str>,
    cat: &Catalogue,
    opts: &Options,
) -> crate::store::Result<Trial> {
    let store = db.read()?;
    let verdicts = store.judge_verdicts(run)?;
    let labels = store.answer_labels(run)?;
    let scores = store.scores(run)?;
    Ok(trial(&verdicts, &labels, &scores, cat, opts))
}

/// One judged answer as people look at it: the answer, every judge's verdicts (every asking)
/// and every person's labels, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgedAnswer {
    pub run_id: String,
    pub job_idx: u32,
    pub item_id: String,
    pub task_id: String,
    pub model: String,
    pub text: Option<String>,
    pub error: Option<String>,
    pub verdicts: Vec<JudgeVerdict>,
    pub labels: Vec<AnswerLabel>,
}

/// The answer `job` of `run` with its verdicts and labels (`None`: the store has no such answer).
pub fn judged_answer(
    db: &crate::store::Db,
    run: &str,
    job: u32,
) -> crate::store::Result<Option<JudgedAnswer>> {
    let store = db.read()?;
    let Some(r) = store.response(run, job)? else {
        return Ok(None);
    };
    let mut verdicts: Vec<JudgeVerdict> = store
        .judge_verdicts(Some(run))?
        .into_iter()
        .filter(|v| v.job_idx == job)
        .collect();
    verdicts.sort_by(|a, b| (&a.judge, a.repeat).cmp(&(&b.judge, b.repeat)));
    let mut labels: Vec<AnswerLabel> = store
        .answer_labels(Some(run))?
        .into_iter()
        .filter(|l| l.job_idx == job)
        .collect();
    labels.sort_by_key(|l| l.created_at);
    Ok(Some(JudgedAnswer {
        run_id: r.run_id,
        job_idx: r.job_idx,
        item_id: r.item_id,
        task_id: r.task_id,
        model: r.model,
        text: r.text,
        error: r.error,
        verdicts,
        labels,
    }))
}

pub fn trial(
    verdicts: &[JudgeVerdict],
    labels: &[AnswerLabel],
    scores: &[ScoreRecord],
    cat: &Catalogue,
    opts: &Options,
) -> Trial {
    let judges = judge_order(verdicts, scores);
    let mut answers: BTreeMap<Key, Answer> = BTreeMap::new();
    for v in verdicts {
        let j = judges.iter().position(|n| *n == v.judge).unwrap_or(0);
        let a = answers
            .entry((v.run_id.clone(), v.job_idx))
            .or_insert_with(|| Answer {
                group: group_of(opts.by, v),
                item: v.item_id.clone(),
                askings: vec![Vec::new(); judges.len()],
            });
        a.askings[j].push(score_as(v, opts.reading));
    }
    let (people, people_counts) = people_verdicts(labels);
    let mut names: Vec<String> = answers.values().map(|a| a.group.clone()).collect();
    names.sort();
    names.dedup();
    let mut groups = vec![group(
        "all",
        &judges,
        answers.iter().collect(),
        &people,
        opts,
    )];
    for name in names {
        let these = answers.iter().filter(|(_, a)| a.group == name).collect();
        groups.push(group(&name, &judges, these, &people, opts));
    }
    Trial {
        templates: template_pairs(&judges, &answers, &people, opts),
        models: readings(&judges, &answers, scores, cat),
        reading: opts.reading,
        replies: replies(&judges, verdicts),
        judges,
        by: opts.by,
        min_labels: opts.min_labels,
        people: people_counts,
        groups,
    }
}

/// Each two wordings of one model compared on the answers both judged and people labelled.
fn template_pairs(
    judges: &[String],
    answers: &BTreeMap<Key, Answer>,
    people: &HashMap<Key, bool>,
    opts: &Options,
) -> Vec<TemplatePair> {
    let mut out = Vec::new();
    for (i, a) in judges.iter().enumerate() {
        for (j, b) in judges.iter().enumerate().skip(i + 1) {
            if !template_trial::same_model(a, b) {
                continue;
            }
            // The judge asked with the dataset's wording first: the one tried against.
            let (i, j) = if super::judge_templates::label_in(b).is_some() {
                (i, j)
            } else {
                (j, i)
            };
            let on_same: Vec<(bool, bool, bool)> = answers
                .iter()
                .filter_map(|(k, x)| Some((x.verdict(i)?, x.verdict(j)?, *people.get(k)?)))
                .collect();
            out.push(template_trial::compare(
                &judges[i],
                &judges[j],
                &on_same,
                opts.resamples,
                opts.seed,
            ));
        }
    }
    out
}

/// The judges a score's judge label names: `a+b+c (majority) x3` → a, b, c; `a` → a.
pub fn panel_names(label: &str) -> impl Iterator<Item = &str> {
    let names = label.split(" (").next().unwrap_or(label);
    let names = names.rsplit_once(" x").map_or(names, |(n, _)| n);
    names.split('+').filter(|n| !n.is_empty())
}

/// The judges of `verdicts`, in the order a panel named them (its scores' judge, `a+b+c
/// (majority) x3`, says it), the others after them by name.
fn judge_order(verdicts: &[JudgeVerdict], scores: &[ScoreRecord]) -> Vec<String> {
    let mut all: Vec<&str> = verdicts.iter().map(|v| v.judge.as_str()).collect();
    all.sort_unstable();
    all.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut panels: Vec<&str> = scores.iter().filter_map(|s| s.judge.as_deref()).collect();
    panels.sort_unstable();
    panels.dedup();
    for p in panels {
        for n in panel_names(p) {
            if all.contains(&n) && !out.iter().any(|o| o == n) {
                out.push(n.to_string());
            }
        }
    }
    for n in all {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    }
    out
}

fn group(
    name: &str,
    judges: &[String],
    answers: Vec<(&Key, &Answer)>,
    people: &HashMap<Key, bool>,
    opts: &Options,
) -> Group {
    let labelled = answers
        .iter()
        .filter(|(k, _)| people.contains_key(*k))
        .count();
    let vs_people = (0..judges.len())
        .map(|j| {
            let pairs: Vec<Pair> = answers
                .iter()
                .filter_map(|(k, a)| Some((a.verdict(j)?, *people.get(*k)?, *k, a.item.as_str())))
                .collect();
            vs_people(&judges[j], &pairs, opts)
        })
        .collect();
    let units: Vec<Vec<bool>> = answers
        .iter()
        .map(|(_, a)| (0..judges.len()).filter_map(|j| a.verdict(j)).collect())
        .filter(|u: &Vec<bool>| u.len() >= 2)
        .collect();
    let among = Among {
        n: units.len(),
        fleiss_kappa: agreement::fleiss_kappa(
            &units
                .iter()
                .map(|u| {
                    let h = u.iter().filter(|x| **x).count() as u32;
                    vec![h, u.len() as u32 - h]
                })
                .collect::<Vec<_>>(),
        ),
        krippendorff_alpha: agreement::krippendorff_alpha(
            &units
                .iter()
                .map(|u| u.iter().map(|&x| f64::from(u8::from(x))).collect())
                .collect::<Vec<_>>(),
            Metric::Nominal,
        ),
    };
    let flips = (0..judges.len())
        .map(|j| {
            let (mut n, mut flipped) = (0, 0);
            for (_, a) in &answers {
                let seen: Vec<bool> = a.askings[j].iter().flatten().map(|s| *s < 0.5).collect();
                if seen.len() >= 2 {
                    n += 1;
                    flipped += usize::from(seen.iter().any(|x| *x != seen[0]));
                }
            }
            Flips {
                judge: judges[j].clone(),
                n,
                flipped,
                share: (n > 0).then(|| flipped as f64 / n as f64),
            }
        })
        .collect();
    Group {
        name: name.to_string(),
        judged: answers.len(),
        labelled,
        vs_people,
        among,
        flips,
    }
}

/// A judge against people over `pairs` (judge says hallucinated, people say hallucinated).
/// An answer both decided: the judge says hallucinated, people say hallucinated, its key and item.
type Pair<'a> = (bool, bool, &'a Key, &'a str);

fn vs_people(judge: &str, pairs: &[Pair], opts: &Options) -> VsPeople {
    let flags: Vec<(bool, bool)> = pairs.iter().map(|(j, p, _, _)| (*j, *p)).collect();
    let count = |j: bool, p: bool| flags.iter().filter(|x| **x == (j, p)).count();
    let (acc, kap, ac1) = boot(&flags, opts.resamples, opts.seed);
    let n = flags.len();
    let base_rate = (n > 0).then(|| flags.iter().filter(|(_, p)| *p).count() as f64 / n as f64);
    let share = |num: usize, den: usize| (den > 0).then(|| num as f64 / den as f64);
    let to_pabak = |a: Option<f64>| a.map(|a| 2.0 * a - 1.0);
    VsPeople {
        judge: judge.to_string(),
        n,
        too_few: n < opts.min_labels,
        accuracy: Est {
            value: accuracy(&flags),
            low: acc.0,
            high: acc.1,
        },
        base_rate,
        constant_accuracy: base_rate.map(|b| b.max(1.0 - b)),
        kappa: Est {
            value: kappa(&flags),
            low: kap.0,
            high: kap.1,
        },
        ac1: Est {
            value: ac1_of(&flags),
            low: ac1.0,
            high: ac1.1,
        },
        pabak: Est {
            value: {
                let (a, b): (Vec<bool>, Vec<bool>) = flags.iter().copied().unzip();
                agreement::pabak(&a, &b)
            },
            low: to_pabak(acc.0),
            high: to_pabak(acc.1),
        },
        tpr: share(count(true, true), count(true, true) + count(false, true)),
        tnr: share(
            count(false, false),
            count(false, false) + count(true, false),
        ),
        judge_correct_people_hallucinated: count(false, true),
        judge_hallucinated_people_correct: count(true, false),
        both_hallucinated: count(true, true),
        both_correct: count(false, false),
        disagreements: pairs
            .iter()
            .filter(|(j, p, _, _)| j != p)
            .map(|(_, _, k, _)| (*k).clone())
            .collect(),
        disagreement_items: pairs
            .iter()
            .filter(|(j, p, _, _)| j != p)
            .map(|(_, _, _, i)| i.to_string())
            .collect(),
    }
}

/// Each model's rates as stored and under each judge alone.
fn readings(
    judges: &[String],
    answers: &BTreeMap<Key, Answer>,
    scores: &[ScoreRecord],
    cat: &Catalogue,
) -> Vec<ModelReadings> {
    let reading = |under: &str, j: Option<usize>| -> Vec<(String, Reading)> {
        let mut agg = Aggregator::default();
        let mut unscored: HashMap<&str, usize> = HashMap::new();
        for s in scores {
            let score = match (j, answers.get(&(s.run_id.clone(), s.job_idx))) {
                (Some(j), Some(a)) if s.judge.is_some() => {
                    let v = panel::judge_score(&a.askings[j]);
                    if v.is_none() {
                        *unscored.entry(&s.model).or_default() += 1;
                    }
                    v
                }
                _ => s.score,
            };
            agg.add(Point {
                model: &s.model,
                task: &s.task_id,
                item: &s.item_id,
                score,
            });
        }
        agg.finish(cat)
            .into_iter()
            .map(|m: ModelSummary| {
                let r = Reading {
                    under: under.to_string(),
                    rates: Dimension::ALL.map(|d| m.rates.get(d).map(|r| (r.rate, r.complete()))),
                    h_score: m.h_score(),
                    unscored: unscored.get(m.model.as_str()).copied().unwrap_or(0),
                };
                (m.model, r)
            })
            .collect()
    };
    let mut out: Vec<ModelReadings> = reading("stored", None)
        .into_iter()
        .map(|(model, r)| ModelReadings {
            model,
            readings: vec![r],
        })
        .collect();
    for (j, name) in judges.iter().enumerate() {
        for (model, r) in reading(name, Some(j)) {
            if let Some(m) = out.iter_mut().find(|m| m.model == model) {
                m.readings.push(r);
            }
        }
    }
    out
}

impl ModelReadings {
    /// The spread of the H-Score (or, without one, of the first dimension every reading has)
    /// over the judges alone: how many points the choice of judge moves this model.
    pub fn spread(&self) -> Option<(String, f64)> {
        let alone: Vec<&Reading> = self.readings.iter().skip(1).collect();
        if alone.len() < 2 {
            return None;
        }
        if alone.iter().all(|r| r.h_score.is_some()) {
            let v: Vec<f64> = alone.iter().filter_map(|r| r.h_score).collect();
            return Some(("H-Score".into(), spread(&v)));
        }
        for d in Dimension::ALL {
            let v: Vec<f64> = alone
                .iter()
                .filter_map(|r| r.rates[d.index()].map(|x| x.0))
                .collect();
            if v.len() == alone.len() {
                return Some((d.code().to_string(), spread(&v)));
            }
        }
        None
    }
}

fn spread(v: &[f64]) -> f64 {
    let max = v.iter().copied().fold(f64::MIN, f64::max);
    let min = v.iter().copied().fold(f64::MAX, f64::min);
    max - min
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Label;

    fn verdict(job: u32, judge: &str, repeat: u32, score: Option<f64>) -> JudgeVerdict {
        JudgeVerdict {
            run_id: "r".into(),
            job_idx: job,
            judge: judge.into(),
            repeat,
            item_id: format!("KE-{job}"),
            task_id: "KE-FD-Myths".into(),
            model: "m".into(),
            evaluator: "fact_judge".into(),
            score,
            detail: String::new(),
            reply: None,
            attempts: 1,
            fallback: false,
            created_at: 0,
        }
    }

    fn label(job: u32, reviewer: &str, l: Label, at: i64) -> AnswerLabel {
        AnswerLabel {
            uid: format!("{reviewer}-{job}-{at}"),
            run_id: "r".into(),
            job_idx: job,
            item_id: format!("KE-{job}"),
            model: "m".into(),
            reviewer: reviewer.into(),
            label: l,
            note: String::new(),
            created_at: at,
        }
    }

    #[test]
    fn a_judge_is_counted_against_people_by_hand() {
        // Judge a: H on jobs 0..4, C on 4..10. People: H on 0..2 and 4..5, C elsewhere.
        let mut vs = Vec::new();
        let mut ls = Vec::new();
        for job in 0..10 {
            vs.push(verdict(job, "a", 0, Some(if job < 4 { 0.0 } else { 1.0 })));
            let h = job < 2 || job == 4;
            let l = if h {
                Label::Hallucinated
            } else {
                Label::Correct
            };
            // An older label of the same reviewer saying the opposite does not count.
            ls.push(label(job, "ann", Label::CantTell, 1));
            ls.push(label(job, "ann", l, 2));
        }
        let opts = Options {
            min_labels: 5,
            ..Options::default()
        };
        let t = trial(&vs, &ls, &[], &Catalogue::default(), &opts);
        let all = &t.groups[0];
        assert_eq!(
            (all.name.as_str(), all.judged, all.labelled),
            ("all", 10, 10)
        );
        let a = &all.vs_people[0];
        assert_eq!(a.n, 10);
        assert!(!a.too_few);
        assert_eq!(a.both_hallucinated, 2);
        assert_eq!(a.judge_hallucinated_people_correct, 2);
        assert_eq!(a.judge_correct_people_hallucinated, 1);
        assert_eq!(a.both_correct, 5);
        assert_eq!(a.accuracy.value, Some(0.7));
        // po 0.7; pe = 0.4*0.3 + 0.6*0.7 = 0.54; kappa = 0.16/0.46.
        assert!((a.kappa.value.unwrap() - 0.16 / 0.46).abs() < 1e-12);
        let (lo, hi) = (a.accuracy.low.unwrap(), a.accuracy.high.unwrap());
        assert!(lo < 0.7 && 0.7 < hi && lo >= 0.0 && hi <= 1.0, "{lo} {hi}");
        assert_eq!(a.disagreements.len(), 3);
        assert_eq!(t.groups[1].name, "fact_judge");
    }

    #[test]
    fn flips_among_judges_and_people_splits() {
        let mut vs = Vec::new();
        for job in 0..8 {
            // Judge a asked three times flips on jobs 0 and 1; judge b always agrees with a's
            // first verdict except on job 7.
            let first = if job % 2 == 0 { 0.0 } else { 1.0 };
            vs.push(verdict(job, "a", 0, Some(first)));
            let again = if job < 2 { 1.0 - first } else { first };
            vs.push(verdict(job, "a", 1, Some(again)));
            vs.push(verdict(job, "a", 2, Some(first)));
            let b = if job == 7 { 1.0 - first } else { first };
            vs.push(verdict(job, "b", 0, Some(b)));
        }
        // An unreachable asking is no verdict and no flip.
        vs.push(verdict(8, "a", 0, Some(1.0)));
        vs.push(verdict(8, "a", 1, None));
        let ls = vec![
            label(0, "ann", Label::Hallucinated, 1),
            label(0, "bob", Label::Correct, 1),
            label(1, "ann", Label::CantTell, 1),
        ];
        let t = trial(&vs, &ls, &[], &Catalogue::default(), &Options::default());
        assert_eq!(
            t.people,
            PeopleCounts {
                decided: 0,
                cant_tell: 1,
                split: 1
            }
        );
        let all = &t.groups[0];
        assert_eq!((all.flips[0].n, all.flips[0].flipped), (8, 2));
        assert_eq!(all.flips[0].share, Some(0.25));
        assert_eq!((all.flips[1].n, all.flips[1].share), (0, None));
        assert_eq!(all.among.n, 8);
        assert!(all.vs_people[0].too_few);
        assert_eq!(all.vs_people[0].accuracy.value, None);
        // 7 of 8 agree. By hand: a says 4 H 4 C, b 5 H 3 C: 16 values, 9 H and 7 C; the one
        // split unit gives D_o = 2/16, D_e = 2*9*7/(16*15); alpha = 1 - D_o/D_e.
        let alpha = all.among.krippendorff_alpha.unwrap();
        assert!(
            (alpha - (1.0 - 0.125 / (126.0 / 240.0))).abs() < 1e-12,
            "{alpha}"
        );
    }
}
