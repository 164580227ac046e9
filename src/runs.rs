//! Runs as things a user manages: what `prism runs` and the TUI's runs screen list about each
//! (name, tags, items, jobs done and failed, each model's settings and scores). One place, so
//! the two front-ends say the same.

use crate::store::{RunRecord, Store};

/// One run as `prism runs` lists it.
#[derive(Debug, Clone)]
pub struct Listed {
    pub run: RunRecord,
    pub name: Option<String>,
    pub tags: Vec<String>,
    pub items: usize,
    pub done: usize,
    pub failed: usize,
    /// Per model: its H-Score (when complete) and dimension rates.
    pub scores: Vec<(String, Option<f64>, [Option<f64>; 4])>,
}

pub(crate) fn listed(store: &Store, run: RunRecord) -> anyhow::Result<Listed> {
    let (name, tags) = store.run_labels(&run.id)?;
    let jobs = store.jobs(&run.id)?;
    let items = jobs
        .iter()
        .map(|(j, _)| j.item_id.as_str())
        .collect::<std::collections::HashSet<_>>()
        .len();
    let counts = store.job_counts(&run.id)?;
    let scores = match crate::report::build::from_store(store, &run.id, None) {
        Ok((rows, _)) => rows
            .iter()
            .map(|r| {
                (
                    r.name.clone(),
                    r.h_score(),
                    std::array::from_fn(|d| r.dims[d].map(|x| x.rate)),
                )
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    Ok(Listed {
        run,
        name,
        tags,
        items,
        done: counts.done,
        failed: counts.failed,
        scores,
    })
}

/// A model's settings in a few words (see [`crate::store::ModelSnapshot::describe`]).
pub(crate) fn settings(m: &crate::store::ModelSnapshot) -> String {
    m.describe()
}

/// Every run (newest first), or those with `model` (oldest first: its history).
pub(crate) fn list(store: &Store, model: Option<&str>) -> anyhow::Result<Vec<Listed>> {
    let mut all = Vec::new();
    for run in store.runs()? {
        if model.is_some_and(|m| !run.config.models.iter().any(|x| x.name == m)) {
            continue;
        }
        all.push(listed(store, run)?);
    }
    if model.is_some() {
        all.reverse();
    }
    Ok(all)
}

/// Two runs compared (2,000 resamples, seed 0, as `prism compare` by default). A run with
/// several models is compared on a model both runs have (the first of the first run's).
pub(crate) fn compare_runs(
    store: &Store,
    a: &str,
    b: &str,
) -> anyhow::Result<crate::eval::compare::Comparison> {
    use crate::eval::compare::{Side, compare, side_scores};
    let run = |id: &str| store.run(id)?.ok_or_else(|| anyhow::anyhow!("no run {id}"));
    let (ra, rb) = (run(a)?, run(b)?);
    let (ma, mb) = (
        crate::eval::compare::run_models(store, &ra)?,
        crate::eval::compare::run_models(store, &rb)?,
    );
    let (ma, mb) = match ma.iter().find(|m| mb.contains(m)) {
        Some(m) => (m.clone(), m.clone()),
        None if ma.len() == 1 && mb.len() == 1 => (ma[0].clone(), mb[0].clone()),
        None => anyhow::bail!(
            "{a} and {b} have no model in common: compare one model of each with prism compare {a}:MODEL {b}:MODEL"
        ),
    };
    let sa = Side {
        run_id: a.to_string(),
        model: ma,
    };
    let sb = Side {
        run_id: b.to_string(),
        model: mb,
    };
    let c = compare(
        (&sa.label(), &side_scores(store, &sa)?),
        (&sb.label(), &side_scores(store, &sb)?),
        2000,
        0,
    );
    if c.paired == 0 {
        anyhow::bail!(
            "{} and {} have no item scored on both",
            sa.label(),
            sb.label()
        );
    }
    Ok(c)
}
