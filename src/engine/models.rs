//! Which model answers for a name in a stored run: every lane resumes, samples again or tests
//! stored answers with the configured model of that name (its endpoint or key may have moved
//! since), else with the settings the run recorded.

use crate::provider::ModelConfig;
use crate::store::ModelSnapshot;

/// The model to call for `name` in a run made with `snapshots`: the configured model of that
/// name (its endpoint and key may have moved since), else the settings the run recorded.
pub(crate) fn model_named(
    name: &str,
    configured: &[ModelConfig],
    snapshots: &[ModelSnapshot],
    run_id: &str,
) -> anyhow::Result<ModelConfig> {
    if let Some(m) = configured.iter().find(|m| m.name == name) {
        return Ok(m.clone());
    }
    snapshots
        .iter()
        .find(|m| m.name == name)
        .ok_or_else(|| anyhow::anyhow!("run {run_id} has no model {name}"))?
        .to_config()
        .map_err(|e| anyhow::anyhow!("run {run_id}: {e}"))
}
