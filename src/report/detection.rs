//! The detection tables of a report: for stored answers, the share flagged by self-contradiction
//! and how far that flag agrees with PRISM's verdict (per model and dimension); for claims,
//! AutoHall's collection (#N, #H, H%) and its detection metrics on the balanced set. Rendered in
//! every report format.

use serde::Serialize;
use serde_json::{Value, json};

use crate::detect::results::{Agreement, ClaimsReport};

/// One claims detection run's tables.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimsSection {
    pub detect_id: String,
    pub dataset: String,
    pub tables: ClaimsReport,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Detections {
    /// Flags of stored answers against PRISM's verdicts.
    pub answers: Vec<Agreement>,
    pub claims: Vec<ClaimsSection>,
}

impl Detections {
    pub fn is_empty(&self) -> bool {
        self.answers.is_empty() && self.claims.is_empty()
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.1}"))
}

fn temp(t: Option<f64>) -> String {
    t.map_or("-".to_string(), |t| t.to_string())
}

fn share(a: &Agreement) -> Option<f64> {
    (a.checked > 0).then(|| 100.0 * a.flagged as f64 / a.checked as f64)
}

use super::tables::Table;

/// The rows of each table, as strings. Every format is made from these.
fn tables(d: &Detections) -> Vec<Table> {
    let mut out = Vec::new();
    if !d.answers.is_empty() {
        out.push(flags_table(&d.answers));
    }
    for c in &d.claims {
        out.push(collection_table(c));
        out.push(detection_table(c));
    }
    out
}

/// Self-contradiction flags of stored answers, against PRISM's verdicts.
fn flags_table(answers: &[Agreement]) -> Table {
    Table {
        id: "flags",
        title: "Self-contradiction flags on stored answers, against PRISM's verdict".to_string(),
        header: vec![
            "model",
            "dimension",
            "checked",
            "flagged",
            "flagged %",
            "scored",
            "wrong",
            "precision %",
            "recall %",
            "wrong, never contradicted",
        ],
        rows: answers
            .iter()
            .map(|a| {
                vec![
                    a.model.clone(),
                    a.dimension.clone(),
                    a.checked.to_string(),
                    a.flagged.to_string(),
                    pct(share(a)),
                    a.scored.to_string(),
                    a.wrong.to_string(),
                    pct(a.precision),
                    pct(a.recall),
                    a.wrong_never_contradicted.to_string(),
                ]
            })
            .collect(),
    }
}

/// AutoHall's collection table of one claims run.
fn collection_table(c: &ClaimsSection) -> Table {
    Table {
        id: "autohall_collection",
        title: format!("AutoHall collection: {} ({})", c.dataset, c.detect_id),
        header: vec![
            "model",
            "temperature",
            "claims",
            "failed",
            "refused",
            "unparsed",
            "#N",
            "#H",
            "H%",
        ],
        rows: c
            .tables
            .collection
            .iter()
            .map(|r| {
                vec![
                    r.model.clone(),
                    temp(r.temperature),
                    r.claims.to_string(),
                    r.failed.to_string(),
                    r.refused.to_string(),
                    r.unparsed.to_string(),
                    r.n.to_string(),
                    r.h.to_string(),
                    pct(r.h_rate),
                ]
            })
            .collect(),
    }
}

/// AutoHall's detection table of one claims run: one row per model and rule.
fn detection_table(c: &ClaimsSection) -> Table {
    Table {
        id: "autohall_detection",
        title: format!(
            "AutoHall detection on the balanced set (K = {}, seed {}), hallucination positive: {} ({})",
            c.tables.k, c.tables.seed, c.dataset, c.detect_id
        ),
        header: vec![
            "model",
            "temperature",
            "rule",
            "balanced",
            "scored",
            "accuracy %",
            "precision %",
            "recall %",
            "F1 %",
            "AUROC %",
            "AUPRC %",
        ],
        rows: c
            .tables
            .detection
            .iter()
            .flat_map(|r| {
                r.thresholds.iter().map(move |(th, sc)| {
                    let first = *th == 1;
                    vec![
                        r.model.clone(),
                        temp(r.temperature),
                        if first {
                            "OR (any conflict)".to_string()
                        } else {
                            format!(">= {th} conflicts")
                        },
                        r.balanced.to_string(),
                        r.scored.to_string(),
                        pct(sc.accuracy),
                        pct(sc.precision),
                        pct(sc.recall),
                        pct(sc.f1),
                        if first { pct(r.auroc) } else { String::new() },
                        if first { pct(r.auprc) } else { String::new() },
                    ]
                })
            })
            .collect(),
    }
}

/// For the terminal.
pub(crate) fn table(d: &Detections) -> String {
    super::tables::text(&tables(d))
}

/// CSV: each table after a blank line, its first column naming it (`table`).
pub(crate) fn csv(d: &Detections) -> String {
    super::tables::csv(&tables(d))
}

pub(crate) fn markdown(d: &Detections) -> String {
    let mut s = super::tables::markdown(&tables(d));
    if !d.answers.is_empty() {
        s.push_str("\nAn answer is flagged when at least one of its K sampled answers contradicts it (AutoHall's OR rule); PRISM scores below 0.5 count as wrong. Precision: of the flagged answers PRISM scored, the share it scored wrong; recall: of the wrong ones, the share flagged.\n");
    }
    s
}

pub(crate) fn json(d: &Detections) -> Value {
    json!({"answers": d.answers, "claims": d.claims})
}

pub(crate) fn html(d: &Detections) -> String {
    format!(
        "<h2>Detection by self-contradiction</h2>\n{}",
        super::tables::html(&tables(d))
    )
}
