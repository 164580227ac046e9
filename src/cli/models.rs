//! `prism models`: the configured models and the built-in ones, each with its provider,
//! endpoint and whether its key is set (never the key).

use std::path::Path;

use crate::config::Dirs;
use crate::provider::config::KeyStatus;

use super::run::load_models_or_builtins;

/// `prism models`: names, providers, endpoints and whether each key is set (never the key).
pub(super) fn list_models(dirs: &Dirs, file: Option<&Path>) -> anyhow::Result<i32> {
    let (models, broken) = load_models_or_builtins(dirs, file);
    if let Some(e) = &broken {
        crate::warn!("prism: {e}");
        crate::warn!("the models file does not read: only the built-in models are listed");
    }
    if models.models.is_empty() {
        crate::say!(
            "no models configured; add [[models]] entries to {} (see docs/src/running-models.md, or `prism model install` for the built-in ones)",
            file.map(|f| f.display().to_string()).unwrap_or_else(|| dirs
                .config
                .join("models.toml")
                .display()
                .to_string())
        );
        return Ok(0);
    }
    crate::say!(
        "{:<16} {:<10} {:<24} {:<40} key",
        "name",
        "provider",
        "model",
        "endpoint"
    );
    for m in &models.models {
        let key = match m.key_status() {
            KeyStatus::NotNeeded => "not needed".to_string(),
            KeyStatus::Set(v) => format!("{v} set"),
            KeyStatus::Missing(v) => format!("{v} NOT SET"),
        };
        let endpoint = if m.provider == crate::provider::ProviderKind::Local {
            m.path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "(default model)".into())
        } else {
            m.urls().join(", ")
        };
        // One row per model: a name or id holding a line break would otherwise forge rows.
        let cell = crate::text::clean_line;
        crate::say!(
            "{:<16} {:<10} {:<24} {:<40} {}",
            cell(&m.name),
            m.provider.as_str(),
            cell(m.model_id()),
            cell(&endpoint),
            key
        );
    }
    Ok(i32::from(broken.is_some()))
}
