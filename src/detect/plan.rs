//! What a detection will do, decided once for every front-end: which targets (stored answers,
//! items, claims), with which models (a configured model of the name, else the settings the
//! run was made with), and whether it starts, resumes or samples a target again. `prism
//! detect`, `prism autohall` and the TUI build a [`Plan`] here and [`Plan::launch`] it; they
//! only parse, show and dispatch.

use super::run::{DetectEvent, DetectOptions, DetectSummary, Stored};
use super::targets;
use crate::dataset::Dataset;
use crate::dataset::claims::ClaimSet;
pub(crate) use crate::engine::models::model_named;
use crate::provider::{ModelConfig, Params};
use crate::store::{
    DetectConfig, DetectKind, DetectRun, DetectWrite, ModelSnapshot, ResponseRecord, RunRecord,
    RunStatus,
};

/// How a plan runs: a new run, the rest of a stored one, or one more round for one target.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Launch {
    Start,
    Resume,
    Again { target: u32 },
}

/// A detection ready to run: the run as it will be stored, what is stored of it already (the
/// new targets, for a new run), the models that answer, and how it goes.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub run: DetectRun,
    pub stored: Stored,
    pub models: Vec<ModelConfig>,
    pub judge: Option<ModelConfig>,
    pub launch: Launch,
}

/// What a new detection is asked with, beside its targets and models.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    /// Samples per answer (K), 1 to 20.
    pub k: u32,
    pub judge: Option<ModelConfig>,
    /// Overrides of the samples' parameters (answers: the answer's own otherwise).
    pub params: Params,
    /// Claims: generation temperatures.
    pub temperatures: Vec<f64>,
    pub seed: u64,
    pub balanced_only: bool,
    /// The filter that chose the answers or claims, as the user wrote it.
    pub filter: Option<String>,
    /// The user's wordings of the prompts.
    pub templates: crate::detect::templates::Templates,
}

/// Attempts at a judge reply that can be read (AutoHall asks again when it cannot read one).
const JUDGE_ATTEMPTS: u32 = 3;

impl Settings {
    pub(crate) fn with_k(k: u32) -> Settings {
        Settings {
            k,
            ..Settings::default()
        }
    }

    fn new_run(&self, kind: DetectKind, dataset: String, models: &[ModelConfig]) -> DetectRun {
        DetectRun {
            id: crate::store::new_run_id(),
            created_at: crate::store::now_secs(),
            kind,
            dataset,
            config: DetectConfig {
                k: self.k.clamp(1, 20),
                models: models.iter().map(ModelSnapshot::from).collect(),
                judge: self.judge.as_ref().map(ModelSnapshot::from),
                params: self.params.clone(),
                temperatures: self.temperatures.clone(),
                seed: self.seed,
                balanced_only: self.balanced_only,
                judge_attempts: JUDGE_ATTEMPTS,
                source_run: None,
                filter: self.filter.clone(),
                templates: self.templates.clone(),
                ..DetectConfig::default()
            },
            status: RunStatus::Running,
        }
    }
}

/// The distinct models of `targets`, in name order, each as [`model_named`] finds it.
fn models_of(
    targets: &[crate::store::Target],
    configured: &[ModelConfig],
    snapshots: &[ModelSnapshot],
    run_id: &str,
) -> anyhow::Result<Vec<ModelConfig>> {
    let mut names: Vec<&str> = targets.iter().map(|t| t.model.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|n| model_named(n, configured, snapshots, run_id))
        .collect()
}

fn fresh(
    run: DetectRun,
    targets: Vec<crate::store::Target>,
    models: Vec<ModelConfig>,
    judge: Option<ModelConfig>,
) -> Plan {
    Plan {
        run,
        stored: Stored {
            targets,
            ..Stored::default()
        },
        models,
        judge,
        launch: Launch::Start,
    }
}

/// Stored answers of `source` (already chosen by the caller), each sampled by its own model.
/// Returns the plan and the item ids of answers left out because `ds` lacks their item.
pub(crate) fn answers(
    source: &RunRecord,
    ds: &Dataset,
    responses: &[ResponseRecord],
    configured: &[ModelConfig],
    settings: &Settings,
) -> anyhow::Result<(Plan, Vec<String>)> {
    let mut run = settings.new_run(DetectKind::Answers, source.dataset.clone(), &[]);
    run.config.source_run = Some(source.id.clone());
    let (targets, unknown) = targets::from_answers(&run.id, ds, responses);
    if targets.is_empty() {
        anyhow::bail!(if responses.iter().any(|r| r.text.is_some()) {
            "those answers' items are not in the dataset: there is nothing to test"
        } else {
            "no finished answer: there is nothing to test"
        });
    }
    let models = models_of(&targets, configured, &source.config.models, &source.id)?;
    run.config.models = models.iter().map(ModelSnapshot::from).collect();
    Ok((fresh(run, targets, models, settings.judge.clone()), unknown))
}

