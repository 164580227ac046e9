//! Which model answers for a name in a stored run. A store (a shared database, an imported
//! or pulled run) is written by people who do not all hold the same keys, so it never chooses
//! an endpoint, a key variable or a model file: every lane resumes, samples again or tests
//! stored answers with this machine's configured model of that name, and a name this machine
//! does not configure is refused with what to do.

use crate::provider::ModelConfig;
use crate::store::{ModelSnapshot, RunRecord};

/// The model to call for `name` in a run made with `snapshots`: this machine's configured
/// model of that name (its own endpoint and key), never the settings the run recorded.
pub(crate) fn model_named(
    name: &str,
    configured: &[ModelConfig],
    snapshots: &[ModelSnapshot],
    run_id: &str,
) -> anyhow::Result<ModelConfig> {
    if let Some(m) = configured.iter().find(|m| m.name == name) {
        return Ok(m.clone());
    }
    match snapshots.iter().find(|m| m.name == name) {
        None => anyhow::bail!("run {run_id} has no model {name}"),
        // An imported model mapped to a configured one: that one answers in its place.
        Some(s) if s.is_imported() && s.answered_by.is_some() => {
            let by = s.answered_by.as_deref().unwrap_or_default();
            match configured.iter().find(|m| m.name == by) {
                Some(m) => Ok(m.clone()),
                None => anyhow::bail!(
                    "run {run_id}: {name:?} is answered by {by:?}, but {}",
                    not_configured(by)
                ),
            }
        }
        Some(s) if s.is_imported() => anyhow::bail!(
            "run {run_id}: model {name:?} was imported from files: there is no endpoint to call; \
             name a configured model to answer in its place"
        ),
        Some(_) => anyhow::bail!("run {run_id}: {}", not_configured(name)),
    }
}

/// Why a run's model that this machine does not configure is not called, and what to do.
pub(crate) fn not_configured(name: &str) -> String {
    format!(
        "model {name:?} is not in this machine's models file; prism never calls an endpoint or \
         reads a key variable that a store names: add a model named {name:?} to models.toml \
         (or --models-file)"
    )
}

/// The models a resumed or joined run calls, and the run's models left out.
#[derive(Debug)]
pub struct ResumeModels {
    pub models: Vec<ModelConfig>,
    /// Each model of the run that nobody here can answer for, with why; its jobs stay pending
    /// (for a worker that has it, or a later `--resume`).
    pub skipped: Vec<(String, String)>,
    /// What the user should know about the models chosen (an answering model id that differs
    /// from the one the run recorded).
    pub notes: Vec<String>,
    /// The models called at the endpoint the run recorded, without a key
    /// (`--recorded-endpoints`).
    pub recorded: Vec<String>,
}

