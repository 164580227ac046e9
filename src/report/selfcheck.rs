//! The self-detection tables of a report: per generator and detector, recall, precision, F1
//! and accuracy directly and with chain-of-thought (unclean replies counted as detected, and
//! how many), recall per relation, and the recall/popularity correlation.

use serde::Serialize;
use serde_json::{Value, json};

use super::tables::Table;
use crate::selfcheck::results::Row;

/// One self-detection run's rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    pub run_id: String,
    pub dataset: String,
    pub rows: Vec<Row>,
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.1}"))
}

fn num(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.3}"))
}

pub(crate) fn tables(sections: &[Section]) -> Vec<Table> {
    let mut out = Vec::new();
    for s in sections {
        out.push(scores_table(s));
        out.push(clean_only_table(s));
        out.push(relations_table(s));
        out.extend(popularity_table(s));
    }
    out
}

fn scores_table(s: &Section) -> Table {
    Table {
        id: "selfcheck",
        title: format!(
            "Self-detection: {} ({}); false sentences positive, unclean replies count as detected",
            s.dataset, s.run_id
        ),
        header: vec![
            "generator",
            "detector",
            "items",
            "set aside",
            "R %",
            "P %",
            "F1 %",
            "A %",
            "unclean",
            "R CoT %",
            "P CoT %",
            "F1 CoT %",
            "A CoT %",
            "unclean CoT",
        ],
        rows: s
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.generator.clone(),
                    r.detector.clone(),
                    r.items.to_string(),
                    r.set_aside.to_string(),
                    pct(r.direct.scores.recall),
                    pct(r.direct.scores.precision),
                    pct(r.direct.scores.f1),
                    pct(r.direct.scores.accuracy),
                    r.direct.unparsed.to_string(),
                    pct(r.cot.scores.recall),
                    pct(r.cot.scores.precision),
                    pct(r.cot.scores.f1),
                    pct(r.cot.scores.accuracy),
                    r.cot.unparsed.to_string(),
                ]
            })
            .collect(),
    }
}

/// METHODS counts an unclean reply as detected; a small model's CoT replies are often all
/// unclean, which makes its row all "detected". The same numbers without them.
fn clean_only_table(s: &Section) -> Table {
    Table {
        id: "selfcheck_clean_only",
        title: format!(
            "Self-detection over clean replies only (unclean left out, not counted as detected) ({})",
            s.run_id
        ),
        header: vec![
            "generator",
            "detector",
            "mode",
            "unclean",
            "R %",
            "P %",
            "F1 %",
            "A %",
        ],
        rows: s
            .rows
            .iter()
            .flat_map(|r| {
                [("direct", &r.direct), ("CoT", &r.cot)].map(|(mode, m)| {
                    vec![
                        r.generator.clone(),
                        r.detector.clone(),
                        mode.to_string(),
                        m.unparsed.to_string(),
                        pct(m.parsed_only.recall),
                        pct(m.parsed_only.precision),
                        pct(m.parsed_only.f1),
                        pct(m.parsed_only.accuracy),
                    ]
                })
            })
            .collect(),
    }
}

fn relations_table(s: &Section) -> Table {
    Table {
        id: "selfcheck_relations",
        title: format!("Self-detection recall per relation ({})", s.run_id),
        header: vec![
            "generator",
            "detector",
            "relation",
            "false sentences",
            "R %",
            "R CoT %",
        ],
        rows: s
            .rows
            .iter()
            .flat_map(|r| {
                r.relations.iter().map(move |x| {
                    vec![
                        r.generator.clone(),
                        r.detector.clone(),
                        x.relation.clone(),
                        x.n.to_string(),
                        pct(x.direct),
                        pct(x.cot),
                    ]
                })
            })
            .collect(),
    }
}

fn popularity_table(s: &Section) -> Option<Table> {
    let pop: Vec<Vec<String>> = s
        .rows
        .iter()
        .filter_map(|r| {
            let p = r.popularity.as_ref()?;
            Some(vec![
                r.generator.clone(),
                r.detector.clone(),
                p.bins.to_string(),
                num(p.rho_direct),
                num(p.p_direct),
                num(p.rho_cot),
                num(p.p_cot),
            ])
        })
        .collect();
    (!pop.is_empty()).then(|| Table {
        id: "selfcheck_popularity",
        title: format!(
            "Self-detection recall against popularity, Spearman over equal-size bins ({})",
            s.run_id
        ),
        header: vec![
            "generator",
            "detector",
            "bins",
            "rho",
            "p",
            "rho CoT",
            "p CoT",
        ],
        rows: pop,
    })
}

pub(crate) fn json(sections: &[Section]) -> Value {
    json!(sections)
}
