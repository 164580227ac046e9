//! `prism judges --save-calibration` and the calibration lines of `prism judges`: each judge's
//! numbers against people saved with what the judge is (`review::calibration`), and whether
//! the calibration saved still holds.

use crate::review::calibration::{self, Floor, Identity, Standing};
use crate::review::judges::Trial;

pub(crate) use crate::review::calibration::{identities, standings};

/// The lines of `prism judges` that say whether each judge's calibration holds.
pub(crate) fn text(standings: &[(String, Standing)], floor: &Floor) -> String {
    let mut s = format!(
        "\ncalibration (what prism gate trusts: a calibration saved with prism judges --save-calibration, current, kappa and AC1 >= {} on >= {} labels)\n",
        crate::text::fixed(floor.kappa, 2),
        floor.labels
    );
    for (j, st) in standings {
        s.push_str(&format!("{:<14} {}\n", crate::text::one_line(j), st.say()));
    }
    s
}

/// Saves the trial's calibrations (one per judge and row with labels under it) on the store
/// (and a shared store first); returns how many.
pub(crate) fn save(
    db: &crate::store::Db,
    trial: &Trial,
    now: &[Identity],
    reviewers: &[String],
) -> anyhow::Result<usize> {
    let cals = calibration::from_trial(trial, now, reviewers, crate::store::now_millis());
    db.add_labels(&cals)?;
    Ok(cals.len())
}

/// The report's table of how each judge's calibration stands, for the run's judges.
pub(crate) fn table(
    db: &crate::store::Db,
    trial: &Trial,
    ds: Option<&crate::dataset::Dataset>,
    dirs: &crate::config::Dirs,
) -> anyhow::Result<Option<crate::report::tables::Table>> {
    let store = db.read()?;
    let verdicts = store.judge_verdicts(None)?;
    let models = super::run::load_models(dirs, None)
        .map(|f| f.models)
        .unwrap_or_default();
    let now = identities(trial, &verdicts, &models, ds, &store.records_where(None)?);
    let floor = Floor::default();
    let rows: Vec<Vec<String>> = standings(db, trial, &now, &floor)?
        .into_iter()
        .map(|(j, st)| vec![j, st.say()])
        .collect();
    Ok((!rows.is_empty()).then(|| crate::report::tables::Table {
        id: "judge_calibration",
        title: format!(
            "The judges' calibrations (what prism gate trusts: current, kappa and AC1 >= {} on >= {} labels)",
            crate::text::fixed(floor.kappa, 2),
            floor.labels
        ),
        header: vec!["judge", "calibration"],
        rows,
    }))
}
