//! The quality agent (METHODS §2): a model scores each candidate item 1-10 on A Factuality,
//! B Discriminability and C Clarity with the banded rubric; S(x) = 0.5A + 0.3B + 0.2C; an item
//! is kept only if every one of A, B, C exceeds the threshold (7.0). Against human decisions,
//! rejection recall(T) = |removed by reviewers and filtered at T| / |removed by reviewers|.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::rubric::{AGENT, passes, weighted_quality};
use crate::dataset::{Dataset, Item};
use crate::provider::{ChatRequest, Message, Params};

/// PRISM's threshold.
pub const THRESHOLD: f64 = 7.0;

pub use crate::store::review_records::QualityRecord;

impl QualityRecord {
    pub fn weighted(&self) -> Option<f64> {
        self.scores
            .map(|[a, b, c]| weighted_quality(a as f64, b as f64, c as f64))
    }

    /// Kept at `threshold` (every score above it); `None` without scores.
    pub fn kept(&self, threshold: f64) -> Option<bool> {
        self.scores
            .map(|s| passes([s[0] as f64, s[1] as f64, s[2] as f64], threshold))
    }
}

/// The request: the rubric, then the item as the model under test sees it, its reference and
/// constraints, and where PRISM files it.
pub fn request(ds: &Dataset, item: &Item) -> ChatRequest {
    let task = ds.task_of(item);
    let mut rubric = String::new();
    for (letter, c) in ["A", "B", "C"].iter().zip(AGENT.iter()) {
        rubric.push_str(&format!("{letter}. {} — {}\n", c.name, c.question));
        for (range, band) in super::rubric::BAND_RANGES.iter().zip(c.bands.iter()) {
            rubric.push_str(&format!("   {range}: {band}\n"));
        }
    }
    let mut item_text = format!(
        "Dimension: {} ({})\nSub-task: {}\n\nWhat the model is asked:\n{}\n",
        task.dimension.code(),
        task.dimension.name(),
        task.id,
        crate::prompt::user_message(ds, item)
    );
    if let Some(a) = &item.answer {
        item_text.push_str(&format!("\nReference answer:\n{a}\n"));
    }
    if let Some(f) = &item.format {
        item_text.push_str(&format!("\nRequired format: {f}\n"));
    }
    if let Some([lo, hi]) = item.word_range {
        item_text.push_str(&format!("\nRequired length: {lo}-{hi} words\n"));
    }
    if let Some(l) = &item.language {
        item_text.push_str(&format!("\nRequired language: {l}\n"));
    }
    let content = format!(
        "You review candidate items for a hallucination benchmark. Score the item below from 1 \
         to 10 on each criterion, using the bands.\n\n{rubric}\nItem {}:\n{item_text}\n\
         Reply with exactly these three lines, then one line of reasons:\n\
         Factuality: <1-10>\nDiscriminability: <1-10>\nClarity: <1-10>\nReason: <one sentence>",
        item.id
    );
    ChatRequest {
        messages: vec![Message::user(content)],
        params: Params {
            temperature: Some(0.0),
            max_tokens: Some(200),
            ..Params::default()
        },
    }
}

/// Reads the three scores: `Factuality: 8` (any case, `**` or `8/10` allowed), or a JSON object
/// with those keys. All three, each 1-10, or nothing: a partial reply is not guessed at.
pub fn parse(reply: &str) -> Option<[u8; 3]> {
    if let Some(v) = json_scores(reply) {
        return Some(v);
    }
    let mut out = [None; 3];
    for line in reply.lines() {
        let clean: String = line
            .chars()
            .filter(|c| !matches!(c, '*' | '_' | '`' | '#'))
            .collect();
        let clean = clean.trim().trim_start_matches(['-', ' ']);
        let Some((name, rest)) = clean.split_once(':') else {
            continue;
        };
        let name = name.trim().to_ascii_lowercase();
        // "A. Factuality" / "b) Discriminability": the rubric's letters.
        let name = match name.as_bytes() {
            [l, p, ..] if b"abc".contains(l) && b".)".contains(p) => name[2..].trim(),
            _ => name.as_str(),
        };
        let slot = match name {
            "factuality" => 0,
            "discriminability" => 1,
            "clarity" => 2,
            _ => continue,
        };
        let digits: String = rest
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        let v: u8 = digits.parse().ok()?;
        if !(1..=10).contains(&v) {
            return None;
        }
        if out[slot].is_some_and(|old| old != v) {
            // Two different scores for one criterion: not readable.
            return None;
        }
        out[slot] = Some(v);
    }
    Some([out[0]?, out[1]?, out[2]?])
}

fn json_scores(reply: &str) -> Option<[u8; 3]> {
    let start = reply.find('{')?;
    let end = reply.rfind('}')?;
    let v: serde_json::Value = serde_json::from_str(reply.get(start..=end)?).ok()?;
    let get = |k: &str| -> Option<u8> {
        let obj = v.as_object()?;
        let x = obj
            .iter()
            .find(|(key, _)| key.to_ascii_lowercase() == k)?
            .1
            .as_f64()?;
        (x.fract() == 0.0 && (1.0..=10.0).contains(&x)).then_some(x as u8)
    };
    Some([
        get("factuality")?,
        get("discriminability")?,
        get("clarity")?,
    ])
}

/// One threshold of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepRow {
    pub threshold: f64,
    /// Items with scores that every criterion keeps.
    pub kept: usize,
    pub filtered: usize,
    /// Of the items reviewers removed (and the agent scored): how many are filtered here.
    pub removed_filtered: usize,
    pub rejection_recall: Option<f64>,
    /// Of the items reviewers retained: how many are filtered here (the cost of the threshold).
    pub retained_filtered: usize,
}

