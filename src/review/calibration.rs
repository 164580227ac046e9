//! A judge's calibration: how far it agreed with people when it was measured, bound to what it
//! was (its configured name, endpoint, model id, the judge templates' text, its temperature
//! and how often it was asked), so that a verdict is trusted only while the judge is the one
//! that was measured. `prism judges --save-calibration` keeps one per judge and row (all
//! answers, then per evaluator, dimension or sub-task); `prism gate` counts a judge's rows
//! only when its calibration is current and above the floor.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::judge_templates::{self, JudgeTemplate};
use super::judges::{Est, Trial, VsPeople};
use crate::store::lane_tables::{JUDGE_CALIBRATIONS, Table, Val};
use crate::store::record::{Fields, Record, int, real, text};

/// What a judge is: a verdict from another endpoint, model, template or temperature is
/// another judge's, whatever its name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    pub judge: String,
    /// `provider base_url` as configured (a local model: its provider alone).
    pub endpoint: String,
    /// The model id the judge is configured to ask for.
    pub model_id: String,
    /// SHA-256 of the judge templates' text (the dataset's `prompts/judges/`, or the user's).
    pub template_hash: String,
    pub temperature: Option<f64>,
    /// How many times each answer was asked (the run's `--judge-repeats`).
    pub repeats: u32,
}

/// One judge's calibration on one row, as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub uid: String,
    pub identity: Identity,
    /// `all`, or the evaluator, dimension or sub-task.
    pub row: String,
    pub n: usize,
    pub base_rate: Option<f64>,
    pub accuracy: Est,
    pub constant_accuracy: Option<f64>,
    pub kappa: Est,
    pub ac1: Est,
    pub pabak: Est,
    pub tpr: Option<f64>,
    pub tnr: Option<f64>,
    /// Of the answers it was asked at least twice, the share it flipped on.
    pub flip_share: Option<f64>,
    /// The reviewers whose labels it was measured on.
    pub reviewers: Vec<String>,
    pub saved_at: i64,
}

/// The floor a calibration must clear for its judge's verdicts to decide a gate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Floor {
    pub kappa: f64,
    pub ac1: f64,
    pub labels: usize,
}

impl Default for Floor {
    fn default() -> Floor {
        Floor {
            kappa: 0.6,
            ac1: 0.6,
            labels: 50,
        }
    }
}

/// Whether a judge's calibration holds now, and if not, why.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", content = "why", rename_all = "snake_case")]
pub enum Standing {
    /// Current and above the floor: its verdicts decide.
    Calibrated,
    /// No calibration saved for it.
    NotCalibrated,
    /// Saved, but the judge is no longer the one measured, or the labels grew past it.
    Stale(String),
    /// Current, but under the floor (its numbers said).
    BelowFloor(String),
}

impl Standing {
    pub fn trusted(&self) -> bool {
        matches!(self, Standing::Calibrated)
    }

    /// In a few words, for tables and gate rows.
    pub fn say(&self) -> String {
        match self {
            Standing::Calibrated => "calibrated".into(),
            Standing::NotCalibrated => {
                "not calibrated (prism judges --save-calibration, on people's labels)".into()
            }
            Standing::Stale(why) => format!("stale: {why}"),
            Standing::BelowFloor(why) => format!("below the floor: {why}"),
        }
    }
}

/// A configured model's endpoint as a calibration keeps it: `provider base_url`.
/// (A URL's user, password and query are left out: a key there never reaches the store.)
pub fn endpoint_of(m: &crate::provider::ModelConfig) -> String {
    match &m.base_url {
        Some(u) => {
            let shown = match reqwest::Url::parse(u) {
                Ok(mut url) => {
                    let _ = url.set_username("");
                    let _ = url.set_password(None);
                    url.set_query(None);
                    url.to_string()
                }
                Err(_) => "(unparsable URL)".to_string(),
            };
            format!("{} {shown}", m.provider.as_str())
        }
        None => m.provider.as_str().to_string(),
    }
}

