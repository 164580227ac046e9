//! `prism judges --save-calibration` and the calibration lines of `prism judges`: each judge's
//! numbers against people saved with what the judge is (`review::calibration`), and whether
//! the calibration saved still holds.

use std::collections::HashMap;

use crate::dataset::Dataset;
use crate::provider::ModelsFile;
use crate::review::calibration::{self, Calibration, Floor, Identity, Standing};
use crate::review::judges::Trial;
use crate::store::{JudgeVerdict, Store};

/// What each judge of the trial is now: as this machine configures it (a judge it does not
/// configure keeps only its name and repeats), asked with `ds`'s judge templates.
pub(crate) fn identities(
    trial: &Trial,
    verdicts: &[JudgeVerdict],
    models: Option<&ModelsFile>,
    ds: Option<&Dataset>,
) -> Vec<Identity> {
    let templates = ds
        .map(|d| calibration::template_hash(d.prompts.judges.iter()))
        .unwrap_or_default();
    trial
        .judges
        .iter()
        .map(|j| {
            let m = models.and_then(|f| f.get(j));
            Identity {
                judge: j.clone(),
                endpoint: m.map(calibration::endpoint_of).unwrap_or_default(),
                model_id: m.map(|m| m.model_id().to_string()).unwrap_or_default(),
                template_hash: templates.clone(),
                temperature: m.and_then(|m| m.params.temperature),
                repeats: repeats(verdicts, j),
            }
        })
        .collect()
}

/// How many times the judge was asked per answer, most often.
fn repeats(verdicts: &[JudgeVerdict], judge: &str) -> u32 {
    let mut per: HashMap<(&str, u32), u32> = HashMap::new();
    for v in verdicts.iter().filter(|v| v.judge == judge) {
        *per.entry((v.run_id.as_str(), v.job_idx)).or_default() += 1;
    }
    let mut counts: HashMap<u32, usize> = HashMap::new();
    for n in per.values() {
        *counts.entry(*n).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|(n, c)| (*c, *n))
        .map_or(1, |(n, _)| n)
}

/// Each judge's standing over all answers, with what decides it.
pub(crate) fn standings(
    store: &Store,
    trial: &Trial,
    now: &[Identity],
    floor: &Floor,
) -> anyhow::Result<Vec<(String, Standing)>> {
    let saved = store.records_where::<Calibration>(None)?;
    let all = &trial.groups[0];
    Ok(trial
        .judges
        .iter()
        .map(|j| {
            let labels_now = all.vs_people.iter().find(|v| &v.judge == j).map(|v| v.n);
            let id = now.iter().find(|i| &i.judge == j);
            (
                j.clone(),
                calibration::standing(&saved, j, "all", id, labels_now, floor),
            )
        })
        .collect())
}

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
