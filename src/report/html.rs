//! The HTML report: one self-contained file (inline CSS and SVG, no script, no network), with
//! the heatmap in the theme's colours, per-category and per-sub-task tables, the Spearman matrix,
//! the run's metadata and each model's worst sub-tasks with an example failure. Every piece of
//! text from a model or a file is escaped.

use std::fmt::Write;

use ratatui::style::Color;

use super::render::arrow;
use super::{Report, View};
use crate::taxonomy::{CATEGORIES, Dimension};
use crate::theme::Theme;

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters from model output are dropped (they cannot be shown).
            c if c.is_control() && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

/// The cell colour for a rate as `#rrggbb`, and the text colour that reads on it.
fn colours(theme: &Theme, rate: f64) -> (String, &'static str) {
    let bg = theme.heat(rate);
    let hex = match bg {
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        _ => "#888888".into(),
    };
    let ink = match crate::theme::ink_on(bg) {
        Color::Black => "#111",
        _ => "#fff",
    };
    (hex, ink)
}

fn heat_cell(theme: &Theme, rep: &Report, row: usize, view: View, col: usize) -> String {
    match rep.cell(row, view, col) {
        Some(c) => {
            let (bg, ink) = colours(theme, c.value);
            let delta = rep
                .delta(row, view, col)
                .map(|d| format!(" <small>{}</small>", arrow(d)))
                .unwrap_or_default();
            let title = if c.partial {
                format!(" title=\"partial: {} of {} tasks\"", c.tasks, c.of)
            } else {
                String::new()
            };
            format!(
                "<td class=\"heat\" style=\"background:{bg};color:{}\"{title}>{}{delta}</td>",
                ink,
                c.text()
            )
        }
        None => "<td class=\"none\">-</td>".into(),
    }
}

