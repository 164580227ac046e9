//! Scoring stored (or imported) responses: rules first, judges through [`Caller`] for what the
//! rules cannot settle. Every score is saved the moment it is known (rule scores in one batch,
//! judged scores one by one as their judge answers) and announced on a channel.

use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc};

use super::Caller;
use crate::dataset::Dataset;
use crate::eval::judge;
use crate::eval::score::{Step, step};
use crate::store::{ScoreRecord, StoreHandle, now_secs};

/// A response to score.
#[derive(Debug, Clone)]
pub struct ToScore {
    pub run_id: String,
    pub job_idx: u32,
    /// Index into the dataset's items.
    pub item: usize,
    pub model: String,
    pub sample: u32,
    /// The answer (`None`: there is none).
    pub response: Option<Answer>,
}

/// What a job came to: a text to score, or a failure with its reason (typed, never an
/// `ERROR:` text; only the official outputs files write failures that way, and a text of
/// theirs that starts with `ERROR:` is still read as PRISM reads it).
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Text(String),
    Failed(String),
}

impl ToScore {
    /// A stored answer as something to score (its failure, if it has one, wins over any text).
    pub fn from_record(item: usize, r: &crate::store::ResponseRecord) -> ToScore {
        ToScore {
            run_id: r.run_id.clone(),
            job_idx: r.job_idx,
            item,
            model: r.model.clone(),
            sample: r.sample,
            response: match (&r.error, &r.text) {
                (Some(e), _) => Some(Answer::Failed(e.clone())),
                (None, Some(t)) => Some(Answer::Text(t.clone())),
                (None, None) => None,
            },
        }
    }

