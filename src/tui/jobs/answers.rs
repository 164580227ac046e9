//! Stored answers and their scores: the tree's rates when the TUI opens, an item's stored
//! answers, scoring (by rule, or with the judge), and choosing the judge.

use crate::tui::jobs::read_or_fail;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{Effects, Job, JobCx, Msg, Outcome, Slot};
use crate::engine::Caller;
use crate::engine::score::ToScore;
use crate::provider::ModelConfig;
use crate::store::{ResponseRecord, ScoreRecord};

/// A stored response as something to score.
pub fn to_score(item: usize, r: &ResponseRecord) -> ToScore {
    ToScore::from_record(item, r)
}

/// Every run's latest scores (the tree's rates), then the answers never scored, which are
/// scored by rule.
pub struct LoadScores;

/// The latest score of every stored answer.
#[derive(Debug)]
pub struct LatestScores(pub Vec<crate::store::summaries::LatestScore>);

/// Stored answers that have no score yet.
#[derive(Debug)]
pub struct Unscored(pub Vec<ToScore>);

impl Job for LoadScores {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        // Two tasks: the tree fills from the first before the second looks for unscored answers.
        cx.on_reader(None, |db| {
            let r = read_or_fail!(db);
            r.latest_scores()
                .map(|s| Msg::new(LatestScores(s)))
                .unwrap_or_else(|e| Msg::failed(format!("reading scores: {e}")))
        });
        let ds = cx.ds.clone();
        cx.on_reader(None, move |db| {
            match db.read().and_then(|r| r.unscored_responses()) {
                Ok(records) => Msg::new(Unscored(
                    records
                        .iter()
                        .filter_map(|r| Some(to_score(ds.index_of(&r.item_id)?, r)))
                        .collect(),
                )),
                Err(e) => Msg::failed(format!("reading stored answers: {e}")),
            }
        });
    }
}

impl Outcome for LatestScores {
    fn apply(&self, fx: &mut Effects<'_>) {
        for r in &self.0 {
            fx.session.apply_stored_score(r);
        }
    }
}

impl Outcome for Unscored {
    fn apply(&self, fx: &mut Effects<'_>) {
        if !self.0.is_empty() {
            fx.more.push(Box::new(Score {
                inputs: self.0.clone(),
                judge: false,
            }));
        }
    }
}

/// An item's stored answers and scores; `rescore`: score them again with the judge.
pub struct LoadStored {
    pub item: usize,
    pub rescore: bool,
}

#[derive(Debug)]
pub struct Stored {
    pub item: usize,
    pub records: Vec<ResponseRecord>,
    pub scores: Vec<ScoreRecord>,
    pub rescore: bool,
}

impl Job for LoadStored {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let Some(it) = cx.ds.items.get(self.item) else {
            return;
        };
        let (id, item, rescore) = (it.id.to_string(), self.item, self.rescore);
        cx.on_reader(None, move |db| {
            let r = read_or_fail!(db);
            match (r.responses_for_item(&id), r.scores_for_item(&id)) {
                (Ok(records), Ok(scores)) => Msg::new(Stored {
                    item,
                    records,
                    scores,
                    rescore,
                }),
                (Err(e), _) | (_, Err(e)) => Msg::failed(format!("reading stored answers: {e}")),
            }
        });
    }
}

impl Outcome for Stored {
    /// Into the session; scored again with the judge when asked (`rescore`), else those never
    /// scored are scored by rule (browsing must not spend judge calls; `S` asks the judge).
    fn apply(&self, fx: &mut Effects<'_>) {
        fx.session.load_stored(self.item, &self.records);
        for s in &self.scores {
            fx.session.apply_score(s.clone());
        }
        if self.rescore {
            let inputs = fx.session.score_inputs(self.item);
            if inputs.is_empty() {
                *fx.notice = Some("no finished answers to score".into());
            } else {
                fx.more.push(Box::new(Score {
                    inputs,
                    judge: true,
                }));
            }
            return;
        }
        let unscored: Vec<_> = self
            .records
            .iter()
            .filter(|r| {
                !self
                    .scores
                    .iter()
                    .any(|s| s.run_id == r.run_id && s.job_idx == r.job_idx)
            })
            .map(|r| to_score(self.item, r))
            .collect();
        if !unscored.is_empty() {
            fx.more.push(Box::new(Score {
                inputs: unscored,
                judge: false,
            }));
        }
    }
}

/// Scores answers (rules; the judge too when `judge` is set and one is configured); each score
/// reaches the loop as it is saved.
pub struct Score {
    pub inputs: Vec<ToScore>,
    pub judge: bool,
}

/// One score, as saved.
#[derive(Debug)]
pub struct Scored(pub ScoreRecord);