/// The sweep over `thresholds`, against the items humans removed and retained (ids).
pub fn sweep(
    records: &[QualityRecord],
    removed: &HashSet<String>,
    retained: &HashSet<String>,
    thresholds: &[f64],
) -> Vec<SweepRow> {
    let scored: Vec<&QualityRecord> = records.iter().filter(|r| r.scores.is_some()).collect();
    thresholds
        .iter()
        .map(|&t| {
            let filtered: Vec<&&QualityRecord> =
                scored.iter().filter(|r| r.kept(t) == Some(false)).collect();
            let removed_scored = scored
                .iter()
                .filter(|r| removed.contains(&r.item_id))
                .count();
            let removed_filtered = filtered
                .iter()
                .filter(|r| removed.contains(&r.item_id))
                .count();
            SweepRow {
                threshold: t,
                kept: scored.len() - filtered.len(),
                filtered: filtered.len(),
                removed_filtered,
                rejection_recall: (removed_scored > 0)
                    .then(|| removed_filtered as f64 / removed_scored as f64),
                retained_filtered: filtered
                    .iter()
                    .filter(|r| retained.contains(&r.item_id))
                    .count(),
            }
        })
        .collect()
}

/// The default sweep: 5.0 to 9.0 by 0.5 (PRISM's 7.0 among them).
pub fn default_thresholds() -> Vec<f64> {
    (0..=8).map(|i| 5.0 + 0.5 * i as f64).collect()
}

/// Items whose latest decided round converged on remove / retain, from the decisions.
pub fn human_outcomes(
    decisions: &[super::ReviewRecord],
    min_reviewers: usize,
) -> (HashSet<String>, HashSet<String>) {
    let mut by_item: HashMap<&str, Vec<&super::ReviewRecord>> = HashMap::new();
    for d in decisions {
        by_item.entry(&d.item_id).or_default().push(d);
    }
    let (mut removed, mut retained) = (HashSet::new(), HashSet::new());
    for (id, ds) in by_item {
        match super::status(&ds, min_reviewers).state {
            super::State::Converged(super::Decision::Remove) => {
                removed.insert(id.to_string());
            }
            super::State::Converged(super::Decision::Retain) => {
                retained.insert(id.to_string());
            }
            _ => {}
        }
    }
    (removed, retained)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_strictly() {
        assert_eq!(
            parse("Factuality: 8\nDiscriminability: 6\nClarity: 9\nReason: fine."),
            Some([8, 6, 9])
        );
        assert_eq!(
            parse("**Factuality**: 8/10\n- **Discriminability:** 7\nC. Clarity: 10"),
            Some([8, 7, 10])
        );
        assert_eq!(
            parse(r#"Sure: {"Factuality": 9, "discriminability": 8, "clarity": 7}"#),
            Some([9, 8, 7])
        );
        // Missing, out of range, contradictory or words: unreadable.
        assert_eq!(parse("Factuality: 8\nClarity: 9"), None);
        assert_eq!(
            parse("Factuality: 11\nDiscriminability: 6\nClarity: 9"),
            None
        );
        assert_eq!(
            parse("Factuality: eight\nDiscriminability: 6\nClarity: 9"),
            None
        );
        assert_eq!(
            parse("Factuality: 8\nFactuality: 3\nDiscriminability: 6\nClarity: 9"),
            None
        );
        assert_eq!(parse(""), None);
    }

    fn q(id: &str, s: Option<[u8; 3]>) -> QualityRecord {
        QualityRecord {
            item_id: id.into(),
            task_id: "t".into(),
            model: "m".into(),
            scores: s,
            reply: String::new(),
            error: None,
            attempts: 1,
            created_at: 0,
        }
    }

    #[test]
    fn the_sweep_on_a_hand_made_case() {
        // r1 (removed): 6 8 9, min 6 -> filtered at T >= 6.
        // r2 (removed): 9 9 8, min 8 -> filtered at T >= 8.
        // k1 (retained): 8 8 8 -> filtered at T >= 8.
        // k2 (retained): 10 9 9 -> filtered at T >= 9.
        // x (no human decision): 7 9 9 -> filtered at T >= 7 (7 does not exceed 7.0).
        // u (unreadable): never counted.
        let recs = vec![
            q("r1", Some([6, 8, 9])),
            q("r2", Some([9, 9, 8])),
            q("k1", Some([8, 8, 8])),
            q("k2", Some([10, 9, 9])),
            q("x", Some([7, 9, 9])),
            q("u", None),
        ];
        let removed: HashSet<String> = ["r1", "r2", "u"].iter().map(|s| s.to_string()).collect();
        let retained: HashSet<String> = ["k1", "k2"].iter().map(|s| s.to_string()).collect();
        let rows = sweep(&recs, &removed, &retained, &[5.0, 6.0, 7.0, 8.0, 9.0]);
        let got: Vec<(usize, usize, Option<f64>, usize)> = rows
            .iter()
            .map(|r| {
                (
                    r.kept,
                    r.removed_filtered,
                    r.rejection_recall,
                    r.retained_filtered,
                )
            })
            .collect();
        // (kept, removed and filtered, rejection recall over the 2 scored removed, retained
        // and filtered)
        assert_eq!(
            got,
            vec![
                (5, 0, Some(0.0), 0),
                (4, 1, Some(0.5), 0),
                (3, 1, Some(0.5), 0),
                (1, 2, Some(1.0), 1),
                (0, 2, Some(1.0), 2),
            ]
        );
        // The weighted quality of r1: 0.5*6 + 0.3*8 + 0.2*9 = 7.2, yet it is not kept at 7.0.
        assert!((recs[0].weighted().unwrap() - 7.2).abs() < 1e-9);
        assert_eq!(recs[0].kept(THRESHOLD), Some(false));
    }
}
