//! The text forms of a report: terminal table, CSV, Markdown and JSON.

use serde_json::{Value, json};

use super::{Report, Row, View};
use crate::eval::metrics::DimRate;
use crate::taxonomy::{CATEGORIES, Dimension};

/// `▲+1.2` (the rate went up: worse) or `▼-0.8`; `=` within 0.05.
pub(crate) fn arrow(d: f64) -> String {
    if d.abs() < 0.05 {
        "=0.0".to_string()
    } else if d > 0.0 {
        format!("▲+{d:.1}")
    } else {
        format!("▼{d:.1}")
    }
}

fn row_label(r: &Row) -> String {
    if r.is_reference() {
        format!("{} (ref)", r.name)
    } else {
        r.name.clone()
    }
}

fn cells(rep: &Report, i: usize) -> Vec<String> {
    (0..5)
        .map(|c| {
            let mut s = rep
                .cell(i, View::Dimensions, c)
                .map_or("-".to_string(), |c| c.text());
            if let Some(d) = rep.delta(i, View::Dimensions, c) {
                s.push(' ');
                s.push_str(&arrow(d));
            }
            s
        })
        .collect()
}

/// The terminal table: per model the four rates and the H-Score; `*` partial, `(ref)` reference.
pub(crate) fn table(rep: &Report) -> String {
    let labels: Vec<String> = rep.rows.iter().map(row_label).collect();
    let w = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let all: Vec<Vec<String>> = (0..rep.rows.len()).map(|i| cells(rep, i)).collect();
    let cw = all
        .iter()
        .flatten()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(7)
        .max(7);
    let mut s = format!("{:<w$}", "model");
    for h in ["KE", "KM", "RE", "IFE", "H-Score"] {
        s.push_str(&format!("  {h:>cw$}"));
    }
    s.push('\n');
    for (l, cs) in labels.iter().zip(&all) {
        s.push_str(&format!("{l:<w$}"));
        for c in cs {
            s.push_str(&format!("  {:>cw$}", c));
        }
        s.push('\n');
    }
    if rep
        .rows
        .iter()
        .any(|r| r.dims.iter().flatten().any(|d| !d.complete()))
    {
        s.push_str("* partial: not every task of the dimension is scored (see --format json for coverage)\n");
    }
    if rep.rows.iter().any(|r| r.baseline.is_some()) {
        s.push_str("▲ higher rate than the baseline (worse), ▼ lower (better)\n");
    }
    s
}

fn num(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v:.2}"))
}

