//! `prism gate BASELINE CANDIDATE`: the regression gate for CI (`eval::gate` decides), with
//! the outputs CI systems read: Markdown (also into `$GITHUB_STEP_SUMMARY`), JUnit XML, JSON.
//! A side is a stored run (`RUN` or `RUN:MODEL`) or a baseline file written by `prism compare
//! RUN --save-baseline FILE`, so a CI job needs no copy of the old store.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::config::Dirs;
use crate::eval::compare::{self, Scored};
use crate::eval::gate;
use crate::review::calibration::{self, Calibration, Floor, Standing};

/// Which rows are tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// The H-Score and the four dimensions.
    Dimension,
    /// Those and every sub-task.
    Task,
}

#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// The baseline: RUN, RUN:MODEL, or a baseline file (`prism compare RUN --save-baseline F`).
    pub baseline: String,
    /// The candidate: RUN, RUN:MODEL, or a baseline file.
    pub candidate: String,
    /// The store the runs are in (default: prism.db in the data dir).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// McNemar's level, after Holm's correction over the rows tested.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Also require the increase to exceed this many rate points (a practical threshold: a
    /// change beyond noise but smaller passes).
    #[arg(long)]
    pub max_increase: Option<f64>,
    /// Rows tested: the H-Score and dimensions, or sub-tasks too.
    #[arg(long, value_enum, default_value_t = By::Dimension)]
    pub by: By,
    /// Write JUnit XML here (one test case per row tested).
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// The outcome as JSON on standard output instead of Markdown.
    #[arg(long)]
    pub json: bool,
    #[arg(long, default_value_t = 2000)]
    pub resamples: usize,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Broken items listed in the Markdown.
    #[arg(long, default_value_t = 20)]
    pub flips: usize,
    /// A row whose scores stand on an LLM judge decides the gate only when each such judge has
    /// a current calibration (`prism judges --save-calibration`) with kappa and Gwet's AC1 at
    /// least this; else it is advisory: shown, never failing. Rule-scored rows gate as ever.
    #[arg(long, default_value_t = 0.6, value_name = "AGREEMENT")]
    pub judge_floor: f64,
    /// ... and on at least this many labelled answers.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub judge_floor_labels: usize,
    /// Let rows stand on uncalibrated (or stale, or below-floor) judges fail the gate too.
    #[arg(long)]
    pub trust_uncalibrated_judges: bool,
    #[arg(long, hide = true)]
    pub models_file: Option<PathBuf>,
}

/// A baseline file: one side's item scores and what produced them.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Baseline {
    /// The format's version.
    pub prism_baseline: u32,
    /// The side it was taken from (`RUN:MODEL`).
    pub side: String,
    /// The run's settings in a line (model, endpoint's model id, sampling).
    pub settings: String,
    pub created_at: i64,
    pub scores: HashMap<String, Scored>,
    /// The calibrations of the judges its scores stand on, as saved in the store it was taken
    /// from (a gate in CI reads them here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calibrations: Vec<Calibration>,
}

/// The calibrations a store keeps of the judges `scores` stand on.
pub(crate) fn calibrations_of(
    db: &crate::store::Db,
    scores: &HashMap<String, Scored>,
) -> anyhow::Result<Vec<Calibration>> {
    let store = db.read()?;
    let judges: std::collections::BTreeSet<&str> = scores
        .values()
        .flat_map(|s| s.judges.iter().map(String::as_str))
        .collect();
    if judges.is_empty() {
        return Ok(Vec::new());
    }
    Ok(store
        .records_where::<Calibration>(None)?
        .into_iter()
        .filter(|c| judges.contains(c.identity.judge.as_str()))
        .collect())
}

pub(crate) fn save_baseline(file: &Path, b: &Baseline) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(b)?;
    let tmp = file.with_extension("tmp");
    std::fs::write(&tmp, text + "\n").with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, file).with_context(|| format!("writing {}", file.display()))?;
    Ok(())
}

fn load_baseline(file: &Path) -> anyhow::Result<Baseline> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let b: Baseline = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}: {}: not a prism baseline file ({e}); write one with prism compare RUN --save-baseline FILE",
            file.display(),
            e.line(),
            e.column()
        )
    })?;
    if b.prism_baseline != 1 {
        anyhow::bail!(
            "{}: baseline format {} (this prism reads 1)",
            file.display(),
            b.prism_baseline
        );
    }
    check_scores(file, &b)?;
    Ok(b)
}

/// A baseline's scores are scores: each mean in 0..=1 (a rate of 600% or -9,233 decides
/// nothing), each task a sub-task id (`DIM-CAT-Name`, no path). The first wrong one is named.
fn check_scores(file: &Path, b: &Baseline) -> anyhow::Result<()> {
    let mut items: Vec<(&String, &Scored)> = b.scores.iter().collect();
    items.sort_by(|x, y| x.0.cmp(y.0));
    for (item, s) in items {
        if let Some(m) = s.mean
            && !(0.0..=1.0).contains(&m)
        {
            anyhow::bail!(
                "{}: scores.{}.mean: {m} is not a score (0 to 1)",
                file.display(),
                crate::text::one_line(item)
            );
        }
        if crate::eval::metrics::dimension_of(&s.task).is_none()
            || s.task.contains(['/', '\\'])
            || s.task.contains("..")
        {
            anyhow::bail!(
                "{}: scores.{}.task: {:?} is not a sub-task id (DIM-CAT-Name)",
                file.display(),
                crate::text::one_line(item),
                crate::text::one_line(&s.task)
            );
        }
    }
    Ok(())
}

