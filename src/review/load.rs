//! Everything the review screen and `prism review stats` read from the store at once.

use std::collections::HashMap;

use super::ReviewRecord;
use super::queue::{Evidence, Signals};
use crate::store::{Db, Draft};

/// The decisions, one reviewer's drafts, and each item's triage signals.
#[derive(Debug, Clone, Default)]
pub struct ReviewData {
    pub reviewer: String,
    /// Blind review: models are shown as "model A/B/..." (per item, in name order).
    pub blind: bool,
    /// In storing order.
    pub decisions: Vec<ReviewRecord>,
    /// The store's position after the last decision read (for [`ReviewData::merge`]).
    pub seq: i64,
    /// Each item's decisions (indices into `decisions`).
    pub by_item: HashMap<String, Vec<usize>>,
    /// This reviewer's drafts, by item id.
    pub drafts: HashMap<String, Draft>,
    pub signals: HashMap<String, Signals>,
    pub evidence: HashMap<String, Evidence>,
}

/// Each item's least backed sentence by the prompt method (the share of samples the judge
/// said do not back it), over the answers of every stored run made with samples. Only the
/// prompt method: its score means the same on every answer (the others are relative).
fn unbacked_sentences(
    db: &Db,
    ds: &crate::dataset::Dataset,
    evidence: &mut HashMap<String, Evidence>,
) -> crate::store::Result<()> {
    // Every verdict read once; none (no judge was ever asked): no run's answers are read.
    let support = crate::sentences::support_records(db)?;
    if support.is_empty() {
        return Ok(());
    }
    for run in db.read()?.runs()? {
        if run.config.samples == 1 {
            continue;
        }
        let Some((Some(_), scored)) = crate::sentences::scored_run(db, &run.id, ds, &support)?
        else {
            continue;
        };
        for (a, s) in scored {
            let worst = s
                .iter()
                .filter_map(|x| x.scores.prompt)
                .fold(None, |w: Option<f64>, x| Some(w.map_or(x, |w| w.max(x))));
            if let Some(w) = worst {
                let e = evidence.entry(a.group.item_id.clone()).or_default();
                e.unbacked = Some(e.unbacked.map_or(w, |u| u.max(w)));
            }
        }
    }
    Ok(())
}

impl ReviewData {
    /// Scores and detections from this machine's runs; decisions, drafts and quality scores
    /// from the review panel (the same file, or the panel's shared database). With the
    /// dataset, also each item's least backed sentence (where in the answer: the prompt
    /// method's stored verdicts on the answers of runs made with samples).
    pub fn load(
        db: &Db,
        reviewer: &str,
        ds: Option<&crate::dataset::Dataset>,
    ) -> crate::store::Result<ReviewData> {
        let store = db.read()?;
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
        store.rule_judge_disagreements(|item, n| {
            evidence.entry(item.to_string()).or_default().rule_judge += n;
        })?;
        for (item, (disagree, flips)) in super::queue::judge_evidence(&store.judge_verdicts(None)?)
        {
            let e = evidence.entry(item).or_default();
            e.judges_disagree += disagree;
            e.judge_flips += flips;
        }
        for f in crate::detect::results::answer_flags(db)? {
            let e = evidence.entry(f.item_id.clone()).or_default();
            e.checked += 1;
            e.flagged += u32::from(f.outcome.flagged());
        }
        if let Some(ds) = ds {
            unbacked_sentences(db, ds, &mut evidence)?;
        }
        for q in db.quality(None)? {
            if let Some(s) = q.scores {
                evidence
                    .entry(q.item_id)
                    .or_default()
                    .quality
                    .push((q.model, s));
            }
        }
        let (decisions, seq) = db.decisions_after(0)?;
        let signals = evidence
            .iter()
            .map(|(k, e)| (k.clone(), Signals::of(e)))
            .collect();
        let mut by_item: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, d) in decisions.iter().enumerate() {
            by_item.entry(d.item_id.clone()).or_default().push(i);
        }
        Ok(ReviewData {
            reviewer: reviewer.to_string(),
            blind: false,
            decisions,
            seq,
            by_item,
            drafts: db
                .drafts(reviewer)?
                .into_iter()
                .map(|d| (d.item_id.clone(), d))
                .collect(),
            signals,
            evidence,
        })
    }

    /// Adds decisions read after `seq` (ones already here, by uid, are skipped); returns the
    /// items that changed.
    pub fn merge(&mut self, more: Vec<ReviewRecord>, seq: i64) -> Vec<String> {
        self.seq = self.seq.max(seq);
        let mut changed = Vec::new();
        // Only the tail can hold them: a refresh reads from a little before the last seq.
        let recent: std::collections::HashSet<&str> = self
            .decisions
            .iter()
            .rev()
            .take(more.len() + super::REFRESH_LOOKBACK as usize * 4)
            .map(|d| d.uid.as_str())
            .collect();
        let fresh: Vec<ReviewRecord> = more
            .into_iter()
            .filter(|d| !recent.contains(d.uid.as_str()))
            .collect();
        for d in fresh {
            changed.push(d.item_id.clone());
            self.by_item
                .entry(d.item_id.clone())
                .or_default()
                .push(self.decisions.len());
            self.decisions.push(d);
        }
        changed
    }

    /// One item's status, from its decisions.
    pub fn status_of(&self, item_id: &str, min_reviewers: usize) -> super::ItemStatus {
        let ds: Vec<&ReviewRecord> = self
            .by_item
            .get(item_id)
            .map(|ix| ix.iter().map(|&i| &self.decisions[i]).collect())
            .unwrap_or_default();
        super::status(&ds, min_reviewers)
    }

    /// Each item's status, from its decisions.
    pub fn statuses(&self, min_reviewers: usize) -> HashMap<String, super::ItemStatus> {
        if self.by_item.is_empty() && !self.decisions.is_empty() {
            // Built by hand (no index): group here.
            let mut by_item: HashMap<&str, Vec<&ReviewRecord>> = HashMap::new();
            for d in &self.decisions {
                by_item.entry(&d.item_id).or_default().push(d);
            }
            return by_item
                .into_iter()
                .map(|(k, v)| (k.to_string(), super::status(&v, min_reviewers)))
                .collect();
        }
        self.by_item
            .keys()
            .map(|k| (k.clone(), self.status_of(k, min_reviewers)))
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
