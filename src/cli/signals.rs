//! `prism signals`: which zero-resource signal predicts PRISM's verdict, per model and
//! dimension (or category, or sub-task): AUROC and AUPRC with bootstrap 95% intervals and the
//! prediction-rejection ratio, over the stored answers that have both a signal and a score.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use crate::config::Dirs;
use crate::detect::signals::{By, SignalRow, gather, table};

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
    let store = db.existing_store("run prism run, prism score and prism detect first")?;
    if let Some(run) = &args.run
        && store.run(run)?.is_none()
    {
        anyhow::bail!("no run {run} in {}", db.local().display());
    }
    let runs: Vec<String> = match &args.run {
        Some(r) => vec![r.clone()],
        None => store.runs()?.into_iter().map(|r| r.id).collect(),
    };
    let mut points = gather(&store, &runs, &|r| {
        super::run::open_dataset(super::run::dataset_path(&r.dataset))
            .ok()
            .map(|(d, _)| d)
    })?;
    points.retain(|p| args.model.as_ref().is_none_or(|m| &p.model == m));
    let rows = table(&points, args.by, args.resamples, args.seed);
    if rows.is_empty() {
        crate::warn!(
            "no answer has both a signal and a PRISM score: score a run (prism score RUN), then check its answers (prism detect --run RUN)"
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
    } else {
        eprint!(
            "{}",
            crate::text::sanitize(&text(&rows, args.resamples, args.seed))
        );
    }
    Ok(0)
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
