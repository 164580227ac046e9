//! The heatmap's metrics beyond PRISM's rates, over every stored run: each answer's
//! self-contradiction flag, and how well each signal predicts PRISM's verdict.

use std::sync::Arc;

use super::{Job, JobCx, Msg, Outcome};
use crate::dataset::Dataset;

/// Every stored answer's self-contradiction flag, with its score.
pub struct LoadFlags;

#[derive(Debug)]
pub struct Flags(pub Vec<crate::detect::results::AnswerFlag>);

impl Outcome for Flags {}

impl Job for LoadFlags {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        cx.on_reader(None, |db| {
            crate::detect::results::answer_flags(db)
                .map(|f| Msg::new(Flags(f)))
                .unwrap_or_else(|e| Msg::failed(format!("reading detections: {e}")))
        });
    }
}

/// How well each signal predicts PRISM's verdict, per model and cell of every view.
pub struct LoadSignals;

/// Per signal, model and cell (dimensions, categories, sub-tasks, `all`): AUROC without an
/// interval.
#[derive(Debug)]
pub struct Signals(pub Vec<crate::detect::signals::SignalRow>);

impl Outcome for Signals {}

impl Job for LoadSignals {
    fn start(self: Box<Self>, cx: &mut JobCx<'_>) {
        cx.on_reader(None, |db| {
            signal_rows(db)
                .map(|s| Msg::new(Signals(s)))
                .unwrap_or_else(|e| Msg::failed(format!("reading signals: {e}")))
        });
    }
}

/// AUROC; `prism signals` gives the intervals). Each run's questions come from its own dataset,
/// read once per dataset.
fn signal_rows(
    db: &crate::store::Db,
) -> crate::store::Result<Vec<crate::detect::signals::SignalRow>> {
    let r = db.read()?;
    use crate::detect::signals::{By, gather, table};
    let runs: Vec<String> = r.runs()?.into_iter().map(|x| x.id).collect();
    let read: std::cell::RefCell<std::collections::HashMap<String, Option<Arc<Dataset>>>> =
        Default::default();
    let points = gather(db, &runs, &|run| {
        read.borrow_mut()
            .entry(run.dataset.clone())
            .or_insert_with(|| match run.dataset.as_str() {
                "<sample-data>" => Some(Arc::new(crate::dataset::load_sample().dataset)),
                p => crate::dataset::load_path(std::path::Path::new(p))
                    .ok()
                    .map(|l| Arc::new(l.dataset)),
            })
            .clone()
    })?;
    // Where people graded sentences: each sentence method, against their grades.
    let labels: Vec<crate::sentences::labels::SentenceLabel> = r.records_where(None)?;
    let mut points = points;
    if !labels.is_empty() {
        let g = crate::sentences::eval::gather(db, &labels, None)?;
        points.extend(crate::sentences::eval::points(&g));
    }
    let mut rows = Vec::new();
    for by in [By::Dimension, By::Category, By::Task] {
        rows.extend(
            table(&points, by, 0, 0)
                .into_iter()
                .filter(|row| by == By::Dimension || row.cell != "all"),
        );
    }
    Ok(rows)
}
