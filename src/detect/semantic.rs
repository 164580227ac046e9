//! Semantic entropy over the answers an item already has (METHODS.md's sampled answers, and
//! Farquhar et al. 2024): the N answers of a run made with `--samples N`, or a detection's
//! answer under test with its K samples. Answers are clustered by two-way entailment as a judge
//! says (`eval::semantic` replays the greedy clustering; answers equal once normalised cost no
//! call), every verdict is stored (`entailments`) as it arrives and reused by any later
//! clustering, and the entropy is recomputed from the stored verdicts whenever it is shown.
//! The lane runs inside the run harness like every lane (a lock per judge and run, call slots,
//! verdicts held while the store cannot save them, cancel).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::stored::Stored;
use crate::engine::records::{Cx, RecordEvent, Unit};
use crate::engine::{Caller, judge};
use crate::eval::semantic::{Clustering, Entropy, cluster, entropy};
use crate::provider::{ChatRequest, Message, Params, TokenLogprob};
use crate::store::{EntailRecord, Relation, ResponseRecord, SampleRecord, Target, now_secs};

/// Where a group's answers come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "lowercase")]
pub enum Via {
    /// The samples of one item and model in a run made with `--samples`.
    Samples,
    /// A detection's answer under test and the samples of one round.
    Detection {
        run: String,
        target: u32,
        round: u32,
    },
}

/// The answers to one question whose meanings are counted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub via: Via,
    /// The answer whose hallucination the entropy predicts: its run and job (PRISM answers).
    pub source_run: Option<String>,
    pub source_job: Option<u32>,
    pub item_id: String,
    pub task_id: String,
    pub model: String,
    pub question: String,
    pub answers: Vec<String>,
    /// Each answer's length-normalised log-likelihood (its mean token log-probability), when
    /// its tokens were stored.
    #[serde(skip)]
    pub loglik: Vec<Option<f64>>,
}

/// The groups of a run's samples: per item and model, its answers in sample order when at
/// least two arrived. `question_of` gives an item's question (`None`: the item is not in the
/// dataset at hand, the group is left out).
pub fn sample_groups(
    responses: &[ResponseRecord],
    tokens: &HashMap<u32, Vec<TokenLogprob>>,
    question_of: impl Fn(&str) -> Option<String>,
) -> Vec<Group> {
    let mut by: BTreeMap<(&str, &str), Vec<&ResponseRecord>> = BTreeMap::new();
    for r in responses.iter().filter(|r| r.text.is_some()) {
        by.entry((&r.model, &r.item_id)).or_default().push(r);
    }
    let mut out = Vec::new();
    for ((model, item), mut rs) in by {
        if rs.len() < 2 {
            continue;
        }
        let Some(question) = question_of(item) else {
            continue;
        };
        rs.sort_by_key(|r| r.sample);
        out.push(Group {
            via: Via::Samples,
            source_run: Some(rs[0].run_id.clone()),
            source_job: Some(rs[0].job_idx),
            item_id: item.to_string(),
            task_id: rs[0].task_id.clone(),
            model: model.to_string(),
            question,
            answers: rs.iter().filter_map(|r| r.text.clone()).collect(),
            loglik: rs
                .iter()
                .map(|r| {
                    tokens
                        .get(&r.job_idx)
                        .and_then(|t| crate::eval::whitebox::scores(t))
                        .map(|w| w.mean_logprob)
                })
                .collect(),
        });
    }
    out
}

/// The sample groups of a stored run, the questions from its dataset `ds`.
pub fn run_groups(
    db: &crate::store::Db,
    run_id: &str,
    ds: &crate::dataset::Dataset,
) -> crate::store::Result<Vec<Group>> {
    let store = db.read()?;
    let tokens: HashMap<u32, _> = store.logprobs(run_id)?.into_iter().collect();
    Ok(sample_groups(&store.responses(run_id)?, &tokens, |item| {
        ds.item_by_id(item).map(crate::prompt::format_question)
    }))
}

