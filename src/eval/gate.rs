//! The regression gate (`prism gate`): is a candidate worse than a baseline beyond noise? A
//! comparison's rows (the H-Score, each dimension, and each sub-task when asked) are tested; a
//! row fails when its candidate rate is higher, the paired bootstrap 95% interval of the
//! difference lies entirely on the worse side, McNemar's exact p stays below `alpha` after a
//! Holm correction over every row tested, and (when asked) the increase is above a practical
//! threshold. Both tests are asked for the reasons [`Row::significant`] gives.

use super::compare::{Comparison, Flip, Level, Row};

/// One row tested.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GateRow {
    pub level: Level,
    pub name: String,
    pub items: usize,
    pub rate_baseline: Option<f64>,
    pub rate_candidate: Option<f64>,
    /// Candidate − baseline, in rate points (positive: more hallucination).
    pub diff: Option<f64>,
    pub ci: Option<(f64, f64)>,
    pub p: f64,
    /// McNemar's p after Holm's correction over the rows tested.
    pub p_holm: f64,
    pub failed: bool,
    /// Why it failed, or why it passed, in a sentence.
    pub verdict: String,
    /// Shown, never failing: its scores stand on a judge without a current calibration above
    /// the floor (which, and why). `failed` is then false; `would_fail` says what it showed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advisory: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub would_fail: bool,
}

/// A gate's outcome.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Gate {
    pub baseline: String,
    pub candidate: String,
    pub alpha: f64,
    pub max_increase: Option<f64>,
    pub paired: usize,
    pub unpaired: usize,
    pub resamples: usize,
    pub seed: u64,
    pub rows: Vec<GateRow>,
    /// Items right on the baseline and wrong on the candidate.
    pub broken: Vec<Flip>,
    pub failed: bool,
}

/// Holm's step-down adjustment: the i-th smallest p times (m − i), made monotone, at most 1;
/// returned in the order given.
pub fn holm(ps: &[f64]) -> Vec<f64> {
    let m = ps.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| ps[a].total_cmp(&ps[b]));
    let mut out = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        let adj = ((m - rank) as f64 * ps[i]).min(1.0);
        running = running.max(adj);
        out[i] = running;
    }
    out
}

/// The gate over comparison `c` (its A the baseline, its B the candidate).
pub fn gate(c: &Comparison, alpha: f64, max_increase: Option<f64>, by_task: bool) -> Gate {
    let tested: Vec<&Row> = c
        .rows
        .iter()
        .filter(|r| by_task || r.level != Level::Task)
        // A row no item of either side falls under is not tested (nor counted by Holm).
        .filter(|r| r.items > 0)
        .collect();
    let ps: Vec<f64> = tested.iter().map(|r| r.mcnemar.p).collect();
    let adjusted = holm(&ps);
    let rows: Vec<GateRow> = tested
        .iter()
        .zip(adjusted)
        .map(|(r, p_holm)| {
            let (failed, verdict) = judge(r, p_holm, alpha, max_increase);
            GateRow {
                level: r.level,
                name: r.name.clone(),
                items: r.items,
                rate_baseline: r.rate_a,
                rate_candidate: r.rate_b,
                diff: r.diff,
                ci: r.ci,
                p: r.mcnemar.p,
                p_holm,
                failed,
                verdict,
                advisory: None,
                would_fail: false,
            }
        })
        .collect();
    Gate {
        baseline: c.a.clone(),
        candidate: c.b.clone(),
        alpha,
        max_increase,
        paired: c.paired,
        unpaired: c.unpaired,
        resamples: c.resamples,
        seed: c.seed,
        failed: rows.iter().any(|r| r.failed),
        rows,
        broken: c.flips.iter().filter(|f| !f.fixed).cloned().collect(),
    }
}

/// Makes advisory the rows `why` names a reason for (their verdicts stand on a judge not to be
/// trusted): shown with their numbers, never failing; the gate fails on the others only.
pub fn advise(g: &mut Gate, why: impl Fn(&GateRow) -> Option<String>) {
    for r in &mut g.rows {
        if let Some(reason) = why(r) {
            r.would_fail = r.failed;
            r.failed = false;
            r.advisory = Some(reason);
        }
    }
    g.failed = g.rows.iter().any(|r| r.failed);
}