impl Outcome for Scored {
    fn apply(&self, fx: &mut Effects<'_>) {
        fx.session.apply_score(self.0.clone());
    }
}

impl Job for Score {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let judge = if self.judge {
            cx.services.judge.get()
        } else {
            None
        };
        let (stx, mut srx) = tokio::sync::mpsc::unbounded_channel();
        let (ds, store, reply) = (cx.ds.clone(), cx.services.store.clone(), cx.reply());
        let inputs = self.inputs;
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        // One task scores and forwards, so when it ends every score has reached the loop.
        cx.spawn(Slot::Other, cancel, async move {
            use futures::FutureExt;
            // A bug in scoring is reported, not silently lost with its scores.
            let work = std::panic::AssertUnwindSafe(crate::engine::score::score_all(
                ds,
                inputs,
                crate::engine::score::Judging::one(judge, 4),
                store,
                stx,
            ))
            .catch_unwind();
            let work = async {
                work.await.unwrap_or_else(|p| {
                    Err(anyhow::anyhow!(
                        "internal error: {}",
                        crate::engine::panic_message(&*p)
                    ))
                })
            };
            let forward = async {
                while let Some(r) = srx.recv().await {
                    reply.outcome(Scored(r));
                }
            };
            tokio::select! {
                (result, ()) = async { tokio::join!(work, forward) } => {
                    if let Err(e) = result {
                        reply.fail(format!("scoring: {e}"));
                    }
                }
                _ = c2.cancelled() => {}
            }
        });
    }
}

/// Judges with this model from now on and remembers it (`judge` in config.toml); the answers
/// that waited for a judge are read on the store worker and scored.
pub struct SetJudge(pub ModelConfig);

/// The judge is set; `waiting`: the answers that waited for one.
#[derive(Debug)]
pub struct JudgeSet {
    pub name: String,
    pub waiting: Vec<ToScore>,
    pub not_remembered: Option<String>,
}

impl Job for SetJudge {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        let cfg = self.0;
        let s = &mut *cx.services;
        let caller = Caller::new(
            &cfg,
            &s.factory,
            s.store.clone(),
            true,
            CancellationToken::new(),
        );
        match caller {
            Ok(c) => s.judge.set(Some(Arc::new(c))),
            Err(e) => return cx.fail(format!("judge {}: {e:#}", cfg.name)),
        }
        let not_remembered = match &s.config_file {
            Some(path) => crate::config::remember(path, "judge", &cfg.name).err(),
            None => Some("no config file in this session".into()),
        };
        let ds = cx.ds.clone();
        cx.on_store(move |sx| {
            let mut out = Vec::new();
            let waiting = match &sx.db {
                Some(db) => match db.read().and_then(|r| r.awaiting_judge()) {
                    Ok(records) => records
                        .iter()
                        .filter_map(|r| Some(to_score(ds.index_of(&r.item_id)?, r)))
                        .collect(),
                    Err(e) => {
                        out.push(Msg::failed(format!("reading stored answers: {e}")));
                        Vec::new()
                    }
                },
                None => Vec::new(),
            };
            out.push(Msg::new(JudgeSet {
                name: cfg.name.clone(),
                waiting,
                not_remembered,
            }));
            out
        });
    }
}

impl Outcome for JudgeSet {
    /// The judge is set: the answers that waited for one are scored, and the notice says so.
    fn apply(&self, fx: &mut Effects<'_>) {
        *fx.judge = Some(self.name.clone());
        // One line at 80 columns: a longer notice opens in a box over the item pane.
        let caveat = fx
            .models
            .iter()
            .find(|m| m.name == self.name)
            .and_then(judge_caveat)
            .map(|_| " (small, embedded: indicative only)")
            .unwrap_or_default();
        let scoring = match self.waiting.len() {
            0 => "no answer waiting".to_string(),
            1 => "scoring 1 waiting answer".to_string(),
            n => format!("scoring {n} waiting answers"),
        };
        if !self.waiting.is_empty() {
            fx.more.push(Box::new(Score {
                inputs: self.waiting.clone(),
                judge: true,
            }));
        }
        let memory = match &self.not_remembered {
            None => " · remembered".to_string(),
            Some(e) => format!("; not remembered: {e}"),
        };
        *fx.notice = Some(format!(
            "judge {}{caveat}: {scoring}{memory}",
            crate::text::one_line(&self.name)
        ));
    }
}

/// What the screens say beside a judge that is not to be trusted far.
pub fn judge_caveat(m: &ModelConfig) -> Option<&'static str> {
    (m.provider == crate::provider::config::ProviderKind::Local)
        .then_some("a small embedded model: its verdicts are indicative only")
}