/// The groups of a detection run: per target, its answer under test and the samples of the
/// newest round whose K samples all arrived.
pub fn detection_groups(run_id: &str, k: u32, stored: &Stored) -> Vec<Group> {
    stored
        .targets
        .iter()
        .filter_map(|t| {
            let mut rounds: Vec<u32> = stored
                .samples
                .iter()
                .filter(|s| s.target == t.idx)
                .map(|s| s.round)
                .collect();
            rounds.sort_unstable();
            rounds.dedup();
            rounds
                .into_iter()
                .rev()
                .find_map(|round| group_at(run_id, t, round, k, &stored.samples))
        })
        .collect()
}

/// A target's answer under test and its K samples of `round`, when all arrived.
pub fn group_at(
    run_id: &str,
    t: &Target,
    round: u32,
    k: u32,
    samples: &[SampleRecord],
) -> Option<Group> {
    let answer = t.answer.as_ref()?;
    let mut got: Vec<(u32, &str)> = samples
        .iter()
        .filter(|s| s.target == t.idx && s.round == round)
        .filter_map(|s| Some((s.k, s.text.as_deref()?)))
        .collect();
    if got.len() < k as usize {
        return None;
    }
    got.sort();
    let mut answers = vec![answer.clone()];
    answers.extend(got.iter().map(|(_, s)| s.to_string()));
    Some(Group {
        via: Via::Detection {
            run: run_id.to_string(),
            target: t.idx,
            round,
        },
        source_run: t.source_run.clone(),
        source_job: t.source_job,
        item_id: t.item_id.clone(),
        task_id: t.task_id.clone(),
        model: t.model.clone(),
        question: t.question.clone(),
        loglik: vec![None; answers.len()],
        answers,
    })
}

/// The verdicts per judge, the judge with most verdicts first.
pub fn by_judge(records: &[EntailRecord]) -> Vec<(String, Known)> {
    let mut by: BTreeMap<&str, Vec<EntailRecord>> = BTreeMap::new();
    for r in records {
        by.entry(&r.judge).or_default().push(r.clone());
    }
    let mut out: Vec<(usize, String, Known)> = by
        .into_iter()
        .map(|(j, rs)| (rs.len(), j.to_string(), Known::of(&rs)))
        .collect();
    out.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    out.into_iter().map(|(_, j, k)| (j, k)).collect()
}

/// The entailment question (the paper's wording), at temperature 0.
pub fn request(question: &str, premise: &str, hypothesis: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user(format!(
            "We are evaluating answers to the question \"{question}\"\nHere are two possible answers:\nPossible Answer 1: {premise}\nPossible Answer 2: {hypothesis}\nDoes Possible Answer 1 semantically entail Possible Answer 2? Respond with entailment, contradiction, or neutral."
        ))],
        params: Params {
            temperature: Some(0.0),
            ..Params::default()
        },
    }
}

/// The relation a reply names: of what it does not copy from the prompt, the first of
/// entailment, contradiction and neutral it names (whole words, not denied); "does not
/// entail" alone is neutral. Nothing named: unread.
pub fn read(reply: &str, prompt: &str) -> Option<Relation> {
    use super::topics::first_word_at;
    let own = crate::eval::echo::without_echo(reply, prompt).to_lowercase();
    let families: [(&[&str], Relation); 3] = [
        (
            &["entailment", "entails", "entail", "entailed"],
            Relation::Entailment,
        ),
        (
            &[
                "contradiction",
                "contradicts",
                "contradict",
                "contradictory",
            ],
            Relation::Contradiction,
        ),
        (&["neutral"], Relation::Neutral),
    ];
    let first = families
        .iter()
        .filter_map(|(words, rel)| {
            words
                .iter()
                .filter_map(|w| first_word_at(&own, w))
                .min()
                .map(|i| (i, *rel))
        })
        .min_by_key(|(i, _)| *i);
    match first {
        Some((_, rel)) => Some(rel),
        None => own.contains("entail").then_some(Relation::Neutral),
    }
}

