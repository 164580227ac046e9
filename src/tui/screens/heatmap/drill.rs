//! The heatmap's drill: the items behind one cell, worst first, and the job that reads each
//! item's worst sentence (`w`: where in the answer) to rank them by it.

use crate::tui::jobs::{Msg, read_or_fail};
/// The items behind one cell, worst first.
#[derive(Debug, Clone, Default)]
pub struct Drill {
    pub model: String,
    /// What the cell is (`KE`, `KE-FD`, a task id, `all`).
    pub label: String,
    /// (item index, mean score over its samples).
    pub items: Vec<(usize, f64)>,
    pub sel: usize,
    /// Each item's worst sentence (`w`: where in the answer) and the method that scored it,
    /// once read; the items ranked by it while `by_sentence`.
    pub worst: Option<(std::collections::HashMap<usize, f64>, &'static str)>,
    pub by_sentence: bool,
}

impl Drill {
    /// Worst sentence first (items without one last), else worst score first.
    pub(super) fn order(&mut self) {
        let picked = self.items.get(self.sel).map(|x| x.0);
        match (&self.worst, self.by_sentence) {
            (Some((w, _)), true) => self.items.sort_by(|a, b| {
                let (x, y) = (w.get(&a.0), w.get(&b.0));
                y.is_some()
                    .cmp(&x.is_some())
                    .then(
                        y.copied()
                            .unwrap_or(0.0)
                            .total_cmp(&x.copied().unwrap_or(0.0)),
                    )
                    .then(a.0.cmp(&b.0))
            }),
            _ => self
                .items
                .sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0))),
        }
        self.sel = picked
            .and_then(|p| self.items.iter().position(|x| x.0 == p))
            .unwrap_or(0);
    }
}

/// Reads the worst sentence of `model`'s answers (the drill's `w`): from the stored runs made
/// with samples, newest first, each item's answer in the newest run that has one (the
/// heatmap shows the newest scores too).
pub(super) struct LoadWorst {
    pub(super) model: String,
}

/// Per item id, its answer's worst sentence, and the method.
#[derive(Debug)]
pub(super) struct Worst(
    pub(super) std::collections::HashMap<String, f64>,
    pub(super) &'static str,
);

impl crate::tui::jobs::Outcome for Worst {}

impl crate::tui::jobs::Job for LoadWorst {
    fn start(self: Box<Self>, cx: &mut crate::tui::jobs::JobCx<'_>) {
        let ds = cx.ds.clone();
        let model = self.model;
        cx.on_reader(Some("where in the answer needs a store"), move |db| {
            let r = read_or_fail!(db);
            let read = || -> crate::store::Result<Worst> {
                let mut worst = std::collections::HashMap::new();
                let mut method = "";
                // Every verdict read once, for every run.
                let support = crate::sentences::support_records(db)?;
                for run in r.runs()? {
                    // A run of one sample per item, or without this model, has nothing to weigh
                    // (a run's settings may not say: then it is read).
                    let c = &run.config;
                    let asked = c.models.is_empty() || c.models.iter().any(|m| m.name == model);
                    if c.samples == 1 || !asked {
                        continue;
                    }
                    let Some(sec) =
                        crate::report::sentences::of_run(db, &run.id, &ds, None, &support)?
                    else {
                        continue;
                    };
                    method = sec.method;
                    for a in sec.answers.into_iter().filter(|a| a.model == model) {
                        worst.entry(a.item_id).or_insert(a.worst);
                    }
                }
                Ok(Worst(worst, method))
            };
            match read() {
                Ok(w) => crate::tui::jobs::Msg::new(w),
                Err(e) => crate::tui::jobs::Msg::failed(format!("reading sentences: {e}")),
            }
        });
    }
}