fn svg_heatmap(theme: &Theme, rep: &Report) -> String {
    let cols = rep.columns(View::Dimensions);
    let label_w = 12
        + 8 * rep
            .rows
            .iter()
            .map(|r| r.name.chars().count() + 6)
            .max()
            .unwrap_or(10)
            .min(40);
    let (cw, ch) = (92, 30);
    let w = label_w + cw * cols.len() + 10;
    let h = 34 + ch * rep.rows.len() + 10;
    let mut s = format!(
        "<svg id=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"hallucination rate heatmap\" font-family=\"sans-serif\" font-size=\"13\">"
    );
    for (j, c) in cols.iter().enumerate() {
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>",
            label_w + cw * j + cw / 2,
            esc(c)
        );
    }
    for (i, r) in rep.rows.iter().enumerate() {
        let y = 34 + ch * i;
        let label = if r.is_reference() {
            format!("{} (ref)", r.name)
        } else {
            r.name.clone()
        };
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\"{}>{}</text>",
            label_w - 8,
            y + 20,
            if r.is_reference() {
                " font-style=\"italic\""
            } else {
                ""
            },
            esc(&label)
        );
        for (j, col) in cols.iter().enumerate() {
            let x = label_w + cw * j;
            match rep.cell(i, View::Dimensions, j) {
                Some(c) => {
                    let (bg, ink) = colours(theme, c.value);
                    let delta = rep
                        .delta(i, View::Dimensions, j)
                        .map(|d| format!(" {}", arrow(d)))
                        .unwrap_or_default();
                    let _ = write!(
                        s,
                        "<g class=\"cell\" data-model=\"{}\" data-col=\"{}\" data-value=\"{:.2}\"><rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"{bg}\" rx=\"3\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\">{}{}</text></g>",
                        esc(&r.name),
                        esc(col),
                        c.value,
                        cw - 2,
                        ch - 2,
                        x + cw / 2,
                        y + 19,
                        ink,
                        c.text(),
                        esc(&delta)
                    );
                }
                None => {
                    let _ = write!(
                        s,
                        "<g class=\"cell empty\" data-model=\"{}\" data-col=\"{}\"><rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"#eee\" rx=\"3\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#777\">-</text></g>",
                        esc(&r.name),
                        esc(col),
                        cw - 2,
                        ch - 2,
                        x + cw / 2,
                        y + 19
                    );
                }
            }
        }
    }
    s.push_str("</svg>");
    s
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2rem;color:#222;max-width:1400px}
h1{margin-bottom:.2rem}h2{margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px;margin:.5rem 0}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:right}th{background:#f4f4f4}
td.name,th.name{text-align:left}td.none{color:#999}
.meta td{text-align:left}.scroll{overflow-x:auto}
pre{white-space:pre-wrap;background:#f7f7f7;padding:.5rem;border-radius:4px;font-size:12px;max-height:14rem;overflow:auto}
small{opacity:.85}.ref{font-style:italic}";

/// The whole report as one HTML document, its heatmap in `theme`'s gradient.
pub fn html(rep: &Report, theme: &Theme) -> String {
    let mut s = String::with_capacity(64 * 1024);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>prism report</title><style>{STYLE}</style></head><body>\n<h1>prism report</h1>\n<p>Hallucination rates in % (lower is better) per PRISM dimension, and the H-Score (their mean). <code>*</code> marks a partial rate (not every task of the dimension scored); <i>(ref)</i> rows are published figures.</p>\n"
    );
    meta_table(&mut s, &rep.meta);
    s.push_str("<h2>Heatmap</h2>\n");
    s.push_str(&svg_heatmap(theme, rep));

    categories_table(&mut s, rep, theme);
    subtasks_table(&mut s, rep, theme);
    spearman_table(&mut s, rep);
    worst_subtasks(&mut s, rep);
    s.push_str("\n</body></html>\n");
    s
}

/// The run the report comes from: ids, dataset, date, judges, settings, models.
fn meta_table(s: &mut String, m: &crate::report::Meta) {
    s.push_str("<h2>Run</h2><table class=\"meta\">");
    let mut meta_row = |k: &str, v: &str| {
        let _ = write!(s, "<tr><th class=\"name\">{k}</th><td>{}</td></tr>", esc(v));
    };
    if let Some(id) = &m.run {
        meta_row(
            "run",
            &match &m.run_name {
                Some(n) => format!("{id} \"{n}\""),
                None => id.clone(),
            },
        );
    }
    meta_row("dataset", m.dataset.as_deref().unwrap_or("-"));
    meta_row("date", m.date.as_deref().unwrap_or("-"));
    meta_row(
        "judge",
        &if m.judges.is_empty() {
            "none".to_string()
        } else {
            m.judges.join(", ")
        },
    );
    if let Some(n) = m.samples {
        meta_row("samples", &n.to_string());
    }
    if let Some(n) = m.shots {
        meta_row("shots", &n.to_string());
    }
    if let Some(s) = &m.run_settings {
        meta_row("run settings", s);
    }
    for (name, desc) in &m.models {
        meta_row(&format!("model {}", esc(name)), desc);
    }
    meta_row("prism", &m.prism_version);
    s.push_str("</table>\n");
}

/// Per model, the rate of each of the 15 categories (published rows have none).
fn categories_table(s: &mut String, rep: &Report, theme: &Theme) {
    s.push_str("\n<h2>Categories</h2><div class=\"scroll\"><table id=\"categories\"><tr><th class=\"name\">model</th>");
    for c in CATEGORIES.iter() {
        let _ = write!(
            s,
            "<th title=\"{}\">{}-{}</th>",
            esc(c.name),
            c.dimension.code(),
            c.code
        );
    }
    s.push_str("</tr>");
    for (i, r) in rep.rows.iter().enumerate() {
        // Published rows have only the four rates.
        if r.categories.iter().all(Option::is_none) {
            continue;
        }
        let _ = write!(s, "<tr><td class=\"name\">{}</td>", esc(&r.name));
        for c in 0..CATEGORIES.len() {
            s.push_str(&heat_cell(theme, rep, i, View::Categories, c));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table></div>\n");
}

/// Sub-tasks: one row per task, one column per model.
fn subtasks_table(s: &mut String, rep: &Report, theme: &Theme) {
    let with_tasks: Vec<usize> = (0..rep.rows.len())
        .filter(|&i| !rep.rows[i].task_scores.is_empty())
        .collect();
    if !rep.tasks.is_empty() {
        s.push_str("<h2>Sub-tasks</h2><div class=\"scroll\"><table id=\"subtasks\"><tr><th class=\"name\">sub-task</th>");
        for &i in &with_tasks {
            let _ = write!(s, "<th>{}</th>", esc(&rep.rows[i].name));
        }
        s.push_str("</tr>");
        for (t, task) in rep.tasks.iter().enumerate() {
            let _ = write!(s, "<tr><td class=\"name\">{}</td>", esc(task));
            for &i in &with_tasks {
                s.push_str(&heat_cell(theme, rep, i, View::Tasks, t));
            }
            s.push_str("</tr>");
        }
        s.push_str("</table></div>\n");
    }
}

/// Spearman correlation between the dimensions, and why a cell is empty.
fn spearman_table(s: &mut String, rep: &Report) {
    let corr = rep.correlations();
    s.push_str("<h2>Rank correlation between dimensions</h2><p>Spearman correlation of the models' rankings (rows with complete rates).</p><table id=\"spearman\"><tr><th></th>");
    for d in Dimension::ALL {
        let _ = write!(s, "<th>{d}</th>");
    }
    s.push_str("</tr>");
    for (i, a) in Dimension::ALL.iter().enumerate() {
        let _ = write!(s, "<tr><th>{a}</th>");
        for v in corr[i] {
            match v {
                Some(v) => {
                    let _ = write!(s, "<td>{v:.2}</td>");
                }
                None => s.push_str("<td class=\"none\">-</td>"),
            }
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>\n");
    if corr.iter().flatten().any(Option::is_none) {
        // Say why a cell is empty instead of leaving a table of dashes.
        let complete: Vec<String> = Dimension::ALL
            .iter()
            .map(|d| {
                let n = rep
                    .rows
                    .iter()
                    .filter(|r| r.dims[d.index()].is_some_and(|x| x.complete()))
                    .count();
                format!("{d} {n}")
            })
            .collect();
        let _ = writeln!(
            s,
            "<p class=\"note\">- : fewer than three models have complete rates in both \
             dimensions, and a rank correlation needs three. {} rows; models with complete \
             rates per dimension: {}.</p>",
            rep.rows.len(),
            complete.join(", ")
        );
    }
}

/// Each model's worst sub-tasks, with an example answer.
fn worst_subtasks(s: &mut String, rep: &Report) {
    if rep.rows.iter().any(|r| !r.worst.is_empty()) {
        s.push_str("<h2>Worst sub-tasks</h2>");
        for r in rep.rows.iter().filter(|r| !r.worst.is_empty()) {
            let _ = write!(s, "<h3>{}</h3><ol>", esc(&r.name));
            for w in &r.worst {
                let _ = write!(s, "<li><b>{}</b>: {:.1}%", esc(&w.task), w.rate);
                if let Some(e) = &w.example {
                    let _ = write!(
                        s,
                        "<br>e.g. <code>{}</code> scored {:.2}: {}<pre>{}</pre><pre>{}</pre>",
                        esc(&e.item_id),
                        e.score,
                        esc(&e.detail),
                        esc(&e.question),
                        esc(&e.answer)
                    );
                }
                s.push_str("</li>");
            }
            s.push_str("</ol>");
        }
    }
}

/// The comparison under each judge alone: where the sign changes, the judge decides.
fn judges_table(s: &mut String, j: &crate::eval::compare::JudgeSensitivity) {
    s.push_str("<h2>Under each judge alone</h2>\n<p>B − A with each judge's verdicts in place of the judged scores (items on both sides in parentheses): where the sign changes, the judge, not the models, decides the ranking.</p>\n<table id=\"compare-judges\"><tr><th class=\"name\"></th><th>stored</th>");
    for (name, n) in j.judges.iter().zip(&j.paired) {
        let _ = write!(s, "<th>{} ({n})</th>", esc(name));
    }
    s.push_str("<th class=\"name\"></th></tr>\n");
    let signed = |v: Option<f64>| v.map_or("-".into(), |d| format!("{d:+.2}"));
    for r in &j.rows {
        let _ = write!(
            s,
            "<tr><td class=\"name\">{}</td><td>{}</td>",
            esc(&r.name),
            signed(r.stored)
        );
        for u in &r.under {
            let _ = write!(s, "<td>{}</td>", signed(*u));
        }
        let _ = writeln!(s, "<td class=\"name\">{}</td></tr>", r.words());
    }
    s.push_str("</table>\n");
}

/// `prism compare --format html`: the comparison as one self-contained page (no script, no
/// network): both sides with their runs' names and model settings (`about`), the table with
/// the differences beyond noise marked, and the flipped items with both sides' answers side by
/// side (`answers`, in the order of `c.flips`; repeats grouped with their counts). Every text
/// from a model, a file or a user is escaped.
pub fn comparison(
    c: &crate::eval::compare::Comparison,
    about: &[String; 2],
    answers: &[crate::eval::compare::PairAnswers],
) -> String {
    use crate::eval::compare::{Level, answer_groups};
    let mut s = String::with_capacity(32 * 1024);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>prism compare</title><style>{STYLE}\ntr.sig td{{font-weight:600}}td.better{{color:#1a7f37}}td.worse{{color:#b42318}}.pair{{display:grid;grid-template-columns:1fr 1fr;gap:1rem}}</style></head><body>\n<h1>prism compare</h1>\n"
    );
    s.push_str("<table class=\"meta\">");
    for (k, label) in [&c.a, &c.b].iter().enumerate() {
        let _ = write!(
            s,
            "<tr><th>{}</th><td>{}</td><td>{}</td></tr>",
            ["A", "B"][k],
            esc(label),
            esc(&about[k])
        );
    }
    s.push_str("</table>\n");
    let _ = writeln!(
        s,
        "<p>{} items scored on both ({} left out). Rates in % (lower is better); B − A in rate points (negative: B hallucinates less); 95% paired bootstrap interval ({} resamples, seed {}); McNemar's exact p on items right/wrong (score ≥ 0.5). <b>Bold</b>: more than noise (the interval leaves 0 out and p &lt; 0.05).</p>",
        c.paired, c.unpaired, c.resamples, c.seed
    );
    let repeats = c.rows.iter().any(|r| !r.split_text().is_empty());
    s.push_str("<table><tr><th class=\"name\"></th><th>items</th><th>A</th><th>B</th><th>B − A</th><th>95% interval</th><th>A+</th><th>B+</th><th>p</th>");
    if repeats {
        s.push_str("<th title=\"share of items whose samples disagree\">split A / B</th>");
    }
    s.push_str("</tr>\n");
    let num = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2}"));
    for r in &c.rows {
        let indent = if r.level == Level::Task {
            "&nbsp;&nbsp;"
        } else {
            ""
        };
        let class = match (r.significant(), r.diff) {
            (true, Some(d)) if d < 0.0 => "better",
            (true, Some(_)) => "worse",
            _ => "",
        };
        let _ = write!(
            s,
            "<tr{}><td class=\"name\">{indent}{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{class}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            if r.significant() {
                " class=\"sig\""
            } else {
                ""
            },
            esc(&r.name),
            r.items,
            num(r.rate_a),
            num(r.rate_b),
            r.diff.map_or("-".into(), |d| format!("{d:+.2}")),
            esc(&r.ci_text()),
            r.mcnemar.a_only,
            r.mcnemar.b_only,
            esc(&r.p_text())
        );
        if repeats {
            let _ = write!(s, "<td>{}</td>", esc(&r.split_text()));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    if let Some(j) = &c.judges {
        judges_table(&mut s, j);
    }
    let fixed = c.flips.iter().filter(|f| f.fixed).count();
    let _ = writeln!(
        s,
        "<h2>Flipped items: {fixed} fixed, {} broken</h2>",
        c.flips.len() - fixed
    );
    for (i, f) in c.flips.iter().enumerate() {
        let _ = writeln!(
            s,
            "<h3>{} <code>{}</code> <small>{} · A {:.2} → B {:.2}</small></h3>",
            if f.fixed { "fixed" } else { "broken" },
            esc(&f.item_id),
            esc(&f.task_id),
            f.score_a,
            f.score_b
        );
        let Some(p) = answers.get(i).filter(|p| p.item_id == f.item_id) else {
            continue;
        };
        s.push_str("<div class=\"pair\">");
        for (k, side) in p.sides.iter().enumerate() {
            let _ = write!(s, "<div><b>{}</b>", ["A", "B"][k]);
            if side.len() > 1 {
                s.push_str("<ul>");
                for (n, text, _) in answer_groups(side) {
                    let _ = write!(s, "<li>{n}× {}</li>", esc(&crate::text::one_line(&text)));
                }
                s.push_str("</ul>");
            }
            match side.first() {
                Some(a) => {
                    let _ = write!(
                        s,
                        "<pre>{}</pre><small>{}{}</small>",
                        esc(&a.text),
                        a.score
                            .map_or("unscored".into(), |x| format!("score {x:.2}")),
                        if a.detail.is_empty() {
                            String::new()
                        } else {
                            format!(" · {}", esc(&a.detail))
                        }
                    );
                }
                None => s.push_str("<p><i>no answer stored</i></p>"),
            }
            s.push_str("</div>");
        }
        s.push_str("</div>\n");
    }
    s.push_str("</body></html>\n");
    s
}
