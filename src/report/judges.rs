//! The report's "Judges on trial" section (`prism report` on a run whose answers were judged):
//! the numbers of `prism judges RUN`, as HTML tables. Every name in it comes from a store and
//! is escaped.

use std::fmt::Write;

use super::html::esc;
use crate::review::judges::{Est, Trial};
use crate::text::fixed;

fn num(v: Option<f64>, places: usize) -> String {
    v.map_or("-".into(), |v| fixed(v, places))
}

fn with_interval(e: &Est) -> String {
    match (e.value, e.low, e.high) {
        (Some(v), Some(a), Some(b)) => format!(
            "{} <small>[{}, {}]</small>",
            fixed(v, 2),
            fixed(a, 2),
            fixed(b, 2)
        ),
        (v, _, _) => num(v, 2),
    }
}

/// The section, or nothing when no judge verdict is stored.
pub fn html(t: &Trial) -> String {
    if t.judges.is_empty() {
        return String::new();
    }
    let mut s = String::from("\n<h2>Judges on trial</h2>\n");
    let _ = writeln!(
        s,
        "<p>Each judge's verdicts against people's labels (hallucinated: a score below 0.5; n: answers both decided; 95% bootstrap intervals). People decided {} answer(s); {} were labelled \"can't tell\", {} split evenly. Cells with fewer than {} labelled answers say \"too few\".</p>",
        t.people.decided, t.people.cant_tell, t.people.split, t.min_labels
    );
    s.push_str("<table id=\"judges\"><tr><th class=\"name\">rows</th><th class=\"name\">judge</th><th>n</th><th>accuracy</th><th>Cohen's kappa</th><th>judge correct, people hallucinated</th><th>judge hallucinated, people correct</th></tr>");
    for g in &t.groups {
        for v in &g.vs_people {
            let _ = write!(
                s,
                "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td>",
                esc(&g.name),
                esc(&v.judge),
                v.n
            );
            if v.too_few {
                s.push_str("<td class=\"none\" colspan=\"4\">too few labels</td></tr>");
                continue;
            }
            let _ = write!(
                s,
                "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                with_interval(&v.accuracy),
                with_interval(&v.kappa),
                v.judge_correct_people_hallucinated,
                v.judge_hallucinated_people_correct
            );
        }
    }
    s.push_str("</table>\n");
    if t.judges.len() > 1 {
        s.push_str("<h3>Among the judges</h3><table id=\"judges-among\"><tr><th class=\"name\">rows</th><th>answers</th><th>Fleiss' kappa</th><th>Krippendorff's alpha</th></tr>");
        for g in &t.groups {
            let _ = write!(
                s,
                "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&g.name),
                g.among.n,
                num(g.among.fleiss_kappa, 2),
                num(g.among.krippendorff_alpha, 2)
            );
        }
        s.push_str("</table>\n");
    }
    s.push_str("<h3>Within a judge, asked again</h3><table id=\"judges-flips\"><tr><th class=\"name\">rows</th><th class=\"name\">judge</th><th>answers asked twice or more</th><th>flipped</th></tr>");
    for g in &t.groups {
        for f in &g.flips {
            let _ = write!(
                s,
                "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td><td>{}</td></tr>",
                esc(&g.name),
                esc(&f.judge),
                f.n,
                match f.share {
                    Some(x) => format!("{} ({}%)", f.flipped, fixed(100.0 * x, 0)),
                    None => "-".into(),
                }
            );
        }
    }
    s.push_str("</table>\n<h3>What the choice of judge moves</h3><p>Each model's rates as stored and under each judge alone (its verdicts in place of the judged scores).</p><table id=\"judges-readings\"><tr><th class=\"name\">model</th><th class=\"name\">under</th><th>KE</th><th>KM</th><th>RE</th><th>IFE</th><th>H-Score</th></tr>");
    for m in &t.models {
        for r in &m.readings {
            let _ = write!(
                s,
                "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td>",
                esc(&m.model),
                esc(&r.under)
            );
            for rate in &r.rates {
                let _ = match rate {
                    Some((v, true)) => write!(s, "<td>{}</td>", fixed(*v, 2)),
                    Some((v, false)) => write!(s, "<td>{}*</td>", fixed(*v, 2)),
                    None => write!(s, "<td class=\"none\">-</td>"),
                };
            }
            let _ = write!(s, "<td>{}</td></tr>", num(r.h_score, 2));
        }
    }
    s.push_str("</table>\n");
    s
}