/// SHA-256 of templates' text, in name order (what the judge is asked with).
pub fn template_hash<'a>(templates: impl IntoIterator<Item = (&'a String, &'a String)>) -> String {
    let mut h = Sha256::new();
    for (name, body) in templates {
        h.update(name.as_bytes());
        h.update([0]);
        h.update(body.as_bytes());
        h.update([0]);
    }
    format!("{:x}", h.finalize())
}

/// What each judge of the trial is now: as this machine configures its model (a judge it does
/// not configure keeps only its name and repeats), asked with `ds`'s judge templates and, for
/// a judge named `<model>~<label>`, the user's wordings stored under that label.
pub fn identities(
    trial: &Trial,
    verdicts: &[crate::store::JudgeVerdict],
    models: &[crate::provider::ModelConfig],
    ds: Option<&crate::dataset::Dataset>,
    stored: &[JudgeTemplate],
) -> Vec<Identity> {
    trial
        .judges
        .iter()
        .map(|j| {
            let m = models
                .iter()
                .find(|m| m.name == judge_templates::model_of(j));
            let templates = ds.map_or_else(String::new, |d| {
                let own = judge_templates::of_judge(stored, j);
                let overridden = own
                    .iter()
                    .map(|t| (format!("judge:{}", t.judge), t.text.clone()));
                let all: Vec<(String, String)> = d
                    .prompts
                    .judges
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .chain(overridden)
                    .collect();
                template_hash(all.iter().map(|(k, v)| (k, v)))
            });
            Identity {
                judge: j.clone(),
                endpoint: m.map(endpoint_of).unwrap_or_default(),
                model_id: m.map(|m| m.model_id().to_string()).unwrap_or_default(),
                template_hash: templates,
                temperature: m.and_then(|m| m.params.temperature),
                repeats: repeats(verdicts, j),
            }
        })
        .collect()
}

/// How many times the judge was asked per answer, most often.
fn repeats(verdicts: &[crate::store::JudgeVerdict], judge: &str) -> u32 {
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
pub fn standings(
    db: &crate::store::Db,
    trial: &Trial,
    now: &[Identity],
    floor: &Floor,
) -> crate::store::Result<Vec<(String, Standing)>> {
    let store = db.read()?;
    let saved = store.records_where::<Calibration>(None)?;
    let all = &trial.groups[0];
    Ok(trial
        .judges
        .iter()
        .map(|j| {
            let labels_now = all.vs_people.iter().find(|v| &v.judge == j).map(|v| v.n);
            let id = now.iter().find(|i| &i.judge == j);
            (j.clone(), standing(&saved, j, "all", id, labels_now, floor))
        })
        .collect())
}

/// The calibrations a trial makes: one per judge and row with people's labels under it.
pub fn from_trial(
    trial: &Trial,
    identities: &[Identity],
    reviewers: &[String],
    saved_at: i64,
) -> Vec<Calibration> {
    let mut out = Vec::new();
    for g in &trial.groups {
        for v in g.vs_people.iter().filter(|v| v.n > 0) {
            let Some(id) = identities.iter().find(|i| i.judge == v.judge) else {
                continue;
            };
            let flip_share = g
                .flips
                .iter()
                .find(|f| f.judge == v.judge)
                .and_then(|f| f.share);
            out.push(of(v, id, &g.name, flip_share, reviewers, saved_at));
        }
    }
    out
}

fn of(
    v: &VsPeople,
    id: &Identity,
    row: &str,
    flip_share: Option<f64>,
    reviewers: &[String],
    saved_at: i64,
) -> Calibration {
    Calibration {
        uid: format!("{}\u{1f}{row}\u{1f}{saved_at}", id.judge),
        identity: id.clone(),
        row: row.to_string(),
        n: v.n,
        base_rate: v.base_rate,
        accuracy: v.accuracy,
        constant_accuracy: v.constant_accuracy,
        kappa: v.kappa,
        ac1: v.ac1,
        pabak: v.pabak,
        tpr: v.tpr,
        tnr: v.tnr,
        flip_share,
        reviewers: reviewers.to_vec(),
        saved_at,
    }
}

/// The newest calibration of each judge on `row`.
pub fn newest<'a>(all: &'a [Calibration], judge: &str, row: &str) -> Option<&'a Calibration> {
    all.iter()
        .filter(|c| c.identity.judge == judge && c.row == row)
        .max_by_key(|c| c.saved_at)
}

