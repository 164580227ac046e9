//! The stored runs: the runs screen's list, a run's items and answers, naming a run, the
//! search over answers, comparing two runs, the heatmap's rows of chosen runs and a pair of
//! answers side by side. All reads (and the one small write) run on the store worker.

use super::{Job, JobCx, Msg, Outcome};
use crate::store::{ResponseRecord, ScoreRecord};
use crate::tui::jobs::read_or_fail;

const RUNS_NEED: Option<&str> = Some("runs need a store");

/// Every stored run, newest first.
pub struct LoadRuns;

#[derive(Debug)]
pub struct Runs(pub Vec<crate::runs::Listed>);

impl Outcome for Runs {}

fn list(db: &crate::store::Db) -> Msg {
    crate::runs::list(db, &crate::store::RunFilter::default())
        .map(|l| Msg::new(Runs(l)))
        .unwrap_or_else(|e| Msg::failed(format!("reading runs: {e:#}")))
}

impl Job for LoadRuns {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        cx.on_reader(RUNS_NEED, list);
    }
}

/// The items a run asked (those of the dataset shown; `missing` are not in it).
pub struct LoadRunItems {
    pub run: String,
}

#[derive(Debug)]
pub struct RunItems {
    pub run: String,
    pub items: Vec<usize>,
    pub missing: usize,
}

impl Outcome for RunItems {}

impl Job for LoadRunItems {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let (ds, run) = (cx.ds.clone(), self.run);
        cx.on_reader(RUNS_NEED, move |db| {
            match db.read().and_then(|r| r.run_item_ids(&run)) {
                Ok(ids) => {
                    let items: Vec<usize> = ids.iter().filter_map(|i| ds.index_of(i)).collect();
                    Msg::new(RunItems {
                        missing: ids.len() - items.len(),
                        run,
                        items,
                    })
                }
                Err(e) => Msg::failed(format!("reading the run: {e}")),
            }
        });
    }
}

/// One run's answers to one item, with their scores.
pub struct LoadRunAnswers {
    pub run: String,
    pub item: usize,
}

#[derive(Debug)]
pub struct RunAnswers {
    pub run: String,
    pub item: usize,
    pub records: Vec<ResponseRecord>,
    pub scores: Vec<ScoreRecord>,
    /// For a run imported from another tool: that tool's own verdict on each answer, by job.
    pub sources: Vec<crate::foreign::record::SourceRecord>,
}

impl Outcome for RunAnswers {}

impl Job for LoadRunAnswers {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let Some(it) = cx.ds.items.get(self.item) else {
            return;
        };
        let (id, run, item) = (it.id.to_string(), self.run, self.item);
        cx.on_reader(RUNS_NEED, move |db| {
            let r = read_or_fail!(db);
            match (r.run_item_answers(&run, &id), r.scores_for_item(&id)) {
                (Ok(records), Ok(mut scores)) => {
                    scores.retain(|s| s.run_id == run);
                    // A run prism made has none: an empty read of a small table.
                    let mut sources = r
                        .records_where::<crate::foreign::record::SourceRecord>(Some((
                            "run_id", &run,
                        )))
                        .unwrap_or_default();
                    sources.retain(|s| records.iter().any(|a| a.job_idx == s.job_idx));
                    Msg::new(RunAnswers {
                        run,
                        item,
                        records,
                        scores,
                        sources,
                    })
                }
                (Err(e), _) | (_, Err(e)) => Msg::failed(format!("reading the run's answers: {e}")),
            }
        });
    }
}

/// Names a run (an empty name takes it away); on a shared store, the team's name first. The
/// list comes back read again.
pub struct NameRun {
    pub run: String,
    pub name: String,
}

impl Job for NameRun {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let (run, name) = (self.run, self.name);
        cx.on_store(move |sx| {
            let Some(db) = &sx.db else {
                return vec![Msg::failed("runs need a store")];
            };
            let name = crate::text::one_line(&name)
                .trim()
                .chars()
                .take(200)
                .collect::<String>();
            let n = (!name.is_empty()).then_some(name.as_str());
            // On a shared store, the team's name first: the local copy follows it.
            let named = db.name_run(&run, n);
            let said = match named {
                Ok(true) => match n {
                    Some(n) => format!("{run} is named \"{n}\""),
                    None => format!("{run} has no name now"),
                },
                Ok(false) => format!("no run {run} in the store"),
                Err(e) => format!("naming {run}: {e:#}"),
            };
            vec![list(db), Msg::notice(said)]
        });
    }
}

