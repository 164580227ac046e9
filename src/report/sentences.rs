//! Where in the answer, in a report: the reported run's answers whose worst sentence is the
//! most doubtful (`sentences`), each drawn with its sentences shaded in the HTML report, and
//! every sentence with its scores as a table in the other formats and in JSON.

use serde::Serialize;

use super::tables::Table;
use crate::sentences::{Method, Scored};

/// How many answers a report shows.
pub const WORST: usize = 10;

/// One answer, its sentences scored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shaded {
    pub run: String,
    pub job: Option<u32>,
    pub model: String,
    pub item_id: String,
    pub task_id: String,
    pub samples: usize,
    /// Its worst sentence's score by the section's method.
    pub worst: f64,
    pub text: String,
    pub sentences: Vec<Scored>,
}

/// The section: the method the answers are ranked and shaded by, and the answers, worst first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    pub method: &'static str,
    pub judge: Option<String>,
    pub answers: Vec<Shaded>,
}

/// The score of the section's method: the prompt method's share of samples not backing the
/// sentence when the judge's verdicts cover every sentence of some answer; else the unigram
/// average surprise (the maximum saturates with few samples); else the tokens' average.
fn pick(method: Method) -> fn(&Scored) -> Option<f64> {
    match method {
        Method::Prompt => |s| s.scores.prompt,
        Method::Unigram => |s| s.scores.unigram_avg,
        Method::Logprob => |s| s.scores.logprob_avg,
    }
}

fn method_name(method: Method) -> &'static str {
    match method {
        Method::Prompt => "prompt",
        Method::Unigram => "unigram_avg",
        Method::Logprob => "logprob_avg",
    }
}

/// The `limit` answers of `run` (every one for `None`) by their worst sentence, worst first;
/// `None` when no answer of the run has samples (a run made without `--samples`) or no method
/// scores any.
pub fn of_run(
    db: &crate::store::Db,
    run: &str,
    ds: &crate::dataset::Dataset,
    limit: Option<usize>,
    support: &[crate::sentences::SupportRecord],
) -> crate::store::Result<Option<Section>> {
    let Some((judge, scored)) = crate::sentences::scored_run(db, run, ds, support)? else {
        return Ok(None);
    };
    let full = |m: Method| {
        scored
            .iter()
            .any(|(_, s)| !s.is_empty() && s.iter().all(|x| pick(m)(x).is_some()))
    };
    let Some(method) = [Method::Prompt, Method::Unigram, Method::Logprob]
        .into_iter()
        .find(|m| full(*m))
    else {
        return Ok(None);
    };
    let mut out: Vec<Shaded> = scored
        .into_iter()
        .filter_map(|(a, s)| {
            let worst = s
                .iter()
                .filter_map(pick(method))
                .fold(None, |w: Option<f64>, x| Some(w.map_or(x, |w| w.max(x))))?;
            Some(Shaded {
                run: run.to_string(),
                job: a.group.source_job,
                model: a.group.model.clone(),
                item_id: a.group.item_id.clone(),
                task_id: a.group.task_id.clone(),
                samples: a.samples().len(),
                worst,
                text: a.text().to_string(),
                sentences: s,
            })
        })
        .collect();
    out.sort_by(|a, b| b.worst.total_cmp(&a.worst).then(a.job.cmp(&b.job)));
    if let Some(n) = limit {
        out.truncate(n);
    }
    Ok(Some(Section {
        method: method_name(method),
        judge: judge.filter(|_| method == Method::Prompt),
        answers: out,
    }))
}

/// Every sentence of the section's answers with its scores, for the text, CSV and Markdown
/// formats.
pub(crate) fn tables(s: Option<&Section>) -> Vec<Table> {
    let Some(s) = s else {
        return Vec::new();
    };
    let f = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
    let mut rows = Vec::new();
    for (rank, a) in s.answers.iter().enumerate() {
        for (i, x) in a.sentences.iter().enumerate() {
            rows.push(vec![
                (rank + 1).to_string(),
                a.model.clone(),
                a.item_id.clone(),
                a.job.map_or(String::new(), |j| j.to_string()),
                (i + 1).to_string(),
                x.sentence.start.to_string(),
                x.sentence.end.to_string(),
                f(x.scores.prompt),
                f(x.scores.unigram),
                f(x.scores.unigram_avg),
                f(x.scores.logprob_avg),
                f(x.scores.logprob_max),
                crate::text::one_line(&x.sentence.text).to_string(),
            ]);
        }
    }
    vec![Table {
        id: "sentences",
        title: format!(
            "Where in the answer: the {} answers with the most doubtful sentence (by {}{})",
            s.answers.len(),
            s.method,
            s.judge
                .as_deref()
                .map_or(String::new(), |j| format!(", judge {j}"))
        ),
        header: vec![
            "rank",
            "model",
            "item",
            "job",
            "sentence",
            "start",
            "end",
            "prompt",
            "unigram",
            "unigram_avg",
            "logprob_avg",
            "logprob_max",
            "text",
        ],
        rows,
    }]
}