/// Items for models: each model's newest stored answer to each item is tested, or asked for
/// first when there is none.
pub(crate) fn items(
    db: &crate::store::Db,
    ds: &Dataset,
    dataset_ref: &str,
    items: &[usize],
    models: Vec<ModelConfig>,
    settings: &Settings,
) -> anyhow::Result<Plan> {
    let reader = db.read()?;
    if models.is_empty() {
        anyhow::bail!("choose models first");
    }
    let run = settings.new_run(DetectKind::Answers, dataset_ref.to_string(), &models);
    let mut all = Vec::new();
    for &i in items {
        let stored = reader.responses_for_item(&ds.items[i].id)?;
        for m in &models {
            let newest = stored
                .iter()
                .filter(|r| r.model == m.name && r.text.is_some())
                .max_by_key(|r| (r.created_at, r.run_id.clone(), r.job_idx));
            let found = match newest {
                Some(r) => targets::from_answers(&run.id, ds, std::slice::from_ref(r)).0,
                None => targets::from_items(
                    &run.id,
                    ds,
                    &[i],
                    std::slice::from_ref(m),
                    &settings.params,
                ),
            };
            for mut t in found {
                t.idx = all.len() as u32;
                all.push(t);
            }
        }
    }
    Ok(fresh(run, all, models, settings.judge.clone()))
}

/// Claims for models at each of the settings' temperatures (AutoHall's pipeline).
pub(crate) fn claims(
    set: &ClaimSet,
    dataset_ref: String,
    models: Vec<ModelConfig>,
    settings: &Settings,
) -> anyhow::Result<Plan> {
    if models.is_empty() {
        anyhow::bail!("choose models first");
    }
    if set.claims.is_empty() {
        anyhow::bail!("no true or false claims to run");
    }
    if settings.temperatures.is_empty()
        || settings
            .temperatures
            .iter()
            .any(|t| !(0.0..=2.0).contains(t))
    {
        anyhow::bail!("each temperature must be between 0 and 2");
    }
    let run = settings.new_run(DetectKind::Claims, dataset_ref, &models);
    let ts = targets::from_claims(
        &run.id,
        set,
        &models,
        &settings.temperatures,
        &settings.params,
    );
    Ok(fresh(run, ts, models, settings.judge.clone()))
}

/// A stored run to finish: only what is missing or failed is asked. `configured`: this
/// machine's models, which answer for the run's models of their names (a store never names an
/// endpoint or a key); `judge` replaces the recorded judge.
pub(crate) fn resume(
    db: &crate::store::Db,
    id: &str,
    configured: &[ModelConfig],
    judge: Option<ModelConfig>,
) -> anyhow::Result<Plan> {
    let reader = db.read()?;
    let run = reader
        .detect_run(id)?
        .ok_or_else(|| anyhow::anyhow!("no detection run {id}"))?;
    let stored = Stored::load(db, id)?;
    let snaps = &run.config.models;
    let models = snaps
        .iter()
        .map(|m| model_named(&m.name, configured, snaps, &run.id))
        .collect::<anyhow::Result<_>>()?;
    let judge = match judge {
        Some(j) => Some(j),
        None => recorded_judge(&run, configured)?,
    };
    Ok(Plan {
        run,
        stored,
        models,
        judge,
        launch: Launch::Resume,
    })
}

/// The judge a stored run recorded (a configured model of its name, else its settings), if any.
fn recorded_judge(
    run: &DetectRun,
    configured: &[ModelConfig],
) -> anyhow::Result<Option<ModelConfig>> {
    run.config
        .judge
        .as_ref()
        .map(|j| model_named(&j.name, configured, std::slice::from_ref(j), &run.id))
        .transpose()
}

/// One more round of K samples for one target of a stored run.
pub(crate) fn again(
    db: &crate::store::Db,
    id: &str,
    target: u32,
    configured: &[ModelConfig],
) -> anyhow::Result<Plan> {
    let reader = db.read()?;
    let run = reader
        .detect_run(id)?
        .ok_or_else(|| anyhow::anyhow!("no detection run {id}"))?;
    let mut stored = Stored::load(db, id)?;
    let t = stored
        .targets
        .iter_mut()
        .find(|t| t.idx == target)
        .ok_or_else(|| anyhow::anyhow!("detection run {id} has no target {target}"))?;
    t.rounds += 1;
    let model = model_named(&t.model.clone(), configured, &run.config.models, &run.id)?;
    let judge = recorded_judge(&run, configured)?;
    Ok(Plan {
        run,
        stored,
        models: vec![model],
        judge,
        launch: Launch::Again { target },
    })
}

impl Plan {
    /// The target a screen shows first.
    pub(crate) fn focus(&self) -> u32 {
        match self.launch {
            Launch::Again { target } => target,
            _ => 0,
        }
    }