fn judge(r: &Row, p_holm: f64, alpha: f64, max_increase: Option<f64>) -> (bool, String) {
    let Some(diff) = r.diff else {
        return (false, "no rate on one side".into());
    };
    if diff <= 0.0 {
        return (false, format!("not worse ({diff:+.2})"));
    }
    let Some((lo, hi)) = r.ci else {
        return (false, "no interval".into());
    };
    if lo <= 0.0 {
        return (
            false,
            format!(
                "worse by {diff:.2} but within noise: the interval [{lo:+.2}, {hi:+.2}] holds 0"
            ),
        );
    }
    if p_holm >= alpha {
        return (
            false,
            format!("worse by {diff:.2}, but McNemar's p {p_holm:.4} (Holm) is not below {alpha}"),
        );
    }
    if let Some(m) = max_increase
        && diff <= m
    {
        return (
            false,
            format!("worse by {diff:.2} beyond noise, within the allowed {m:.2} points"),
        );
    }
    (
        true,
        format!(
            "worse by {diff:.2} points beyond noise: interval [{lo:+.2}, {hi:+.2}], McNemar's p {p_holm:.4} (Holm)"
        ),
    )
}

fn rate(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.2}"))
}

fn ci_text(ci: Option<(f64, f64)>) -> String {
    ci.map_or("-".into(), |(lo, hi)| format!("[{lo:+.2}, {hi:+.2}]"))
}

/// `s` as a Markdown code span that renders as the text it is, whatever it holds: fenced by
/// one backtick more than its longest run of backticks, padded with a space where it starts or
/// ends with one, on one line, with `|` escaped (GitHub's tables split cells on it even inside
/// a code span). A model's name or a run's label comes from a models file, a baseline file or
/// a shared store: written plainly, ``d` **[PASSED](http://...)**`` renders as a bold link.
pub(crate) fn code_span(s: &str) -> String {
    let s = crate::text::one_line(s);
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') || s.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{}{pad}{fence}", s.replace('|', "\\|"))
}

/// The gate as Markdown (a CI job's summary page): the outcome first, then every row tested,
/// then the items broken. Every name in it is a code span ([`code_span`]); the rest is ours.
pub fn markdown(g: &Gate, flips: usize) -> String {
    let esc = |s: &str| crate::text::one_line(s).replace('|', "\\|");
    let mut s = format!(
        "## prism gate: {}\n\n{} (baseline) against {} (candidate): {} items on both, {} left out; \
         a row fails when the candidate is worse beyond noise (bootstrap 95% interval above 0, \
         {} resamples, seed {}, and McNemar's exact p below {} after Holm over {} rows){}.\n\n",
        if g.failed { "FAILED ❌" } else { "passed ✅" },
        code_span(&g.baseline),
        code_span(&g.candidate),
        g.paired,
        g.unpaired,
        g.resamples,
        g.seed,
        g.alpha,
        g.rows.len(),
        g.max_increase.map_or(String::new(), |m| format!(
            " and by more than {m:.2} points"
        ))
    );
    s.push_str(
        "| | row | items | baseline | candidate | Δ | 95% interval | p (Holm) | verdict |\n",
    );
    s.push_str("|---|---|---:|---:|---:|---:|---|---:|---|\n");
    for r in &g.rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.4} | {} |\n",
            match (&r.advisory, r.failed) {
                (Some(_), _) if r.would_fail => "⚠️ advisory (would fail)",
                (Some(_), _) => "⚠️ advisory",
                (None, true) => "❌",
                (None, false) => "✅",
            },
            code_span(&r.name),
            r.items,
            rate(r.rate_baseline),
            rate(r.rate_candidate),
            r.diff.map_or("-".into(), |d| format!("{d:+.2}")),
            ci_text(r.ci),
            r.p_holm,
            match &r.advisory {
                // The reason names judges (a store's text): a code span, like every name.
                Some(a) => format!("{} (advisory: {})", esc(&r.verdict), code_span(a)),
                None => esc(&r.verdict),
            }
        ));
    }
    let advisory: Vec<&GateRow> = g.rows.iter().filter(|r| r.advisory.is_some()).collect();
    if !advisory.is_empty() {
        s.push_str(&format!(
            "
**{} advisory rows**: their scores stand on a judge without a current calibration above the floor, so they are shown and never fail the gate (`--trust-uncalibrated-judges` counts them).
",
            advisory.len()
        ));
    }
    if !g.broken.is_empty() {
        s.push_str(&format!(
            "\n**{} items broken** (right on the baseline, wrong on the candidate):\n\n",
            g.broken.len()
        ));
        for f in g.broken.iter().take(flips) {
            s.push_str(&format!(
                "- {} ({}): {:.2} → {:.2}\n",
                code_span(&f.item_id),
                code_span(&f.task_id),
                f.score_a,
                f.score_b
            ));
        }
        if g.broken.len() > flips {
            s.push_str(&format!("- and {} more\n", g.broken.len() - flips));
        }
    }
    s
}