/// What is known of one judge's verdicts: question → premise → hypothesis → entails (nested,
/// so a replay looks verdicts up by the texts it holds without copying them). A reply that
/// could not be read counts as "does not entail" (the answers stay apart, which can only raise
/// the entropy); a failed call is not known (asked again).
#[derive(Debug, Clone, Default)]
pub struct Known(HashMap<String, HashMap<String, HashMap<String, bool>>>);

impl Known {
    pub fn of(records: &[EntailRecord]) -> Known {
        let mut k = Known::default();
        for r in records {
            k.add(r);
        }
        k
    }

    fn add(&mut self, r: &EntailRecord) {
        if r.error.is_none() {
            self.0
                .entry(r.question.clone())
                .or_default()
                .entry(r.premise.clone())
                .or_default()
                .insert(
                    r.hypothesis.clone(),
                    r.relation == Some(Relation::Entailment),
                );
        }
    }

    /// Where the clustering of `g` stands with what is known.
    pub fn clustering(&self, g: &Group) -> Clustering {
        let texts: Vec<&str> = g.answers.iter().map(String::as_str).collect();
        let on = self.0.get(g.question.as_str());
        cluster(&texts, |p, h| on?.get(texts[p])?.get(texts[h]).copied())
    }

    /// The group's clusters and entropy, when every verdict it needs is known.
    pub fn entropy(&self, g: &Group) -> Option<(Vec<usize>, Entropy)> {
        match self.clustering(g) {
            Clustering::Done(ids) => {
                let e = entropy(&ids, &g.loglik)?;
                Some((ids, e))
            }
            Clustering::Need { .. } => None,
        }
    }
}

/// The clusters of a group as lists of answer positions, in order of their first member.
pub fn members(ids: &[usize]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, &c) in ids.iter().enumerate() {
        if out.len() <= c {
            out.resize(c + 1, Vec::new());
        }
        out[c].push(i);
    }
    out
}

/// What a group's clustering came to: its index among the groups given, and its clusters and
/// entropy, or the failed call that stopped it.
pub type Clustered = (usize, Result<(Vec<usize>, Entropy), String>);

/// What the front-end hears: each verdict as it is saved, and each group as it is clustered.
pub type EntropyEvent = RecordEvent<EntailRecord, Clustered>;

/// The lane's unit: one group of answers clustered with the judge behind `caller`, asking only
/// what `known` lacks. `known` is shared by every group: answers repeat across groups (a run's
/// samples are often the same text), so a verdict one group got is not asked by another.
pub struct GroupClustering {
    pub groups: Arc<Vec<Group>>,
    pub known: Mutex<Known>,
    pub caller: Arc<Caller>,
}

impl GroupClustering {
    /// The lock: one clustering of a run by a judge at a time.
    pub fn lock(&self, run_id: &str) -> String {
        format!("entropy:{}:{run_id}", self.caller.cfg.name)
    }
}

impl Unit for GroupClustering {
    type Todo = usize;
    type Record = EntailRecord;
    type Outcome = Clustered;
    const WHAT: &'static str = "semantic-entropy clustering";

