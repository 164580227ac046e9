//! `prism signals`: which zero-resource signal predicts PRISM's verdict, per model and
//! dimension (or category, or sub-task): AUROC and AUPRC with bootstrap 95% intervals and the
//! prediction-rejection ratio, over the stored answers that have both a signal and a score.
//! Then, where people graded sentences (`L` on the where-in-the-answer screen), which sentence
//! method tells (`sentences::eval`): AUC-PR with non-factual and with factual as positive,
//! AUROC, the random baselines, and at answer level Pearson and Spearman.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use crate::config::Dirs;
use crate::detect::signals::{By, SignalRow, gather, table};
use crate::sentences::eval::MethodRow;
use crate::sentences::labels::SentenceLabel;

#[derive(Debug, Args)]
pub struct SignalsArgs {
    /// Only answers of this run (default: every run's).
    pub run: Option<String>,
    /// Cells: per dimension, category or sub-task (with `all` per model after them).
    #[arg(long, value_enum, default_value = "dimension")]
    pub by: By,
    /// Only this model.
    #[arg(long)]
    pub model: Option<String>,
    /// Bootstrap resamples for the 95% intervals.
    #[arg(long, default_value_t = 1000)]
    pub resamples: usize,
    /// The bootstrap's seed (the same seed, the same intervals).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The judge whose verdicts score sentences by the prompt method (default: the judge with
    /// the most verdicts on each answer).
    #[arg(long)]
    pub judge: Option<String>,
    /// The store (default: prism.db in the data dir), or a shared store (postgres://...), read
    /// through this machine's copy.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// One JSON object per row on stdout (the default when stdout is not a terminal).
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn signals(args: SignalsArgs, dirs: &Dirs) -> anyhow::Result<i32> {
    // A shared store is read through this machine's copy, brought up to date first.
    let db = super::lane_flags::synced(args.db.as_ref(), dirs)?;
    let store = db.read_existing("run prism run, prism score and prism detect first")?;
    if let Some(run) = &args.run
        && store.run(run)?.is_none()
    {
        anyhow::bail!("no run {run} in {}", db.local().display());
    }
    let runs: Vec<String> = match &args.run {
        Some(r) => vec![r.clone()],
        None => store.runs()?.into_iter().map(|r| r.id).collect(),
    };
    let mut points = gather(&db, &runs, &|r| {
        super::run::open_dataset(super::run::dataset_path(&r.dataset))
            .ok()
            .map(|(d, _)| d)
    })?;
    points.retain(|p| args.model.as_ref().is_none_or(|m| &p.model == m));
    let rows = table(&points, args.by, args.resamples, args.seed);
    let sentences = sentence_rows(&db, &args)?;
    if rows.is_empty() && sentences.is_empty() {
        crate::warn!(
            "no answer has both a signal and a PRISM score: score a run (prism score RUN), then check its answers (prism detect --run RUN); no sentence graded by people either (L on the where-in-the-answer screen)"
        );
        return Ok(0);
    }
    if args.json || !std::io::stdout().is_terminal() {
        for r in &rows {
            crate::outln!(
                "{}",
                crate::text::json_for_terminal(&json!({"event": "signal", "row": r}).to_string())
            );
        }
        for r in &sentences {
            crate::outln!(
                "{}",
                crate::text::json_for_terminal(
                    &json!({"event": "sentence_signal", "row": r}).to_string()
                )
            );
        }
    } else {
        if !rows.is_empty() {
            eprint!(
                "{}",
                crate::text::sanitize(&text(&rows, args.resamples, args.seed))
            );
        }
        if !sentences.is_empty() {
            eprint!("{}", crate::text::sanitize(&sentence_text(&sentences)));
        }
    }
    Ok(0)
}

/// The sentence methods against people's grades, of `--run` and `--model` when given.
fn sentence_rows(db: &crate::store::Db, args: &SignalsArgs) -> anyhow::Result<Vec<MethodRow>> {
    let store = db.read()?;
    let mut labels: Vec<SentenceLabel> =
        store.records_where(args.run.as_deref().map(|r| ("run_id", r)))?;
    labels.retain(|l| args.model.as_ref().is_none_or(|m| &l.model == m));
    if labels.is_empty() {
        return Ok(Vec::new());
    }
    let g = crate::sentences::eval::gather(db, &labels, args.judge.as_deref())?;
    if g.lost > 0 {
        crate::warn!(
            "{} graded sentence(s) left out: their answer is not in this store, or the sentence is no longer in it",
            g.lost
        );
    }
    Ok(crate::sentences::eval::table(&g, args.resamples, args.seed))
}

fn sentence_text(rows: &[MethodRow]) -> String {
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| crate::text::fixed(v, 1));
    let ci = |v: Option<(f64, f64)>| {
        v.map_or(String::new(), |(a, b)| {
            format!(
                "[{}, {}]",
                crate::text::fixed(a, 0),
                crate::text::fixed(b, 0)
            )
        })
    };
    let r2 = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
    let mut s = format!(
        "\nwhere in the answer: sentence methods against people's grades (non-factual: minor or major inaccurate)\n\n{:<12} {:>5} {:>4}  {:>6} {:<10} {:>5}  {:>6} {:<10} {:>5}  {:>5} {:<10}  {:>4} {:>7} {:>8}\n",
        "method",
        "n",
        "#NF",
        "NF-PR",
        "",
        "base",
        "F-PR",
        "",
        "base",
        "AUROC",
        "",
        "ans",
        "pearson",
        "spearman"
    );
    for r in rows {
        let nf = &r.non_factual;
        let head = format!("{:<12} {:>5} {:>4}  ", r.method, nf.n, nf.hallucinated);
        let answers = format!(
            "{:>4} {:>7} {:>8}",
            r.answers,
            r2(r.pearson),
            r2(r.spearman)
        );
        match &nf.too_few {
            Some(why) => s.push_str(&format!("{head}too few: {why}  {answers}\n")),
            None => s.push_str(&format!(
                "{head}{:>6} {:<10} {:>5}  {:>6} {:<10} {:>5}  {:>5} {:<10}  {answers}\n",
                pct(nf.auprc),
                ci(nf.auprc_ci),
                pct(r.non_factual_baseline),
                pct(r.factual_auprc),
                ci(r.factual_auprc_ci),
                pct(r.factual_baseline),
                pct(nf.auroc),
                ci(nf.auroc_ci),
            )),
        }
    }
    s.push_str("\nNF-PR: AUC-PR, non-factual positive · F-PR: factual positive · base: the random baseline (the positives' share) · ans: answers, their mean sentence score against people's share of non-factual sentences\n");
    s
}

