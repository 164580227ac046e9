//! The models configuration: `models.toml` in the config dir, or `--models-file FILE`.
//!
//! API keys are never written in this file: `api_key_env` names the environment variable that
//! holds the key, and the key is read only when a request is built. [`Secret`] keeps it out of
//! `Debug` output, logs and error messages.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Timeouts;
use super::types::{Params, ProviderError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI-compatible chat completions (OpenAI, vLLM, SGLang, Ollama, llama.cpp, LM Studio,
    /// OpenRouter, DeepSeek, Groq, Together...).
    Openai,
    Anthropic,
    Gemini,
    /// The embedded llama.cpp model.
    Local,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
            ProviderKind::Local => "local",
        }
    }
}

/// An API key. Its `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: String) -> Secret {
        Secret(s)
    }
    /// The key itself, for the one place that needs it: the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl Secret {
    /// `text` with every occurrence of the key replaced by `***` (a server that echoes the key
    /// in an error or an answer must not get it stored, shown or exported). Keys shorter than 8
    /// characters are not looked for: they would match ordinary words.
    pub fn redact<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        if self.0.len() >= 8 && text.contains(self.0.as_str()) {
            std::borrow::Cow::Owned(text.replace(self.0.as_str(), "***"))
        } else {
            std::borrow::Cow::Borrowed(text)
        }
    }
}

/// Redacts `text` with an optional key.
pub(crate) fn redact<'a>(key: Option<&Secret>, text: &'a str) -> std::borrow::Cow<'a, str> {
    match key {
        Some(k) => k.redact(text),
        None => std::borrow::Cow::Borrowed(text),
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// What users type in `--models`.
    pub name: String,
    pub provider: ProviderKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Several replicas of one model: requests go to the least loaded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_urls: Vec<String>,
    /// The id sent to the server (defaults to `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The environment variable holding the API key (optional for local servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    #[serde(default = "default_concurrency")]
    pub max_concurrency: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_minute: Option<u32>,
    /// Default sampling parameters for this model (a run's own override them).
    #[serde(default)]
    pub params: Params,
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_timeout_secs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_timeout_secs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_secs: Option<f64>,
    /// The whole request (default 600 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout_secs: Option<f64>,
    /// The longest answer kept (default 1 MiB); a longer one is stored cut, with the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_answer_bytes: Option<usize>,
    /// Local models: the GGUF file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Local models: prompt as a completion (for base models) instead of a chat template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<bool>,
    /// Local models: llama.cpp threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// Local models: context size in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<u32>,
    /// Local models: the chat template name (llama.cpp built-in) when the file has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template: Option<String>,
}

fn default_concurrency() -> usize {
    8
}

fn default_retries() -> u32 {
    4
}

impl ModelConfig {
    pub fn model_id(&self) -> &str {
        self.model.as_deref().unwrap_or(&self.name)
    }

    /// Base URLs: `base_urls`, else `base_url`, else the provider's public endpoint.
    pub fn urls(&self) -> Vec<String> {
        if !self.base_urls.is_empty() {
            return self.base_urls.clone();
        }
        if let Some(u) = &self.base_url {
            return vec![u.clone()];
        }
        match self.provider {
            ProviderKind::Openai => vec!["https://api.openai.com/v1".into()],
            ProviderKind::Anthropic => vec!["https://api.anthropic.com".into()],
            ProviderKind::Gemini => vec!["https://generativelanguage.googleapis.com".into()],
            ProviderKind::Local => Vec::new(),
        }
    }

    /// Whether the key variable is set (for `prism models`), without reading the key out.
    pub fn key_status(&self) -> KeyStatus {
        match &self.api_key_env {
            None => KeyStatus::NotNeeded,
            Some(var) => match std::env::var_os(var) {
                Some(v) if !v.is_empty() => KeyStatus::Set(var.clone()),
                _ => KeyStatus::Missing(var.clone()),
            },
        }
    }

    /// Reads the key from the environment. A named variable that is unset is an error naming
    /// the model and the variable (never a value).
    pub fn api_key(&self) -> Result<Option<Secret>, ProviderError> {
        match &self.api_key_env {
            None => Ok(None),
            Some(var) => match std::env::var(var) {
                Ok(v) if !v.trim().is_empty() => Ok(Some(Secret(v.trim().to_string()))),
                _ => Err(ProviderError::Config(format!(
                    "model {:?}: its API key variable {var} is not set",
                    self.name
                ))),
            },
        }
    }

