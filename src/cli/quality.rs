//! `prism quality`: the quality agent over a dataset's items (A Factuality, B Discriminability,
//! C Clarity, 1-10 each; S = 0.5A + 0.3B + 0.2C; kept when every score exceeds the threshold),
//! each item's scores stored as they arrive (a second run asks only for what is missing), then
//! the kept share and, against human review decisions where they exist, the rejection recall
//! over a sweep of thresholds.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, Dirs};
use crate::engine::Caller;
use crate::review::quality::{self, QualityRecord, SweepRow};
use crate::review::quality_run::{self, QualityEvent};

#[derive(Debug, Args)]
pub struct QualityArgs {
    /// Dataset (omit for the bundled sample data).
    pub dataset: Option<PathBuf>,
    /// The model that scores (a name from the models file; default: the config's judge).
    #[arg(long)]
    pub model: Option<String>,
    /// Keep items whose every score exceeds this.
    #[arg(long, default_value_t = quality::THRESHOLD)]
    pub threshold: f64,
    /// Items to score: ids or task-id globs, comma-separated (as `prism run --filter`).
    #[arg(long)]
    pub filter: Option<String>,
    #[arg(long)]
    pub limit: Option<usize>,
    /// Attempts per item when the reply cannot be read.
    #[arg(long, default_value_t = 3)]
    pub attempts: u32,
    /// Requests in flight.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// Score items again even when this model already scored them.
    #[arg(long)]
    pub again: bool,
    /// Reviewers who must agree for a human decision to count in the sweep.
    #[arg(long, default_value_t = crate::review::MIN_REVIEWERS)]
    pub min_reviewers: usize,
    #[arg(long)]
    pub models_file: Option<PathBuf>,
    /// Where scores and review decisions are: a SQLite store or a postgres:// URL.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// One JSON object on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn quality(
    args: QualityArgs,
    dirs: &Dirs,
    factory: crate::engine::BackendFactory,
) -> anyhow::Result<i32> {
    let (config, _) = Config::load(&dirs.config_file());
    let name = args
        .model
        .clone()
        .or(config.judge.clone())
        .ok_or_else(|| anyhow::anyhow!("--model is required (or set judge in the config)"))?;
    let models = super::run::load_models(dirs, args.models_file.as_deref())?.select(&name)?;
    let cfg = models
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::anyhow!("no model {name:?}"))?;
    let (ds, _) = super::run::open_dataset(args.dataset.as_deref())?;
    let items = super::run::select_items(&ds, args.filter.as_deref(), args.limit)?;
    // Scores and decisions go where the panel's are: `--db` (a SQLite file or a shared
    // store), else the config's shared `db`, else the local store. The lane saves through this
    // machine's store either way (the judge replies are cached there), each score pushed to a
    // shared store as it is saved.
    let target = super::review::panel_target(args.db.clone(), dirs);
    let store = super::review::review_db(Some(target.clone()), dirs)?;
    let db = crate::store::Db::open(Some(&target), &super::run::default_db(dirs))?;
    let scored: std::collections::HashSet<String> = store
        .quality(Some(&cfg.name))?
        .into_iter()
        .filter(|q| q.scores.is_some())
        .map(|q| q.item_id)
        .collect();
    let dataset_ref = args
        .dataset
        .as_ref()
        .map_or_else(|| "<sample-data>".to_string(), |d| d.display().to_string());
    let plan = quality_run::plan(
        &ds,
        &dataset_ref,
        &cfg.name,
        &items,
        &scored,
        args.again,
        args.attempts,
    );
    crate::warn!(
        "quality: {} items, {} to score with {} ({} already scored)",
        items.len(),
        plan.todo.len(),
        cfg.name,
        items.len() - plan.todo.len()
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let cancel = CancellationToken::new();
    let tally = rt.block_on(async {
        crate::shutdown::cancel_on_signal(&cancel);
        let handle = db.records_handle(&plan.run_id, "quality score(s)")?;
        let caller = Arc::new(Caller::new(
            &cfg,
            &factory,
            Some(handle.clone()),
            true,
            cancel.clone(),
        )?);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let unit = Arc::new(quality_run::Quality {
            ds: ds.clone(),
            caller,
            attempts: plan.attempts,
        });
        let lane = crate::engine::Lane {
            store: handle.clone(),
            factory: factory.clone(),
            events: tx,
            cancel: cancel.clone(),
        };
        let lane =
            crate::engine::records::run(lane, args.concurrency, &plan.run_id, unit, plan.todo);
        let json = args.json;
        let said = async move {
            let mut tally = Tally::default();
            while let Some(ev) = rx.recv().await {
                if let QualityEvent::Saved(rec) = ev {
                    tally.say(&rec, json);
                }
            }
            tally
        };
        let (ran, tally) = tokio::join!(lane, said);
        ran?;
        anyhow::Ok(tally)
    })?;
    crate::warn!(
        "quality with {}: {} scored, {} unreadable, {} failed{}",
        cfg.name,
        tally.scored,
        tally.unreadable,
        tally.failed,
        if cancel.is_cancelled() {
            " (interrupted: run it again to finish)"
        } else {
            ""
        }
    );
    db.finish()?;
    report(&args, &cfg.name, &ds, &items, &store)?;
    Ok(if tally.failed > 0 || cancel.is_cancelled() {
        2
    } else {
        0
    })
}

