//! Samples drawn for answers that have fewer than asked (`prism sentences --samples N`): the
//! model that gave the answer is asked the answer's own prompt again, with the answer's own
//! parameters (SelfCheckGPT's samples are further answers to the same prompt), each sample
//! saved as it arrives (table `sentence_samples`), resumed where it stopped, and added after
//! the answer's own samples wherever its sentences are scored.

use std::collections::HashMap;
use std::sync::Arc;

use crate::detect::semantic::Group;
use crate::engine::Caller;
use crate::engine::records::{Cx, Unit};
use crate::provider::{ChatRequest, Message};
use crate::store::lane_tables::{SENTENCE_SAMPLES, Table, Val};
use crate::store::record::{Fields, Record, int, text};

/// One drawn sample of one answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    pub run_id: String,
    pub job_idx: u32,
    /// 1-based, after the answer's own samples (1 is the first drawn).
    pub k: u32,
    pub text: Option<String>,
    pub error: Option<String>,
    pub attempts: u32,
    pub created_at: i64,
}

impl Record for Drawn {
    fn table() -> &'static Table {
        &SENTENCE_SAMPLES
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        vec![
            ("run_id", text(Some(&self.run_id))),
            ("job_idx", int(self.job_idx)),
            ("k", int(self.k)),
            ("text", text(self.text.as_deref())),
            ("error", text(self.error.as_deref())),
            ("attempts", int(self.attempts)),
            ("created_at", int(self.created_at)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> crate::store::Result<Self> {
        Ok(Drawn {
            run_id: f.text("run_id")?,
            job_idx: f.u32("job_idx")?,
            k: f.u32("k")?,
            text: f.opt_text("text"),
            error: f.opt_text("error"),
            attempts: f.u32("attempts")?,
            created_at: f.int("created_at")?,
        })
    }
}

/// The samples drawn for the answers of `run` that arrived, per job, in `k` order.
pub fn drawn(
    db: &crate::store::Db,
    run: &str,
) -> crate::store::Result<HashMap<u32, Vec<(u32, String)>>> {
    let store = db.read()?;
    let mut out: HashMap<u32, Vec<(u32, String)>> = HashMap::new();
    for d in store.records_where::<Drawn>(Some(("run_id", run)))? {
        if let Some(t) = d.text {
            out.entry(d.job_idx).or_default().push((d.k, t));
        }
    }
    for v in out.values_mut() {
        v.sort_by_key(|x| x.0);
    }
    Ok(out)
}

/// A run's groups (`detect::semantic::run_groups`: per item and model, the first answer and
/// the run's other answers as its samples), each with the samples drawn for it after; an answer
/// the run has alone is a group too when it has drawn samples, or with `singles` always (its
/// samples are to be drawn).
pub fn run_groups(
    db: &crate::store::Db,
    run: &str,
    ds: &crate::dataset::Dataset,
    singles: bool,
) -> crate::store::Result<Vec<Group>> {
    let store = db.read()?;
    let responses = store.responses(run)?;
    let drawn = drawn(db, run)?;
    let mut by: std::collections::BTreeMap<(&str, &str), Vec<crate::store::ResponseRecord>> =
        Default::default();
    for r in responses.iter().filter(|r| r.text.is_some()) {
        by.entry((r.model.as_str(), r.item_id.as_str()))
            .or_default()
            .push(r.clone());
    }
    let tokens = HashMap::new();
    let question = |item: &str| ds.item_by_id(item).map(crate::prompt::format_question);
    let mut out = Vec::new();
    for rs in by.into_values() {
        let mut g = if rs.len() == 1 {
            if !singles && !drawn.contains_key(&rs[0].job_idx) {
                continue;
            }
            // One answer makes no group by the entropy's rule (two or more): paired with
            // itself, then the copy taken off.
            let two = [rs[0].clone(), rs[0].clone()];
            let mut g = crate::detect::semantic::sample_groups(&two, &tokens, question);
            for x in &mut g {
                x.answers.truncate(1);
                x.loglik.truncate(1);
            }
            g
        } else {
            crate::detect::semantic::sample_groups(&rs, &tokens, question)
        };
        out.append(&mut g);
    }
    for g in &mut out {
        if let Some(more) = g.source_job.and_then(|j| drawn.get(&j)) {
            for (_, t) in more {
                g.answers.push(t.clone());
                g.loglik.push(None);
            }
        }
    }
    Ok(out)
}

/// One answer to draw samples for: where it is stored, which model gave it and the request
/// that asked it (its prompt and parameters, as the run asked).
#[derive(Debug, Clone)]
pub struct Target {
    pub run: String,
    pub job: u32,
    pub model: String,
    pub request: ChatRequest,
}

impl Target {
    /// The target of a stored answer: the prompt rebuilt from the dataset as a run asks it
    /// (the sub-task's prompt, then the question), the answer's own parameters.
    pub fn of(ds: &crate::dataset::Dataset, r: &crate::store::ResponseRecord) -> Option<Target> {
        let (t, _) = crate::detect::targets::from_answers(&r.run_id, ds, std::slice::from_ref(r));
        let t = t.into_iter().next()?;
        let text = if t.prompt.trim().is_empty() {
            t.question.clone()
        } else {
            format!("{}\n\n{}", t.prompt.trim_end(), t.question)
        };
        Some(Target {
            run: r.run_id.clone(),
            job: r.job_idx,
            model: r.model.clone(),
            request: ChatRequest {
                messages: vec![Message::user(text)],
                params: serde_json::from_str(&t.params).unwrap_or_default(),
            },
        })
    }
}

/// The cache variant of drawn sample `k`: its own entry, apart from the run's answers and from
/// detection's samples (`detect::run::sample_cache_variant` starts at 1).
fn variant(k: u32) -> u32 {
    500_000 + k
}

/// The lane's unit: one sample `k` of one target, from the model behind `caller` (one model a
/// lane: each model's answers are drawn by a lane of their own).
pub struct Draw {
    pub targets: Arc<Vec<Target>>,
    pub caller: Arc<Caller>,
}

impl Unit for Draw {
    /// (target, k)
    type Todo = (usize, u32);
    type Record = Drawn;
    type Outcome = ();
    const WHAT: &'static str = "sample";

    async fn work(self: Arc<Self>, (ti, k): (usize, u32), cx: Cx<Self>) -> Option<()> {
        let t = &self.targets[ti];
        let mut req = t.request.clone();
        // The embedded model samples with a fixed seed unless told otherwise: each sample its
        // own, or every sample would be one text.
        if req.params.seed.is_none()
            && self.caller.cfg.provider == crate::provider::ProviderKind::Local
        {
            req.params.seed = Some(u64::from(variant(k)));
        }
        let slot = cx.slot().await?;
        let got = tokio::select! {
            x = self.caller.complete(&req, variant(k)) => x,
            _ = cx.cancel().cancelled() => return None,
        };
        drop(slot);
        if cx.is_cancelled() && got.as_ref().err().map(String::as_str) == Some("cancelled") {
            return None;
        }
        let rec = cx
            .save(Drawn {
                run_id: t.run.clone(),
                job_idx: t.job,
                k,
                text: got.as_ref().ok().map(|r| r.text.clone()),
                error: got.as_ref().err().cloned(),
                attempts: got.as_ref().map(|r| r.attempts).unwrap_or(0),
                created_at: crate::store::now_secs(),
            })
            .await?;
        cx.count(rec.error.is_none(), got.as_ref().is_ok_and(|r| r.cached));
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drawn_sample_reads_back_from_its_row() {
        let d = Drawn {
            run_id: "r".into(),
            job_idx: 4,
            k: 2,
            text: Some("Paris.".into()),
            error: None,
            attempts: 1,
            created_at: 9,
        };
        assert_eq!(Drawn::from_row(&d.to_row()).unwrap(), d);
    }
}
