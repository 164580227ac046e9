//! The user's configuration file and the directories prism uses.
//!
//! `config.toml` lives in the platform config directory (`prism config path` prints it);
//! `PRISM_CONFIG_DIR` and `PRISM_DATA_DIR` override the directories (tests and portable setups).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Theme name (bundled or a file in `<config dir>/themes/`).
    pub theme: Option<String>,
    /// The judge model for `prism score` (a name from the models file) when `--judge` is not given.
    pub judge: Option<String>,
    /// Your name on review decisions when `--reviewer` is not given.
    pub reviewer: Option<String>,
    /// A panel's shared review database (`postgres://user@host/db`; the password from
    /// PGPASSWORD or a pgpass file, never here) when `--db` is not given.
    pub db: Option<String>,
    /// Blind review: the review screen names the models of an item's answers "model A",
    /// "model B", ... instead of their names (`--blind` does the same for one session).
    pub blind: Option<bool>,
    /// Keybindings: `action = ["key", ...]` replaces that action's keys everywhere;
    /// `[keys.<mode>]` tables (`browse`, `compare`, `heatmap`, ...) replace them in one mode.
    #[serde(default)]
    pub keys: BTreeMap<String, KeyEntry>,
}

/// One entry of `[keys]`: an action's keys for every mode, or a mode's own table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum KeyEntry {
    Keys(Vec<String>),
    Mode(BTreeMap<String, Vec<String>>),
}

/// Where prism keeps things.
#[derive(Debug, Clone)]
pub struct Dirs {
    pub config: PathBuf,
    pub data: PathBuf,
}

impl Dirs {
    pub fn resolve() -> Dirs {
        let project = directories::ProjectDirs::from("", "", "prism");
        let config = std::env::var_os("PRISM_CONFIG_DIR")
            .map(PathBuf::from)
            .or_else(|| project.as_ref().map(|p| p.config_dir().to_path_buf()))
            .unwrap_or_else(|| PathBuf::from(".prism"));
        let data = std::env::var_os("PRISM_DATA_DIR")
            .map(PathBuf::from)
            .or_else(|| project.as_ref().map(|p| p.data_dir().to_path_buf()))
            .unwrap_or_else(|| PathBuf::from(".prism"));
        Dirs { config, data }
    }

    pub fn config_file(&self) -> PathBuf {
        self.config.join("config.toml")
    }

    pub fn themes(&self) -> PathBuf {
        self.config.join("themes")
    }
}

impl Config {
    /// Reads the config file. A missing file is the default config; a broken one is the default
    /// config plus a warning naming the file (prism must start even with a bad config).
    pub fn load(path: &Path) -> (Config, Option<String>) {
        match std::fs::read_to_string(path) {
            Ok(text) => match toml::from_str::<Config>(&text) {
                Ok(c) => (c, None),
                Err(e) => (
                    Config::default(),
                    Some(format!(
                        "{}: {}; using defaults",
                        path.display(),
                        e.to_string().trim()
                    )),
                ),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Config::default(), None),
            Err(e) => (
                Config::default(),
                Some(format!("{}: {e}; using defaults", path.display())),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_broken_configs_fall_back_to_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let (c, w) = Config::load(&dir.path().join("none.toml"));
        assert!(c.theme.is_none() && w.is_none());
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "theme = [").unwrap();
        let (c, w) = Config::load(&bad);
        assert!(c.theme.is_none());
        assert!(w.unwrap().contains("bad.toml"));
        let good = dir.path().join("good.toml");
        std::fs::write(&good, "theme = \"light\"\n[keys]\nquit = [\"x\"]\n").unwrap();
        let (c, w) = Config::load(&good);
        assert_eq!(c.theme.as_deref(), Some("light"));
        assert_eq!(c.keys["quit"], KeyEntry::Keys(vec!["x".into()]));
        assert!(w.is_none());
    }
}