    /// The answer's text, when it has one.
    fn text(&self) -> Option<&str> {
        match &self.response {
            Some(Answer::Text(t)) => Some(t),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct ScoreCounts {
    pub scored: usize,
    pub by_rule: usize,
    pub by_judge: usize,
    /// Left unscored: a judge was needed and none was given (or it has no prompt).
    pub unscored: usize,
    /// The judge could not be reached (recorded with the reason, left unscored).
    pub judge_errors: usize,
    /// Judge replies unreadable after every attempt (the fallback score applied).
    pub fallbacks: usize,
}

fn record(t: &ToScore, ds: &Dataset) -> ScoreRecord {
    let item = &ds.items[t.item];
    let task = ds.task_of(item);
    ScoreRecord {
        run_id: t.run_id.clone(),
        job_idx: t.job_idx,
        item_id: item.id.to_string(),
        task_id: task.id.clone(),
        model: t.model.clone(),
        sample: t.sample,
        evaluator: task.evaluator.as_str().to_string(),
        score: None,
        detail: String::new(),
        judge: None,
        judge_reply: None,
        judge_attempts: 0,
        created_at: now_secs(),
        rule_score: None,
    }
}

/// Who judges what the rules cannot score, and how many judge calls at once.
pub(crate) struct Judging {
    pub(crate) judge: Option<Arc<Caller>>,
    pub(crate) concurrency: usize,
}

/// Scores `inputs`. Without a judge, items that need one are saved unscored (`score: None`),
/// never as wrong.
pub(crate) async fn score_all(
    ds: Arc<Dataset>,
    inputs: Vec<ToScore>,
    Judging { judge, concurrency }: Judging,
    store: Option<StoreHandle>,
    out: mpsc::UnboundedSender<ScoreRecord>,
) -> anyhow::Result<ScoreCounts> {
    let mut counts = ScoreCounts::default();
    let mut settled = Vec::new();
    let mut asks = Vec::new();
    for t in &inputs {
        let mut rec = record(t, &ds);
        let item = &ds.items[t.item];
        let steps = match &t.response {
            // A failed job scores 0 with its reason (PRISM counts it as wrong).
            Some(Answer::Failed(_)) => Step::Done(crate::eval::rules::Verdict::fail(
                "failed response (API error)",
            )),
            _ => step(&ds, item, t.text()),
        };
        match steps {
            Step::Done(v) => {
                rec.score = Some(v.score);
                rec.detail = v.detail;
                counts.scored += 1;
                counts.by_rule += 1;
                settled.push(rec);
            }
            Step::NoPrompt(kind) => {
                rec.detail = format!("no {} judge prompt", kind.name());
                counts.unscored += 1;
                settled.push(rec);
            }
            Step::Judge(ask) => {
                // Kept beside the judge's verdict: review looks where the two disagree.
                rec.rule_score = crate::eval::score::rule_verdict(&ds, item, t.text());
                match &judge {
                    None => {
                        rec.detail = format!("needs the {} judge", ask.kind.name());
                        counts.unscored += 1;
                        settled.push(rec);
                    }
                    Some(_) => asks.push((rec, ask)),
                }
            }
        }
    }
    if let Some(store) = &store {
        for chunk in settled.chunks(4096) {
            store
                .save_scores(chunk.to_vec())
                .await
                .map_err(|e| anyhow::anyhow!("saving scores: {e}"))?;
        }
    }
    for r in settled {
        let _ = out.send(r);
    }
    let Some(judge) = judge else {
        return Ok(counts);
    };
    let gate = Arc::new(Semaphore::new(concurrency.max(1)));
    let mut handles = Vec::with_capacity(asks.len());
    for (mut rec, ask) in asks {
        let (judge, gate, store, out) = (judge.clone(), gate.clone(), store.clone(), out.clone());
        handles.push(tokio::spawn(async move {
            let _slot = gate.acquire_owned().await;
            let judged = ask_judge(&judge, &ask).await;
            rec.judge = Some(judge.cfg.name.clone());
            rec.created_at = now_secs();
            match &judged.verdict {
                Ok(v) => {
                    rec.score = Some(v.score);
                    rec.detail = v.detail.clone();
                }
                Err(e) => rec.detail = format!("judge failed: {e}"),
            }
            rec.judge_reply = judged.reply.clone();
            rec.judge_attempts = judged.attempts;
            let saved = match &store {
                Some(s) => s.save_scores(vec![rec.clone()]).await,
                None => Ok(()),
            };
            let _ = out.send(rec);
            (judged, saved)
        }));
    }
    for h in handles {
        let (judged, saved) = h.await?;
        saved.map_err(|e| anyhow::anyhow!("saving a score: {e}"))?;
        if judged.verdict.is_ok() {
            counts.scored += 1;
            counts.by_judge += 1;
            counts.fallbacks += usize::from(judged.fallback);
        } else {
            counts.unscored += 1;
            counts.judge_errors += 1;
        }
    }
    Ok(counts)
}

/// What asking a PRISM judge came to: its verdict (the fallback's when no reply could be
/// read), or why the judge could not be reached.
struct Judged {
    verdict: Result<crate::eval::rules::Verdict, String>,
    /// The last reply, when there was one.
    reply: Option<String>,
    attempts: u32,
    fallback: bool,
}

async fn ask_judge(caller: &Caller, ask: &judge::JudgeAsk) -> Judged {
    let kind = ask.kind;
    let asked = super::judge::ask(caller, &ask.request(), judge::ATTEMPTS, |reply| {
        judge::read(kind, reply)
    })
    .await;
    match asked.outcome {
        Ok(Some(v)) => Judged {
            verdict: Ok(v),
            reply: asked.reply,
            attempts: asked.attempts,
            fallback: false,
        },
        Ok(None) => Judged {
            verdict: Ok(kind.fallback()),
            reply: Some(asked.reply.unwrap_or_default()),
            attempts: asked.attempts,
            fallback: true,
        },
        Err(e) => Judged {
            verdict: Err(e),
            reply: None,
            attempts: 0,
            fallback: false,
        },
    }
}