/// The answers drawn with their sentences shaded: each sentence a `<span>` of its band's class
/// (the TUI's five: none, ok, ?, !, !!), its mark before it so it reads without colour, its
/// scores in its title. Every model text is escaped.
pub(crate) fn html(s: &Section) -> String {
    use crate::report::html::esc;
    let band = |v: Option<f64>, all: &[f64]| -> (&'static str, usize) {
        let Some(v) = v else { return ("-", 0) };
        // The prompt method's scores are shares already; the others are relative to the
        // section's own range.
        let d = if s.method == "prompt" {
            v
        } else {
            let (lo, hi) = all
                .iter()
                .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
            if hi > lo { (v - lo) / (hi - lo) } else { 0.0 }
        };
        match d {
            d if d < 0.25 => ("ok", 1),
            d if d < 0.5 => ("?", 2),
            d if d < 0.75 => ("!", 3),
            _ => ("!!", 4),
        }
    };
    let method = match s.method {
        "prompt" => Method::Prompt,
        "unigram_avg" => Method::Unigram,
        _ => Method::Logprob,
    };
    let all: Vec<f64> = s
        .answers
        .iter()
        .flat_map(|a| a.sentences.iter().filter_map(pick(method)))
        .collect();
    let mut h = String::from(
        "<h2 id=\"sentences\">Where in the answer</h2>\n<style>.s1{}.s2{text-decoration:underline dotted}.s3{background:#fde68a;text-decoration:underline}.s4{background:#fca5a5;font-weight:bold;text-decoration:underline}.s0{color:#888}.mark{font-family:monospace;font-size:85%;color:#555}</style>\n",
    );
    h.push_str(&format!(
        "<p>The answers whose most doubtful sentence is the most doubtful, by <b>{}</b>{}: <span class=\"mark\">[ok]</span> backed, <span class=\"mark\">[?]</span>, <span class=\"mark\">[!]</span>, <span class=\"mark\">[!!]</span> least backed by the model's own samples; <span class=\"mark\">[-]</span> no score.</p>\n",
        esc(s.method),
        s.judge
            .as_deref()
            .map_or(String::new(), |j| format!(" (judge {})", esc(j)))
    ));
    for a in &s.answers {
        h.push_str(&format!(
            "<div class=\"shaded\"><p><b>{}</b> · {} · {} · {} sample(s) · worst {:.2}</p><p>",
            esc(&a.model),
            esc(&a.item_id),
            esc(&a.task_id),
            a.samples,
            a.worst
        ));
        let mut at = 0;
        for (i, x) in a.sentences.iter().enumerate() {
            let (start, end) = (x.sentence.start, x.sentence.end);
            if let Some(gap) = a.text.get(at..start) {
                h.push_str(&esc(gap));
            }
            let (mark, level) = band(pick(method)(x), &all);
            let title = format!(
                "prompt {} · unigram {} (avg {}) · logprob {} (max {})",
                opt(x.scores.prompt),
                opt(x.scores.unigram),
                opt(x.scores.unigram_avg),
                opt(x.scores.logprob_avg),
                opt(x.scores.logprob_max)
            );
            h.push_str(&format!(
                "<span class=\"mark\">[{}·{mark}]</span> <span class=\"s{level}\" title=\"{}\">{}</span>",
                i + 1,
                esc(&title),
                esc(a.text.get(start..end).unwrap_or(&x.sentence.text))
            ));
            at = end;
        }
        if let Some(rest) = a.text.get(at..) {
            h.push_str(&esc(rest));
        }
        h.push_str("</p></div>\n");
    }
    h
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}"))
}