/// What the records that arrived came to, said as they arrive.
#[derive(Default)]
struct Tally {
    scored: usize,
    unreadable: usize,
    failed: usize,
}

impl Tally {
    fn say(&mut self, rec: &QualityRecord, json: bool) {
        match (&rec.scores, &rec.error) {
            (Some(s), _) => {
                self.scored += 1;
                if json {
                    let line = serde_json::json!({"event": "scored", "item": rec.item_id,
                        "factuality": s[0], "discriminability": s[1], "clarity": s[2],
                        "weighted": rec.weighted()});
                    crate::text::out(&format!("{line}\n"));
                }
            }
            (None, Some(e)) => {
                self.failed += 1;
                crate::warn!("  {}: failed: {}", rec.item_id, e);
            }
            (None, None) => {
                self.unreadable += 1;
                crate::warn!(
                    "  {}: unreadable after {} attempts: {}",
                    rec.item_id,
                    rec.attempts,
                    crate::tui::widgets::truncate(&crate::text::one_line(&rec.reply), 120)
                );
            }
        }
    }
}

/// The report over every stored score of `name` on the selected items: the rejection recall
/// against the panel's decisions at each threshold (JSON with `--json`).
fn report(
    args: &QualityArgs,
    name: &str,
    ds: &crate::dataset::Dataset,
    items: &[usize],
    store: &crate::store::Db,
) -> anyhow::Result<()> {
    let wanted: std::collections::HashSet<&str> = items.iter().map(|&i| &*ds.items[i].id).collect();
    let records: Vec<QualityRecord> = store
        .quality(Some(name))?
        .into_iter()
        .filter(|q| wanted.contains(q.item_id.as_str()))
        .collect();
    let (removed, retained) = quality::human_outcomes(&store.decisions()?, args.min_reviewers);
    let mut thresholds = quality::default_thresholds();
    if !thresholds.iter().any(|t| (t - args.threshold).abs() < 1e-9) {
        thresholds.push(args.threshold);
        thresholds.sort_by(f64::total_cmp);
    }
    let rows = quality::sweep(&records, &removed, &retained, &thresholds);
    let at = rows
        .iter()
        .find(|r| (r.threshold - args.threshold).abs() < 1e-9)
        .cloned();
    if args.json {
        crate::outln!(
            "{}",
            serde_json::json!({
                "model": name, "threshold": args.threshold, "items": records.len(),
                "scored": records.iter().filter(|r| r.scores.is_some()).count(),
                "kept": at.as_ref().map(|r| r.kept), "filtered": at.as_ref().map(|r| r.filtered),
                "human_removed": removed.len(), "human_retained": retained.len(),
                "sweep": rows,
            })
        );
    } else {
        crate::outp!(
            "{}",
            crate::text::sanitize(&table(name, args.threshold, &records, &rows, removed.len()))
        );
    }
    Ok(())
}

fn table(
    model: &str,
    t: f64,
    records: &[QualityRecord],
    rows: &[SweepRow],
    removed: usize,
) -> String {
    let scored: Vec<&QualityRecord> = records.iter().filter(|r| r.scores.is_some()).collect();
    let mean = |k: usize| {
        if scored.is_empty() {
            0.0
        } else {
            scored
                .iter()
                .filter_map(|r| r.scores.map(|s| s[k] as f64))
                .sum::<f64>()
                / scored.len() as f64
        }
    };
    let s_mean = if scored.is_empty() {
        0.0
    } else {
        scored.iter().filter_map(|r| r.weighted()).sum::<f64>() / scored.len() as f64
    };
    let kept = scored.iter().filter(|r| r.kept(t) == Some(true)).count();
    if scored.is_empty() {
        return format!(
            "quality agent {model}: no item scored yet ({} unreadable or failed; see the replies \
             above)\n",
            records.len()
        );
    }
    let mut s = format!(
        "quality agent {model}: {} items scored ({} unreadable or failed)\n\
         mean A Factuality {:.2}, B Discriminability {:.2}, C Clarity {:.2}; S = 0.5A + 0.3B + 0.2C = {:.2}\n\
         kept at T = {t}: {kept} of {} (every score above {t})\n",
        scored.len(),
        records.len() - scored.len(),
        mean(0),
        mean(1),
        mean(2),
        s_mean,
        scored.len()
    );
    if removed == 0 {
        s.push_str("no items removed by reviewers yet: rejection recall needs human decisions (prism review)\n");
    } else {
        s.push_str(&format!(
            "\nagainst {removed} items reviewers removed:\n    T  kept  filtered  removed&filtered  rejection recall  retained&filtered\n"
        ));
        for r in rows {
            s.push_str(&format!(
                "{:>5.1}  {:>4}  {:>8}  {:>16}  {:>16}  {:>17}\n",
                r.threshold,
                r.kept,
                r.filtered,
                r.removed_filtered,
                r.rejection_recall
                    .map_or("n/a".into(), |v| format!("{:.1}%", 100.0 * v)),
                r.retained_filtered
            ));
        }
    }
    s
}