fn text(rows: &[SignalRow], resamples: usize, seed: u64) -> String {
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| crate::text::fixed(v, 1));
    let ci = |v: Option<(f64, f64)>| {
        v.map_or(String::new(), |(a, b)| {
            format!(
                "[{}, {}]",
                crate::text::fixed(a, 0),
                crate::text::fixed(b, 0)
            )
        })
    };
    let mut s = format!(
        "\nhallucinated: PRISM score below 0.5 · 95% bootstrap intervals ({resamples} resamples, seed {seed})\n\n{:<20} {:<16} {:<14} {:>5} {:>4}  {:>5} {:<10}  {:>5} {:<10}  {:>6}\n",
        "signal", "model", "cell", "n", "#H", "AUROC", "", "AUPRC", "", "PRR"
    );
    for r in rows {
        let sc = &r.score;
        let head = format!(
            "{:<20} {:<16} {:<14} {:>5} {:>4}  ",
            r.signal, r.model, r.cell, sc.n, sc.hallucinated
        );
        match &sc.too_few {
            Some(why) => s.push_str(&format!("{head}too few: {why}\n")),
            None => s.push_str(&format!(
                "{head}{:>5} {:<10}  {:>5} {:<10}  {:>6}\n",
                pct(sc.auroc),
                ci(sc.auroc_ci),
                pct(sc.auprc),
                ci(sc.auprc_ci),
                pct(sc.prr)
            )),
        }
    }
    s
}