/// The items with an answer containing `query` (the browse screen's search).
pub struct SearchAnswers {
    pub query: String,
}

#[derive(Debug)]
pub struct AnswerMatches {
    pub query: String,
    pub items: Vec<String>,
}

impl Outcome for AnswerMatches {}

impl Job for SearchAnswers {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let query = self.query;
        cx.on_reader(None, move |db| {
            match db.read().and_then(|r| r.items_answered_with(&query)) {
                Ok(items) => Msg::new(AnswerMatches { query, items }),
                Err(e) => Msg::failed(format!("searching the answers: {e}")),
            }
        });
    }
}

/// Two runs compared item by item (optionally one model's answers).
pub struct CompareRuns {
    pub a: String,
    pub b: String,
    pub model: Option<String>,
}

/// The comparison and the models both runs have.
#[derive(Debug)]
pub struct Comparison(pub Box<crate::eval::compare::Comparison>, pub Vec<String>);

impl Outcome for Comparison {}

impl Job for CompareRuns {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let (a, b, model) = (self.a, self.b, self.model);
        cx.on_reader(RUNS_NEED, move |db| {
            crate::runs::compare_runs(db, (&a, &b), model.as_deref())
                .map(|(c, common)| Msg::new(Comparison(Box::new(c), common)))
                .unwrap_or_else(|e| Msg::failed(format!("comparing: {e:#}")))
        });
    }
}

/// The heatmap's rows for chosen runs.
pub struct LoadRunRows {
    pub runs: Vec<String>,
}

#[derive(Debug)]
pub struct RunRows {
    pub rows: Vec<crate::report::Row>,
    pub unscored: Vec<String>,
}

impl Outcome for RunRows {}

impl Job for LoadRunRows {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let (ds, runs) = (cx.ds.clone(), self.runs);
        cx.on_reader(RUNS_NEED, move |db| {
            crate::runs::heatmap_rows(db, &runs, &ds)
                .map(|(rows, unscored)| Msg::new(RunRows { rows, unscored }))
                .unwrap_or_else(|e| Msg::failed(format!("reading runs: {e:#}")))
        });
    }
}

/// One item's answers from two sides (run and model each), for the flip view.
pub struct LoadPairAnswers {
    pub item_id: String,
    pub sides: Box<[crate::eval::compare::Side; 2]>,
}

#[derive(Debug)]
pub struct PairAnswers(pub Box<crate::eval::compare::PairAnswers>);

impl Outcome for PairAnswers {}

impl Job for LoadPairAnswers {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let (item_id, sides) = (self.item_id, self.sides);
        cx.on_reader(RUNS_NEED, move |db| {
            crate::runs::pair_answers(db, &item_id, &sides)
                .map(|p| Msg::new(PairAnswers(Box::new(p))))
                .unwrap_or_else(|e| Msg::failed(format!("reading answers: {e:#}")))
        });
    }
}

/// A run imported from another tool, in that tool's own terms: every sample with its task and
/// category, each model's answer and the tool's score (what the source screen shows).
pub struct LoadSource {
    pub run: String,
}

/// One imported answer as the tool had it.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceAnswer {
    pub source: crate::foreign::record::SourceRecord,
    pub model: String,
    /// The answer's text (`None`: the tool kept none, or the model failed).
    pub text: Option<String>,
    pub error: Option<String>,
}

#[derive(Debug)]
pub struct SourceRun {
    pub run: String,
    pub answers: Vec<SourceAnswer>,
}

impl Outcome for SourceRun {}

impl Job for LoadSource {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let run = self.run;
        cx.on_reader(RUNS_NEED, move |db| {
            let r = read_or_fail!(db);
            let read = || -> crate::store::Result<Vec<SourceAnswer>> {
                let sources = crate::foreign::record::of_run(db, &run)?;
                let mut answers: std::collections::HashMap<u32, ResponseRecord> = r
                    .responses(&run)?
                    .into_iter()
                    .map(|a| (a.job_idx, a))
                    .collect();
                Ok(sources
                    .into_values()
                    .map(|s| {
                        let a = answers.remove(&s.job_idx);
                        SourceAnswer {
                            model: a.as_ref().map(|a| a.model.clone()).unwrap_or_default(),
                            text: a.as_ref().and_then(|a| a.text.clone()),
                            error: a.and_then(|a| a.error),
                            source: s,
                        }
                    })
                    .collect())
            };
            match read() {
                Ok(answers) => Msg::new(SourceRun { run, answers }),
                Err(e) => Msg::failed(format!("reading the imported run: {e}")),
            }
        });
    }
}