/// The models a resumed (or joined) run calls. A run's recorded settings come from a store,
/// which may be shared or imported, so they never choose an endpoint, a key variable or a model
/// file: each of the run's models answers with, in order,
/// - a model the user names (`--models`) of the same name, or for a model imported from files
///   (which has no endpoint) the next named one;
/// - this machine's configured model of that name (`own`), with the generation parameters the
///   run recorded, so the run's answers are made alike;
/// - with `recorded_endpoints`, the endpoint the run recorded, called without any key;
/// - else it is skipped, with why.
///
/// The answers keep the run's model names. Only when no model is left is it an error.
pub fn resume_models(
    run: &RunRecord,
    named: &[ModelConfig],
    own: &[ModelConfig],
    recorded_endpoints: bool,
) -> anyhow::Result<ResumeModels> {
    let mut spare: std::collections::VecDeque<&ModelConfig> = named
        .iter()
        .filter(|n| !run.config.models.iter().any(|m| m.name == n.name))
        .collect();
    let mut out = ResumeModels {
        models: Vec::new(),
        skipped: Vec::new(),
        notes: Vec::new(),
        recorded: Vec::new(),
    };
    for m in &run.config.models {
        let chosen = named
            .iter()
            .find(|n| n.name == m.name)
            .or_else(|| m.is_imported().then(|| spare.pop_front()).flatten())
            .cloned();
        let chosen = match chosen {
            Some(c) => Ok(c),
            None if m.is_imported() => Err(format!(
                "model {:?} was imported from files: there is no endpoint to call; name a \
                 configured model to answer in its place (prism run --resume {} --models NAME)",
                m.name, run.id
            )),
            None => match own.iter().find(|o| o.name == m.name) {
                Some(o) => {
                    let mut c = o.clone();
                    c.params = m.params.clone();
                    if let Some(id) = &m.model
                        && c.model_id() != id
                    {
                        out.notes.push(format!(
                            "model {:?}: this machine's models file calls {:?}, the run recorded {:?}",
                            m.name,
                            c.model_id(),
                            id
                        ));
                    }
                    Ok(c)
                }
                None if recorded_endpoints => {
                    let c = m.keyless_endpoint();
                    if c.is_ok() {
                        out.recorded.push(m.name.clone());
                    }
                    c
                }
                None => Err(not_configured(&m.name)),
            },
        };
        match chosen {
            Ok(mut c) => {
                c.name = m.name.clone();
                out.models.push(c);
            }
            Err(why) => out.skipped.push((m.name.clone(), why)),
        }
    }
    if let Some(extra) = spare.front() {
        anyhow::bail!(
            "run {}: --models {:?} matches none of its models ({})",
            run.id,
            extra.name,
            run.config
                .models
                .iter()
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if out.models.is_empty() {
        anyhow::bail!(
            "run {}: none of its models can answer here: {}",
            run.id,
            out.skipped
                .iter()
                .map(|(_, why)| why.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{RunConfig, RunStatus};

    fn model(toml_text: &str) -> ModelConfig {
        toml::from_str(toml_text).unwrap()
    }

    fn run_of(models: &[ModelConfig]) -> RunRecord {
        RunRecord {
            id: "r1".into(),
            created_at: 0,
            dataset: "d".into(),
            config: RunConfig {
                models: models.iter().map(ModelSnapshot::from).collect(),
                ..RunConfig::default()
            },
            status: RunStatus::Running,
        }
    }

    #[test]
    fn a_run_model_this_machine_lacks_is_skipped_never_called_with_the_recorded_key() {
        let planted = model(
            "name = \"exfil\"\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"MY_SECRET_VAR\"",
        );
        let ours = model(
            "name = \"gpt\"\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:8/v1\"\nmodel = \"gpt-4o\"\napi_key_env = \"OUR_KEY\"\nparams = { temperature = 0.9 }",
        );
        let mut recorded = ours.clone();
        recorded.base_url = Some("http://attacker.example/v1".into());
        recorded.api_key_env = Some("PGPASSWORD".into());
        recorded.params.temperature = Some(0.2);
        let run = run_of(&[recorded, planted]);
        let got = resume_models(&run, &[], std::slice::from_ref(&ours), false).unwrap();
        // Ours answers with our endpoint and key variable, the run's parameters.
        assert_eq!(got.models.len(), 1);
        assert_eq!(
            got.models[0].base_url.as_deref(),
            Some("http://127.0.0.1:8/v1")
        );
        assert_eq!(got.models[0].api_key_env.as_deref(), Some("OUR_KEY"));
        assert_eq!(got.models[0].params.temperature, Some(0.2));
        // The model only the store names is skipped, with why.
        assert_eq!(got.skipped.len(), 1);
        assert_eq!(got.skipped[0].0, "exfil");
        assert!(
            got.skipped[0]
                .1
                .contains("not in this machine's models file")
        );
        // With --recorded-endpoints it is called where the run says, with no key at all.
        let got = resume_models(&run, &[], std::slice::from_ref(&ours), true).unwrap();
        let exfil = got.models.iter().find(|m| m.name == "exfil").unwrap();
        assert_eq!(exfil.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
        assert_eq!(exfil.api_key_env, None);
        // Nothing configured at all: an error that names the way out.
        let e = resume_models(&run, &[], &[], false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("none of its models can answer here"), "{e}");
        assert!(
            !e.contains("MY_SECRET_VAR") && !e.contains("PGPASSWORD"),
            "{e}"
        );
    }

    #[test]
    fn a_different_model_id_is_said() {
        let ours = model("name = \"gpt\"\nprovider = \"openai\"\nmodel = \"gpt-4o-mini\"");
        let mut recorded = ours.clone();
        recorded.model = Some("gpt-4o".into());
        let got = resume_models(&run_of(&[recorded]), &[], &[ours], false).unwrap();
        assert!(got.notes[0].contains("gpt-4o-mini"), "{:?}", got.notes);
    }
}