/// How each judge the sides' scores stand on stands: its newest calibration over all answers,
/// compared with the judge as this machine configures it (when it does).
fn judge_standings(
    sides: &[&HashMap<String, Scored>],
    cals: &[Calibration],
    floor: &Floor,
    args: &GateArgs,
    dirs: &Dirs,
) -> HashMap<String, Standing> {
    let models = super::run::load_models(dirs, args.models_file.as_deref()).ok();
    let mut out = HashMap::new();
    for s in sides {
        for j in s.values().flat_map(|x| x.judges.iter()) {
            if out.contains_key(j) {
                continue;
            }
            let now = models
                .as_ref()
                .and_then(|m| m.get(crate::review::judge_templates::model_of(j)))
                .map(|m| calibration::Identity {
                    judge: j.clone(),
                    endpoint: calibration::endpoint_of(m),
                    model_id: m.model_id().to_string(),
                    temperature: m.params.temperature,
                    ..Default::default()
                });
            let st = calibration::standing(cals, j, "all", now.as_ref(), None, floor);
            out.insert(j.clone(), st);
        }
    }
    out
}

/// Why `row` is advisory: the judges its items' scores stand on (either side) that are not
/// trusted, with their standing.
fn advisory(
    row: &gate::GateRow,
    sides: &[&HashMap<String, Scored>],
    standings: &HashMap<String, Standing>,
) -> Option<String> {
    use crate::eval::compare::Level;
    let in_row = |s: &Scored| match row.level {
        Level::HScore => true,
        Level::Dimension => {
            crate::eval::metrics::dimension_of(&s.task).is_some_and(|d| d.code() == row.name)
        }
        Level::Task => s.task == row.name,
    };
    let mut judges: Vec<&String> = sides
        .iter()
        .flat_map(|s| s.values())
        .filter(|s| in_row(s))
        .flat_map(|s| s.judges.iter())
        .collect();
    judges.sort();
    judges.dedup();
    let why: Vec<String> = judges
        .into_iter()
        .filter_map(|j| {
            let st = standings.get(j)?;
            (!st.trusted()).then(|| format!("judge {j}: {}", st.say()))
        })
        .collect();
    (!why.is_empty()).then(|| why.join("; "))
}

/// A side: a baseline file when `spec` names one on disk, else a run of the store.
fn side(
    spec: &str,
    store: &mut Option<crate::store::Db>,
    open: &dyn Fn() -> anyhow::Result<crate::store::Db>,
    calibrations: &mut Vec<Calibration>,
) -> anyhow::Result<(String, HashMap<String, Scored>)> {
    let path = Path::new(spec);
    if path.is_file() {
        let b = load_baseline(path)?;
        calibrations.extend(b.calibrations);
        return Ok((format!("{} ({})", b.side, path.display()), b.scores));
    }
    if store.is_none() {
        *store = Some(open()?);
    }
    let s = store.as_ref().expect("opened above");
    let side = crate::runs::resolve_side(s, spec)?;
    let scores = crate::runs::side_scores(s, &side)?;
    calibrations.extend(calibrations_of(s, &scores)?);
    Ok((side.label(), scores))
}

pub(crate) fn gate_cmd(args: GateArgs, dirs: &Dirs) -> anyhow::Result<i32> {
    match decide(&args, dirs) {
        Ok(code) => Ok(code),
        // Not decided is neither a pass nor a regression: CI sees 2.
        Err(e) => {
            crate::warn!("prism gate: {e:#}");
            Ok(2)
        }
    }
}

fn decide(args: &GateArgs, dirs: &Dirs) -> anyhow::Result<i32> {
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        anyhow::bail!("--alpha {}: a level between 0 and 1", args.alpha);
    }
    if args.resamples == 0 || args.resamples > 100_000 {
        anyhow::bail!("--resamples {}: 1 to 100,000", args.resamples);
    }
    let mut store = None;
    let open = || super::lane_flags::synced(args.db.as_ref(), dirs);
    let mut cals = Vec::new();
    let (la, sa) = side(&args.baseline, &mut store, &open, &mut cals)?;
    let (lb, sb) = side(&args.candidate, &mut store, &open, &mut cals)?;
    let c = compare::compare((&la, &sa), (&lb, &sb), args.resamples, args.seed);
    if c.paired == 0 {
        anyhow::bail!(
            "{la} and {lb} have no item scored on both (an item counts only under the sub-task both sides give it)"
        );
    }
    let mut g = gate::gate(&c, args.alpha, args.max_increase, args.by == By::Task);
    if !args.trust_uncalibrated_judges {
        let floor = Floor {
            kappa: args.judge_floor,
            ac1: args.judge_floor,
            labels: args.judge_floor_labels,
        };
        let standings = judge_standings(&[&sa, &sb], &cals, &floor, args, dirs);
        gate::advise(&mut g, |row| advisory(row, &[&sa, &sb], &standings));
    }
    // A gate that decided nothing passes nothing: no row with a rate on both sides (the items
    // paired fall under no dimension, or the sides file them under other tasks).
    if !g.rows.iter().any(|r| r.diff.is_some()) {
        anyhow::bail!(
            "{la} and {lb}: no row has a rate on both sides ({} items paired, {} left out: an item counts only under the task both sides give it)",
            c.paired,
            c.unpaired
        );
    }
    let md = gate::markdown(&g, args.flips);
    if let Ok(summary) = std::env::var("GITHUB_STEP_SUMMARY")
        && !summary.is_empty()
    {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&summary)
            .with_context(|| format!("opening $GITHUB_STEP_SUMMARY ({summary})"))?;
        f.write_all(md.as_bytes())?;
    }
    if let Some(file) = &args.junit {
        std::fs::write(file, gate::junit(&g))
            .with_context(|| format!("writing {}", file.display()))?;
    }
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&g)?);
    } else {
        crate::outln!("{md}");
    }
    Ok(i32::from(g.failed))
}