    async fn work(self: Arc<Self>, gi: usize, cx: Cx<Self>) -> Option<Clustered> {
        let g = &self.groups[gi];
        let mut all_cached = true;
        let outcome = loop {
            let state = self
                .known
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clustering(g);
            let (p, h) = match state {
                Clustering::Need {
                    premise,
                    hypothesis,
                } => (premise, hypothesis),
                Clustering::Done(ids) => {
                    break entropy(&ids, &g.loglik)
                        .map(|e| (ids, e))
                        .ok_or_else(|| "no answers".to_string());
                }
            };
            let slot = cx.slot().await?;
            let req = request(&g.question, &g.answers[p], &g.answers[h]);
            let prompt = crate::detect::prompts::text_of(&req).to_string();
            let asked = tokio::select! {
                a = judge::ask(&self.caller, &req, 2, |r| read(r, &prompt)) => a,
                _ = cx.cancel().cancelled() => return None,
            };
            drop(slot);
            all_cached &= asked.cached;
            let (relation, error) = match asked.outcome {
                Ok(r) => (r, None),
                Err(e) => (None, Some(e)),
            };
            if cx.is_cancelled() && error.as_deref() == Some("cancelled") {
                return None;
            }
            let rec = cx
                .save(EntailRecord {
                    judge: self.caller.cfg.name.clone(),
                    question: g.question.clone(),
                    premise: g.answers[p].clone(),
                    hypothesis: g.answers[h].clone(),
                    relation,
                    reply: asked.reply,
                    error,
                    attempts: asked.attempts,
                    created_at: now_secs(),
                })
                .await?;
            if let Some(e) = &rec.error {
                break Err(e.clone());
            }
            self.known
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .add(&rec);
        };
        cx.count(outcome.is_ok(), all_cached);
        Some((gi, outcome))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_names_a_relation() {
        let req = request("Capital of France?", "Paris", "It is Paris");
        let prompt = crate::detect::prompts::text_of(&req);
        let r = |reply: &str| read(reply, prompt);
        assert_eq!(r("entailment"), Some(Relation::Entailment));
        assert_eq!(r("Entailment."), Some(Relation::Entailment));
        assert_eq!(r("Answer 1 entails answer 2"), Some(Relation::Entailment));
        assert_eq!(r("Contradiction"), Some(Relation::Contradiction));
        assert_eq!(r("neutral"), Some(Relation::Neutral));
        assert_eq!(r("It does not entail it."), Some(Relation::Neutral));
        assert_eq!(
            r("Not entailment: contradiction"),
            Some(Relation::Contradiction)
        );
        assert_eq!(r("Yes"), None);
        // The prompt copied back names all three: unread, unless something follows.
        assert_eq!(r(prompt), None);
        assert_eq!(r(&format!("{prompt}\nneutral")), Some(Relation::Neutral));
    }

    fn rec(q: &str, p: &str, h: &str, rel: Option<Relation>, err: Option<&str>) -> EntailRecord {
        EntailRecord {
            judge: "j".into(),
            question: q.into(),
            premise: p.into(),
            hypothesis: h.into(),
            relation: rel,
            reply: None,
            error: err.map(str::to_string),
            attempts: 1,
            created_at: 0,
        }
    }

    #[test]
    fn stored_verdicts_decide_the_clusters() {
        let g = Group {
            via: Via::Samples,
            source_run: None,
            source_job: None,
            item_id: "i".into(),
            task_id: "KE-FD-X".into(),
            model: "m".into(),
            question: "q".into(),
            answers: vec![
                "Paris".into(),
                "paris.".into(),
                "It is Paris".into(),
                "Lyon".into(),
            ],
            loglik: vec![None; 4],
        };
        use Relation::*;
        let mut records = vec![
            rec("q", "It is Paris", "Paris", Some(Entailment), None),
            rec("q", "Paris", "It is Paris", None, Some("HTTP 500")),
        ];
        // A failed call is not known: the clustering needs it.
        assert_eq!(
            Known::of(&records).clustering(&g),
            Clustering::Need {
                premise: 0,
                hypothesis: 2
            }
        );
        records[1] = rec("q", "Paris", "It is Paris", Some(Entailment), None);
        // An unread reply keeps Lyon apart; so would "neutral".
        records.push(rec("q", "Lyon", "Paris", None, None));
        // Another question's verdicts do not count.
        records.push(rec("other", "Lyon", "Paris", Some(Entailment), None));
        let (ids, e) = Known::of(&records).entropy(&g).unwrap();
        assert_eq!(ids, vec![0, 0, 0, 1]);
        assert_eq!(members(&ids), vec![vec![0, 1, 2], vec![3]]);
        let want = -(0.75f64 * 0.75f64.ln() + 0.25 * 0.25f64.ln());
        assert!((e.discrete - want).abs() < 1e-12);
    }
}