    /// Runs the plan to its end (or cancellation), storing everything as it arrives.
    pub(crate) async fn launch(
        self,
        lane: crate::engine::Lane<DetectEvent>,
        opts: DetectOptions,
    ) -> Result<DetectSummary, crate::engine::harness::RunError> {
        let Plan {
            run,
            stored,
            models,
            judge,
            launch,
        } = self;
        let mut work = super::run::Work {
            run,
            stored,
            only: None,
            models,
            judge,
        };
        match launch {
            Launch::Start => super::run::start(lane, work, opts).await,
            Launch::Resume => super::run::resume(lane, work, opts).await,
            Launch::Again { target } => {
                let add = DetectWrite::AddRound {
                    run: work.run.id.clone(),
                    target,
                };
                lane.store.detect(add).await.map_err(|e| {
                    crate::engine::harness::RunError::store("saving the new round", e)
                })?;
                work.only = Some(vec![target]);
                super::run::resume(lane, work, opts).await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(name: &str, url: &str) -> ModelConfig {
        toml::from_str(&format!(
            "name = {name:?}\nprovider = \"openai\"\nbase_url = {url:?}"
        ))
        .unwrap()
    }

    #[test]
    fn only_a_configured_model_answers_never_the_recorded_settings() {
        let mut recorded = model("m", "http://127.0.0.1:1/v1");
        recorded.api_key_env = Some("MY_SECRET_VAR".into());
        let snaps = vec![ModelSnapshot::from(&recorded)];
        let now = model("m", "http://127.0.0.1:2/v1");
        let got = model_named("m", std::slice::from_ref(&now), &snaps, "r1").unwrap();
        assert_eq!(got.base_url.as_deref(), Some("http://127.0.0.1:2/v1"));
        assert_eq!(got.api_key_env, None);
        // Not configured here: refused, never called at the endpoint the store names.
        let e = model_named("m", &[], &snaps, "r1").unwrap_err().to_string();
        assert!(e.contains("not in this machine's models file"), "{e}");
        assert!(
            !e.contains("127.0.0.1") && !e.contains("MY_SECRET_VAR"),
            "{e}"
        );
        let e = model_named("x", &[], &snaps, "r1").unwrap_err().to_string();
        assert!(e.contains("run r1 has no model x"), "{e}");
        let e = model_named("imp", &[], &[ModelSnapshot::imported("imp")], "r1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("run r1: ") && e.contains("imported"), "{e}");
    }

    #[test]
    fn claims_make_one_target_per_claim_model_and_temperature() {
        let set = crate::dataset::claims::sample_claims().set;
        let models = vec![
            model("a", "http://127.0.0.1:1/v1"),
            model("b", "http://127.0.0.1:1/v1"),
        ];
        let s = Settings {
            temperatures: vec![0.1, 0.9],
            ..Settings::with_k(40)
        };
        let p = claims(&set, "<sample-claims>".into(), models.clone(), &s).unwrap();
        assert_eq!(p.stored.targets.len(), set.claims.len() * 2 * 2);
        assert_eq!(p.run.config.k, 20, "K is clamped to 1..=20");
        assert_eq!(p.run.config.judge_attempts, JUDGE_ATTEMPTS);
        assert_eq!(p.launch, Launch::Start);
        let bad = Settings {
            temperatures: vec![2.5],
            ..Settings::with_k(6)
        };
        assert!(claims(&set, "x".into(), models.clone(), &bad).is_err());
        assert!(claims(&set, "x".into(), Vec::new(), &s).is_err());
    }

    #[test]
    fn sampling_again_keeps_the_recorded_judge_and_adds_a_round() {
        let set = crate::dataset::claims::sample_claims().set;
        let models = vec![model("a", "http://127.0.0.1:1/v1")];
        let s = Settings {
            temperatures: vec![0.5],
            judge: Some(model("judge", "http://127.0.0.1:3/v1")),
            ..Settings::with_k(2)
        };
        let p = claims(&set, "<sample-claims>".into(), models, &s).unwrap();
        let mut store = crate::store::Store::open_in_memory().unwrap();
        store
            .apply_detect(&[DetectWrite::CreateRun(
                Box::new(p.run.clone()),
                p.stored.targets.clone(),
            )])
            .unwrap();
        let db = &crate::store::Db::over(store);
        // Not configured on this machine: refused (a store never names an endpoint).
        let e = again(db, &p.run.id, 1, &[]).unwrap_err().to_string();
        assert!(e.contains("not in this machine's models file"), "{e}");
        let configured = vec![
            model("a", "http://127.0.0.1:1/v1"),
            model("judge", "http://127.0.0.1:3/v1"),
        ];
        let one = again(db, &p.run.id, 1, &configured).unwrap();
        assert_eq!(one.launch, Launch::Again { target: 1 });
        assert_eq!(one.focus(), 1);
        assert_eq!(one.judge.as_ref().map(|j| j.name.as_str()), Some("judge"));
        let t = one.stored.targets.iter().find(|t| t.idx == 1).unwrap();
        assert_eq!(t.rounds, 2);
        assert_eq!(one.models.len(), 1);
        assert!(again(db, &p.run.id, 9999, &configured).is_err());
        let r = resume(db, &p.run.id, &configured, None).unwrap();
        assert_eq!(r.launch, Launch::Resume);
        assert_eq!(r.stored.targets.len(), p.stored.targets.len());
    }
}
