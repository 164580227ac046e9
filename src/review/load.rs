//! Everything the review screen and `prism review stats` read from the store at once.

use std::collections::HashMap;

use super::ReviewRecord;
use super::queue::{Evidence, Signals};
use crate::store::{Draft, Store};

/// The decisions, one reviewer's drafts, and each item's triage signals.
#[derive(Debug, Clone, Default)]
pub struct ReviewData {
    pub reviewer: String,
    pub decisions: Vec<ReviewRecord>,
    /// This reviewer's drafts, by item id.
    pub drafts: HashMap<String, Draft>,
    pub signals: HashMap<String, Signals>,
    pub evidence: HashMap<String, Evidence>,
}

impl ReviewData {
    /// Scores and detections from `store` (this machine's runs); decisions, drafts and quality
    /// scores from `review` (the same file, or the panel's shared database).
    pub fn load(
        store: &Store,
        review: &super::db::ReviewDb,
        reviewer: &str,
    ) -> crate::store::Result<ReviewData> {
        let mut evidence: HashMap<String, Evidence> = HashMap::new();
        store.score_triples(|item, model, score| {
            evidence
                .entry(item.to_string())
                .or_default()
                .scores
                .entry(model.to_string())
                .or_default()
                .push(score);
        })?;
        for f in crate::detect::results::answer_flags(store)? {
            let e = evidence.entry(f.item_id.clone()).or_default();
            e.checked += 1;
            e.flagged += u32::from(f.outcome.flagged());
        }
        for q in review.quality(None)? {
            if let Some(s) = q.scores {
                evidence
                    .entry(q.item_id)
                    .or_default()
                    .quality
                    .push((q.model, s));
            }
        }
        let signals = evidence
            .iter()
            .map(|(k, e)| (k.clone(), Signals::of(e)))
            .collect();
        Ok(ReviewData {
            reviewer: reviewer.to_string(),
            decisions: review.decisions()?,
            drafts: review
                .drafts(reviewer)?
                .into_iter()
                .map(|d| (d.item_id.clone(), d))
                .collect(),
            signals,
            evidence,
        })
    }

    /// Each item's status, from its decisions.
    pub fn statuses(&self, min_reviewers: usize) -> HashMap<String, super::ItemStatus> {
        let mut by_item: HashMap<&str, Vec<&ReviewRecord>> = HashMap::new();
        for d in &self.decisions {
            by_item.entry(&d.item_id).or_default().push(d);
        }
        by_item
            .into_iter()
            .map(|(k, v)| (k.to_string(), super::status(&v, min_reviewers)))
            .collect()
    }
}

/// The reviewer's name: `--reviewer`, else the config's `reviewer`, else the login name.
pub fn default_reviewer() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "reviewer".into())
}