/// How `judge` stands on `row`: its newest calibration there against what the judge is now
/// (`now`, when this machine knows it: each part it knows is compared) and the labels now
/// under it (`labels_now`: stale when they grew by a quarter).
pub fn standing(
    all: &[Calibration],
    judge: &str,
    row: &str,
    now: Option<&Identity>,
    labels_now: Option<usize>,
    floor: &Floor,
) -> Standing {
    let Some(c) = newest(all, judge, row) else {
        return Standing::NotCalibrated;
    };
    if let Some(now) = now
        && let Some(why) = changed(&c.identity, now)
    {
        return Standing::Stale(why);
    }
    if let Some(n) = labels_now
        && n * 4 >= c.n * 5
        && n > c.n
    {
        return Standing::Stale(format!(
            "the labels under it grew from {} to {n} (by a quarter or more)",
            c.n
        ));
    }
    let f2 = |v: Option<f64>| v.map_or("-".into(), |v| crate::text::fixed(v, 2));
    let numbers = format!(
        "kappa {}, AC1 {} on {} labels (floor: {} and {} on {})",
        f2(c.kappa.value),
        f2(c.ac1.value),
        c.n,
        crate::text::fixed(floor.kappa, 2),
        crate::text::fixed(floor.ac1, 2),
        floor.labels
    );
    let above = c.kappa.value.is_some_and(|k| k >= floor.kappa)
        && c.ac1.value.is_some_and(|a| a >= floor.ac1)
        && c.n >= floor.labels;
    if above {
        Standing::Calibrated
    } else {
        Standing::BelowFloor(numbers)
    }
}

/// What changed between the judge measured and the judge now, in words (the first part that
/// did); an empty part of `now` is one this machine does not know and is not compared.
pub fn changed(then: &Identity, now: &Identity) -> Option<String> {
    let differs = |a: &str, b: &str| !b.is_empty() && a != b;
    if differs(&then.endpoint, &now.endpoint) {
        return Some(format!(
            "the endpoint changed ({} → {})",
            then.endpoint, now.endpoint
        ));
    }
    if differs(&then.model_id, &now.model_id) {
        return Some(format!(
            "the model changed ({} → {})",
            then.model_id, now.model_id
        ));
    }
    if differs(&then.template_hash, &now.template_hash) {
        return Some("the template changed".into());
    }
    if now.repeats > 0 && then.repeats != now.repeats {
        return Some(format!(
            "the repeats changed ({} → {})",
            then.repeats, now.repeats
        ));
    }
    let t = |x: Option<f64>| x.map_or("default".into(), |v| v.to_string());
    if !now.endpoint.is_empty() && then.temperature != now.temperature {
        return Some(format!(
            "the temperature changed ({} → {})",
            t(then.temperature),
            t(now.temperature)
        ));
    }
    None
}