fn xml(s: &str) -> String {
    crate::text::sanitize(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// The gate as JUnit XML: one test case per row tested, a failure with the numbers and the
/// broken items of the row (its sub-task's, or all for the H-Score and dimensions).
pub fn junit(g: &Gate) -> String {
    let failures = g.rows.iter().filter(|r| r.failed).count();
    let skipped = g.rows.iter().filter(|r| r.advisory.is_some()).count();
    let mut s = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"prism gate\" tests=\"{n}\" failures=\"{failures}\" skipped=\"{skipped}\">\n  <testsuite name=\"{} vs {}\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n",
        xml(&g.baseline),
        xml(&g.candidate),
        n = g.rows.len(),
    );
    for r in &g.rows {
        let class = match r.level {
            Level::HScore => "h-score",
            Level::Dimension => "dimension",
            Level::Task => "task",
        };
        s.push_str(&format!(
            "    <testcase classname=\"prism.{class}\" name=\"{}\">",
            xml(&r.name)
        ));
        if let Some(why) = &r.advisory {
            s.push_str(&format!(
                "\n      <skipped message=\"advisory{}: {}\"/>\n    ",
                if r.would_fail { ", would fail" } else { "" },
                xml(why)
            ));
        }
        if r.failed {
            let broken: Vec<String> = g
                .broken
                .iter()
                .filter(|f| r.level != Level::Task || f.task_id == r.name)
                .take(50)
                .map(|f| format!("{} ({:.2} -> {:.2})", f.item_id, f.score_a, f.score_b))
                .collect();
            s.push_str(&format!(
                "\n      <failure message=\"{}\" type=\"regression\">baseline {} candidate {} diff {} interval {} p(Holm) {:.4}\nbroken: {}</failure>\n    ",
                xml(&r.verdict),
                rate(r.rate_baseline),
                rate(r.rate_candidate),
                r.diff.map_or("-".into(), |d| format!("{d:+.2}")),
                xml(&ci_text(r.ci)),
                r.p_holm,
                xml(&broken.join(", "))
            ));
        }
        s.push_str("</testcase>\n");
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What GitHub's renderer would make of it (CommonMark with tables), as HTML.
    fn rendered(md: &str) -> String {
        let mut html = String::new();
        pulldown_cmark::html::push_html(
            &mut html,
            pulldown_cmark::Parser::new_ext(md, pulldown_cmark::Options::ENABLE_TABLES),
        );
        html
    }

    /// Names holding Markdown (backticks, emphasis, links, a table's `|`) render as the text
    /// they are, inside code spans: no link, no emphasis, no extra cell.
    #[test]
    fn names_in_the_markdown_render_as_text() {
        let evil = [
            "d` **[PASSED](http://evil.example)** `",
            "``a``` [x](http://evil.example) ` ",
            "`",
            "a | b",
            "<img src=x onerror=alert(1)>",
        ];
        for name in evil {
            let g = Gate {
                baseline: name.into(),
                candidate: format!("{name}:m"),
                alpha: 0.05,
                max_increase: None,
                paired: 1,
                unpaired: 0,
                resamples: 10,
                seed: 0,
                rows: vec![GateRow {
                    level: Level::Task,
                    name: name.into(),
                    items: 1,
                    rate_baseline: Some(0.0),
                    rate_candidate: Some(100.0),
                    diff: Some(100.0),
                    ci: Some((1.0, 2.0)),
                    p: 1.0,
                    p_holm: 1.0,
                    failed: false,
                    verdict: "v".into(),
                    // A judge's name is a store's text too.
                    advisory: Some(format!("judge {name}: not calibrated")),
                    would_fail: true,
                }],
                broken: vec![Flip {
                    item_id: name.into(),
                    task_id: name.into(),
                    score_a: 1.0,
                    score_b: 0.0,
                    fixed: false,
                }],
                failed: false,
            };
            let html = rendered(&markdown(&g, 5));
            assert!(!html.contains("<a "), "{name}: {html}");
            assert!(!html.contains("<img"), "{name}: {html}");
            assert!(!html.contains("<em>"), "{name}: {html}");
            // The only strong text is ours ("N items broken", "N advisory rows").
            assert_eq!(html.matches("<strong>").count(), 2, "{name}: {html}");
            // The row has its nine cells.
            let row = html.split("<tbody>").nth(1).unwrap();
            let first = row.split("</tr>").next().unwrap();
            assert_eq!(first.matches("<td").count(), 9, "{name}: {first}");
        }
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x"), "`` `x ``");
    }

    #[test]
    fn holm_by_hand() {
        // m = 3: sorted 0.01, 0.02, 0.04 → 0.03, 0.04, 0.04 (monotone), in the order given.
        let got = holm(&[0.04, 0.01, 0.02]);
        let want = [0.04, 0.03, 0.04];
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{got:?}");
        }
        assert_eq!(holm(&[0.9, 0.8]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }
}
