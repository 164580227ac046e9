//! The detection tables of a report: for stored answers, the share flagged by self-contradiction
//! and how far that flag agrees with PRISM's verdict (per model and dimension); for claims,
//! AutoHall's collection (#N, #H, H%) and its detection metrics on the balanced set. Rendered in
//! every report format.

use std::fmt::Write as _;

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

/// A table as strings: title, header, rows.
type Table = (String, Vec<&'static str>, Vec<Vec<String>>);

/// The rows of each table, as strings. Every format is made from these.
fn tables(d: &Detections) -> Vec<Table> {
    let mut out = Vec::new();
    if !d.answers.is_empty() {
        out.push((
            "Self-contradiction flags on stored answers, against PRISM's verdict".to_string(),
            vec![
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
            d.answers
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
        ));
    }
    for c in &d.claims {
        out.push((
            format!("AutoHall collection: {} ({})", c.dataset, c.detect_id),
            vec![
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
            c.tables
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
        ));
        out.push((
            format!(
                "AutoHall detection on the balanced set (K = {}, seed {}), hallucination positive: {} ({})",
                c.tables.k, c.tables.seed, c.dataset, c.detect_id
            ),
            vec![
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
            c.tables
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
        ));
    }
    out
}

/// For the terminal.
pub fn table(d: &Detections) -> String {
    let mut s = String::new();
    for (title, header, rows) in tables(d) {
        let widths: Vec<usize> = (0..header.len())
            .map(|i| {
                rows.iter()
                    .map(|r| r[i].chars().count())
                    .chain([header[i].chars().count()])
                    .max()
                    .unwrap_or(1)
            })
            .collect();
        let _ = writeln!(s, "\n{title}");
        let line = |cells: Vec<String>| {
            cells
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (c, w))| {
                    if i == 0 {
                        format!("{c:<w$}")
                    } else {
                        format!("{c:>w$}")
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
        };
        let _ = writeln!(
            s,
            "{}",
            line(header.iter().map(|h| h.to_string()).collect())
        );
        for r in rows {
            let _ = writeln!(s, "{}", line(r));
        }
    }
    s
}

/// CSV: each table after a blank line, its first column naming it (`table`), so one file holds
/// them all and a reader can split on that column.
pub fn csv(d: &Detections) -> String {
    let mut out = String::new();
    for (i, (title, header, rows)) in tables(d).into_iter().enumerate() {
        let name = match title.split(':').next().unwrap_or("") {
            t if t.starts_with("Self") => "flags",
            t if t.starts_with("AutoHall collection") => "autohall_collection",
            _ => "autohall_detection",
        };
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut h = vec!["table"];
        h.extend(header);
        let _ = w.write_record(&h);
        for r in rows {
            let mut rec = vec![name.to_string()];
            rec.extend(r.iter().map(|c| super::render::csv_cell(c)));
            let _ = w.write_record(&rec);
        }
        if i > 0 || !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default());
    }
    out
}

fn md_escape(s: &str) -> String {
    crate::text::clean_line(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
}

pub fn markdown(d: &Detections) -> String {
    let mut s = String::new();
    for (title, header, rows) in tables(d) {
        let _ = writeln!(s, "\n### {}\n", md_escape(&title));
        let _ = writeln!(s, "| {} |", header.join(" | "));
        let _ = writeln!(
            s,
            "|{}",
            header
                .iter()
                .enumerate()
                .map(|(i, _)| if i == 0 { "---|" } else { "---:|" })
                .collect::<String>()
        );
        for r in rows {
            let _ = writeln!(
                s,
                "| {} |",
                r.iter()
                    .map(|c| md_escape(c))
                    .collect::<Vec<_>>()
                    .join(" | ")
            );
        }
    }
    if !d.answers.is_empty() {
        s.push_str("\nAn answer is flagged when at least one of its K sampled answers contradicts it (AutoHall's OR rule); PRISM scores below 0.5 count as wrong. Precision: of the flagged answers PRISM scored, the share it scored wrong; recall: of the wrong ones, the share flagged.\n");
    }
    s
}

pub fn json(d: &Detections) -> Value {
    json!({"answers": d.answers, "claims": d.claims})
}

pub fn html(d: &Detections) -> String {
    let esc = super::html::esc;
    let mut s = String::from("<h2>Detection by self-contradiction</h2>\n");
    for (title, header, rows) in tables(d) {
        let _ = write!(
            s,
            "<h3>{}</h3><div class=\"scroll\"><table class=\"detection\"><tr>",
            esc(&title)
        );
        for h in &header {
            let _ = write!(s, "<th>{}</th>", esc(h));
        }
        s.push_str("</tr>");
        for r in rows {
            s.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                if i == 0 {
                    let _ = write!(s, "<td class=\"name\">{}</td>", esc(c));
                } else {
                    let _ = write!(s, "<td>{}</td>", esc(c));
                }
            }
            s.push_str("</tr>");
        }
        s.push_str("</table></div>\n");
    }
    s
}