impl Record for Calibration {
    fn table() -> &'static Table {
        &JUDGE_CALIBRATIONS
    }

    fn fields(&self) -> Vec<(&'static str, Val)> {
        let est = |e: &Est| serde_json::to_string(e).unwrap_or_default();
        vec![
            ("uid", text(Some(&self.uid))),
            ("judge", text(Some(&self.identity.judge))),
            ("row_name", text(Some(&self.row))),
            ("endpoint", text(Some(&self.identity.endpoint))),
            ("model_id", text(Some(&self.identity.model_id))),
            ("template_hash", text(Some(&self.identity.template_hash))),
            ("temperature", real(self.identity.temperature)),
            ("repeats", int(self.identity.repeats)),
            ("n", int(self.n as i64)),
            ("base_rate", real(self.base_rate)),
            ("accuracy", text(Some(&est(&self.accuracy)))),
            ("constant_accuracy", real(self.constant_accuracy)),
            ("kappa", text(Some(&est(&self.kappa)))),
            ("ac1", text(Some(&est(&self.ac1)))),
            ("pabak", text(Some(&est(&self.pabak)))),
            ("tpr", real(self.tpr)),
            ("tnr", real(self.tnr)),
            ("flip_share", real(self.flip_share)),
            ("reviewers", text(Some(&self.reviewers.join("\n")))),
            ("created_at", int(self.saved_at)),
        ]
    }

    fn from_fields(f: &Fields<'_>) -> crate::store::Result<Self> {
        let est = |col: &'static str| -> Est {
            f.opt_text(col)
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or(Est {
                    value: None,
                    low: None,
                    high: None,
                })
        };
        Ok(Calibration {
            uid: f.text("uid")?,
            identity: Identity {
                judge: f.text("judge")?,
                endpoint: f.opt_text("endpoint").unwrap_or_default(),
                model_id: f.opt_text("model_id").unwrap_or_default(),
                template_hash: f.opt_text("template_hash").unwrap_or_default(),
                temperature: f.opt_real("temperature"),
                repeats: f.u32("repeats").unwrap_or(1),
            },
            row: f.text("row_name")?,
            n: f.int("n")?.max(0) as usize,
            base_rate: f.opt_real("base_rate"),
            accuracy: est("accuracy"),
            constant_accuracy: f.opt_real("constant_accuracy"),
            kappa: est("kappa"),
            ac1: est("ac1"),
            pabak: est("pabak"),
            tpr: f.opt_real("tpr"),
            tnr: f.opt_real("tnr"),
            flip_share: f.opt_real("flip_share"),
            reviewers: f
                .opt_text("reviewers")
                .map(|r| r.lines().map(str::to_string).collect())
                .unwrap_or_default(),
            saved_at: f.int("created_at")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cal(kappa: f64, ac1: f64, n: usize) -> Calibration {
        let e = |v: f64| Est {
            value: Some(v),
            low: None,
            high: None,
        };
        Calibration {
            uid: "u".into(),
            identity: Identity {
                judge: "j".into(),
                endpoint: "openai http://a/v1".into(),
                model_id: "m1".into(),
                template_hash: "t1".into(),
                temperature: Some(0.0),
                repeats: 1,
            },
            row: "all".into(),
            n,
            base_rate: Some(0.13),
            accuracy: e(0.9),
            constant_accuracy: Some(0.87),
            kappa: e(kappa),
            ac1: e(ac1),
            pabak: e(0.8),
            tpr: None,
            tnr: None,
            flip_share: None,
            reviewers: vec!["ann".into()],
            saved_at: 1,
        }
    }

    #[test]
    fn each_part_of_the_identity_makes_it_stale() {
        let all = [cal(0.7, 0.8, 60)];
        let f = Floor::default();
        let now = all[0].identity.clone();
        assert_eq!(
            standing(&all, "j", "all", Some(&now), Some(60), &f),
            Standing::Calibrated
        );
        let stale = |edit: &dyn Fn(&mut Identity), word: &str| {
            let mut n = now.clone();
            edit(&mut n);
            match standing(&all, "j", "all", Some(&n), None, &f) {
                Standing::Stale(why) => assert!(why.contains(word), "{why}"),
                other => panic!("{word}: {other:?}"),
            }
        };
        stale(&|n| n.endpoint = "openai http://b/v1".into(), "endpoint");
        stale(&|n| n.model_id = "m2".into(), "model");
        stale(&|n| n.template_hash = "t2".into(), "template");
        stale(&|n| n.temperature = Some(0.7), "temperature");
        stale(&|n| n.repeats = 3, "repeats");
        // The labels grew by a quarter: 60 → 75.
        match standing(&all, "j", "all", Some(&now), Some(75), &f) {
            Standing::Stale(why) => assert!(why.contains("from 60 to 75"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(standing(&all, "j", "all", Some(&now), Some(74), &f).trusted());
        assert_eq!(
            standing(&all, "k", "all", None, None, &f),
            Standing::NotCalibrated
        );
    }

    #[test]
    fn the_floor_needs_kappa_ac1_and_labels() {
        let f = Floor::default();
        for (c, ok) in [
            (cal(0.7, 0.8, 60), true),
            (cal(0.5, 0.8, 60), false),
            (cal(0.7, 0.5, 60), false),
            (cal(0.7, 0.8, 40), false),
        ] {
            let s = standing(&[c], "j", "all", None, None, &f);
            assert_eq!(s.trusted(), ok, "{s:?}");
        }
    }
}