    pub fn timeouts(&self) -> Timeouts {
        let d = Timeouts::default();
        let secs = |v: Option<f64>, def: Duration| {
            v.filter(|s| s.is_finite() && *s > 0.0)
                .map(Duration::from_secs_f64)
                .unwrap_or(def)
        };
        Timeouts {
            connect: secs(self.connect_timeout_secs, d.connect),
            first_byte: secs(self.first_byte_timeout_secs, d.first_byte),
            idle: secs(self.idle_timeout_secs, d.idle),
            total: secs(self.request_timeout_secs, d.total),
        }
    }

    /// The longest answer kept.
    pub fn max_answer_bytes(&self) -> usize {
        self.max_answer_bytes
            .filter(|n| *n > 0)
            .unwrap_or(super::MAX_ANSWER_BYTES)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyStatus {
    NotNeeded,
    Set(String),
    Missing(String),
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelsFile {
    #[serde(default)]
    pub models: Vec<ModelConfig>,
}

impl ModelsFile {
    /// Reads a models file; errors name the file (and the TOML error names line and field).
    pub fn load(path: &Path) -> anyhow::Result<ModelsFile> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let f: ModelsFile = toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.to_string().trim()))?;
        let mut seen = std::collections::HashSet::new();
        for m in &f.models {
            if !seen.insert(m.name.as_str()) {
                anyhow::bail!("{}: model {:?} is defined twice", path.display(), m.name);
            }
            if m.max_concurrency == 0 {
                anyhow::bail!(
                    "{}: model {:?}: max_concurrency must be at least 1",
                    path.display(),
                    m.name
                );
            }
        }
        Ok(f)
    }

    pub fn get(&self, name: &str) -> Option<&ModelConfig> {
        self.models.iter().find(|m| m.name == name)
    }

    /// Resolves a comma-separated `--models` list, naming unknown models and the known ones.
    pub fn select(&self, names: &str) -> anyhow::Result<Vec<ModelConfig>> {
        let mut out = Vec::new();
        for n in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match self.get(n) {
                Some(m) => {
                    if !out.iter().any(|o: &ModelConfig| o.name == m.name) {
                        out.push(m.clone())
                    }
                }
                None => {
                    let known: Vec<_> = self.models.iter().map(|m| m.name.as_str()).collect();
                    anyhow::bail!(
                        "unknown model {n:?} (configured: {})",
                        if known.is_empty() {
                            "none; add [[models]] to models.toml".to_string()
                        } else {
                            known.join(", ")
                        }
                    );
                }
            }
        }
        if out.is_empty() {
            anyhow::bail!("no models given (--models a,b)");
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let s = Secret("sk-very-secret".into());
        assert!(!format!("{s:?} {s}").contains("very"));
    }

    #[test]
    fn parses_the_documented_shape() {
        let f: ModelsFile = toml::from_str(
            r#"
[[models]]
name = "stub"
provider = "openai"
base_url = "http://127.0.0.1:18080/v1"
model = "stub-1"
api_key_env = "STUB_API_KEY"
max_concurrency = 64

[[models]]
name = "fleet"
provider = "openai"
base_urls = ["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"]
requests_per_minute = 600
params = { temperature = 0.2, max_tokens = 64 }
"#,
        )
        .unwrap();
        assert_eq!(f.models[0].model_id(), "stub-1");
        assert_eq!(f.models[0].max_concurrency, 64);
        assert_eq!(f.models[1].urls().len(), 2);
        assert_eq!(f.models[1].params.max_tokens, Some(64));
        assert_eq!(f.models[1].model_id(), "fleet");
        assert!(f.select("stub,nope").is_err());
        assert_eq!(f.select("fleet, stub").unwrap().len(), 2);
    }

    #[test]
    fn typos_are_rejected() {
        let r: Result<ModelsFile, _> =
            toml::from_str("[[models]]\nname='a'\nprovider='openai'\nbase_ulr='x'\n");
        assert!(r.unwrap_err().to_string().contains("base_ulr"));
    }
}