/// CSV: one row per model; rates with two decimals, empty when missing; partial dimensions
/// listed; deltas when a baseline is set.
pub(crate) fn csv(rep: &Report) -> String {
    let with_delta = rep.rows.iter().any(|r| r.baseline.is_some());
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec![
        "model", "kind", "KE", "KM", "RE", "IFE", "h_score", "partial",
    ];
    if with_delta {
        header.extend([
            "KE_delta",
            "KM_delta",
            "RE_delta",
            "IFE_delta",
            "h_score_delta",
        ]);
    }
    let _ = w.write_record(&header);
    for (i, r) in rep.rows.iter().enumerate() {
        let kind = match &r.source {
            super::Source::Run { .. } => "run",
            super::Source::File { .. } => "file",
            super::Source::Reference { .. } => "reference",
        };
        let partial: Vec<&str> = Dimension::ALL
            .iter()
            .filter(|d| r.dims[d.index()].is_some_and(|x| !x.complete()))
            .map(|d| d.code())
            .collect();
        let mut rec = vec![csv_cell(&r.name), kind.to_string()];
        rec.extend((0..4).map(|d| num(r.dims[d].map(|x| x.rate))));
        rec.push(num(r.h_score()));
        rec.push(partial.join(";"));
        if with_delta {
            rec.extend((0..5).map(|c| num(rep.delta(i, View::Dimensions, c))));
        }
        let _ = w.write_record(&rec);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// A CSV cell a spreadsheet will not run: text starting with `=`, `+`, `-`, `@`, a tab or a
/// carriage return is prefixed with `'` (OWASP's advice against formula injection); numbers stay
/// numbers.
pub(crate) fn csv_cell(s: &str) -> String {
    let risky = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && s.parse::<f64>().is_err() {
        format!("'{s}")
    } else {
        s.to_string()
    }
}

/// Markdown table text: one line, pipes escaped, and no raw HTML (a name like
/// `<img src=x onerror=...>` is shown, not rendered).
fn md_escape(s: &str) -> String {
    crate::text::clean_line(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
}

/// Markdown: the dimension table, then per-category rates.
pub(crate) fn markdown(rep: &Report) -> String {
    let mut s =
        String::from("| model | KE | KM | RE | IFE | H-Score |\n|---|---:|---:|---:|---:|---:|\n");
    for (i, r) in rep.rows.iter().enumerate() {
        s.push_str(&format!("| {} |", md_escape(&row_label(r))));
        for c in cells(rep, i) {
            s.push_str(&format!(" {c} |"));
        }
        s.push('\n');
    }
    let with_cats: Vec<usize> = (0..rep.rows.len())
        .filter(|&i| rep.rows[i].categories.iter().any(Option::is_some))
        .collect();
    if !with_cats.is_empty() {
        s.push_str("\n| model |");
        for c in CATEGORIES.iter() {
            s.push_str(&format!(" {}-{} |", c.dimension.code(), c.code));
        }
        s.push_str("\n|---|");
        s.push_str(&"---:|".repeat(CATEGORIES.len()));
        s.push('\n');
        for i in with_cats {
            s.push_str(&format!("| {} |", md_escape(&row_label(&rep.rows[i]))));
            for c in 0..CATEGORIES.len() {
                let cell = rep
                    .cell(i, View::Categories, c)
                    .map_or("-".into(), |c| c.text());
                s.push_str(&format!(" {cell} |"));
            }
            s.push('\n');
        }
    }
    s.push_str("\n`*` partial: not every task of the dimension is scored. Rates are hallucination rates in %, lower is better.\n");
    s
}

fn dim_map(f: impl Fn(Dimension) -> Value) -> Value {
    Value::Object(
        Dimension::ALL
            .iter()
            .map(|d| (d.code().to_string(), f(*d)))
            .collect(),
    )
}

/// JSON: per model the task scores, the four rates (null when partial, with coverage), the
/// H-Score, category rates, deltas and worst sub-tasks; the Spearman matrix; the metadata.
pub(crate) fn json(rep: &Report) -> Value {
    let models: Vec<Value> = rep
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let complete =
                |d: Dimension| r.dims[d.index()].filter(DimRate::complete).map(|x| x.rate);
            let categories: serde_json::Map<String, Value> = CATEGORIES
                .iter()
                .zip(&r.categories)
                .filter_map(|(c, v)| {
                    let v = v.as_ref()?;
                    Some((
                        format!("{}-{}", c.dimension.code(), c.code),
                        json!({"rate": v.rate, "tasks": v.tasks, "of": v.of}),
                    ))
                })
                .collect();
            let delta = r.baseline.as_ref().map(|b| {
                let mut m = serde_json::Map::new();
                for (c, name) in ["KE", "KM", "RE", "IFE", "h_score"].iter().enumerate() {
                    m.insert(name.to_string(), rep.delta(i, View::Dimensions, c).into());
                }
                m.insert("baseline".into(), b.name.clone().into());
                Value::Object(m)
            });
            json!({
                "model": r.name,
                "source": r.source,
                "reference": r.is_reference(),
                "task_scores": r.task_scores,
                "dimension_hallucination_rates": dim_map(|d| complete(d).into()),
                "coverage": dim_map(|d| match r.dims[d.index()] {
                    Some(x) => json!({"tasks": x.tasks, "of": x.of, "rate": x.rate}),
                    None => Value::Null,
                }),
                "h_score": r.h_score(),
                "category_hallucination_rates": categories,
                "baseline_delta": delta,
                "worst_subtasks": r.worst,
            })
        })
        .collect();
    let corr = rep.correlations();
    json!({
        "meta": rep.meta,
        "models": models,
        "dimension_correlations": dim_map(|a| dim_map(|b| corr[a.index()][b.index()].into())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Meta, Row, Source};

    fn row(name: &str) -> Row {
        Row {
            name: name.into(),
            source: Source::Run { run_id: "r".into() },
            dims: [None; 4],
            categories: vec![None; 15],
            task_scores: Default::default(),
            worst: Vec::new(),
            baseline: None,
            pending: Default::default(),
        }
    }

    #[test]
    fn csv_cells_never_run_as_formulas() {
        let rep = Report::new(
            [
                "=HYPERLINK(\"http://x\")",
                "+1+1",
                "-2+3",
                "@SUM(A1)",
                "\tx",
                "ok",
                "-12.5",
            ]
            .into_iter()
            .map(row)
            .collect(),
            Meta::default(),
        );
        let out = csv(&rep);
        let names: Vec<String> = out
            .lines()
            .skip(1)
            .map(|l| {
                let mut r = ::csv::ReaderBuilder::new()
                    .has_headers(false)
                    .from_reader(l.as_bytes());
                r.records().next().unwrap().unwrap()[0].to_string()
            })
            .collect();
        assert_eq!(
            names,
            vec![
                "'=HYPERLINK(\"http://x\")",
                "'+1+1",
                "'-2+3",
                "'@SUM(A1)",
                "'\tx",
                "ok",
                "-12.5"
            ]
        );
    }

    #[test]
    fn markdown_shows_html_in_names_instead_of_rendering_it() {
        let rep = Report::new(
            vec![row("<img src=x onerror=alert(1)> | a\nb")],
            Meta::default(),
        );
        let md = markdown(&rep);
        assert!(
            md.contains("&lt;img src=x onerror=alert(1)&gt; \\| a b"),
            "{md}"
        );
        assert!(!md.contains("<img"));
    }
}
