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
    /// A panel of judges for `prism score` when `--judge` is not given (`judges = ["a", "b",
    /// "c"]`; wins over `judge`): each asked, every verdict kept, the score by `--judge-rule`.
    pub judges: Option<Vec<String>>,
    /// Your name on review decisions when `--reviewer` is not given.
    pub reviewer: Option<String>,
    /// The team's shared store (`postgres://user@host/db`; the password from PGPASSWORD or a
    /// pgpass file, never here) when `--db` is not given: review decisions, the runs the TUI
    /// mirrors, and `prism work`'s store.
    pub db: Option<String>,
    /// Blind review: the review screen names the models of an item's answers "model A",
    /// "model B", ... instead of their names (`--blind` does the same for one session).
    pub blind: Option<bool>,
    /// The mouse in the TUI (click to select, wheel to scroll); `mouse = false` leaves it to the
    /// terminal (its own selection and copy).
    pub mouse: Option<bool>,
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

/// Sets one top-level `key = "value"` in the config file, keeping everything else as the user
/// wrote it (comments, order, other keys); a missing file is created. A file that does not parse
/// is left alone and the error names it. Written to a temporary file and renamed, so a crash
/// never leaves half a config.
pub fn remember(path: &Path, key: &str, value: &str) -> Result<(), String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        format!("{}: {}", path.display(), e.to_string().trim())
    })?;
    doc[key] = toml_edit::value(value);
    // What is written must still load as a config (a `judge` table would not).
    toml::from_str::<Config>(&doc.to_string())
        .map_err(|e| format!("{}: {}", path.display(), e.to_string().trim()))?;
    write_whole(path, &doc.to_string())
}

/// Writes `text` to the config file at `path` whole: to a new temporary file beside it,
/// created exclusively under a random name (a planted `config.toml.tmp`, a symlink to a file
/// elsewhere, is never written through), then renamed over it. A symlinked config stays a
/// symlink (its target is written); a read-only one is refused, not replaced.
fn write_whole(path: &Path, text: &str) -> Result<(), String> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?
        }
        _ => path.to_path_buf(),
    };
    let existing = std::fs::metadata(&target).ok();
    if existing
        .as_ref()
        .is_some_and(|m| m.permissions().readonly())
    {
        return Err(format!(
            "{} is read-only: not changed (make it writable, or edit it yourself)",
            target.display()
        ));
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".config.toml.")
        .tempfile_in(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    std::io::Write::write_all(tmp.as_file_mut(), text.as_bytes())
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| format!("{}: {e}", tmp.path().display()))?;
    // The config keeps its own permissions (the temporary file is private, 0600).
    if let Some(m) = &existing {
        let _ = std::fs::set_permissions(tmp.path(), m.permissions());
    }
    tmp.persist(&target)
        .map(|_| ())
        .map_err(|e| format!("{}: {e}", target.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembering_a_key_keeps_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("config.toml");
        remember(&path, "judge", "smol").unwrap();
        assert_eq!(Config::load(&path).0.judge.as_deref(), Some("smol"));
        std::fs::write(
            &path,
            "# my settings\ntheme = \"light\" # the light one\njudge = \"old\"\n\n[keys]\nquit = [\"x\"]\n",
        )
        .unwrap();
        remember(&path, "judge", "new \"quoted\"").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("# my settings\ntheme = \"light\" # the light one\n"),
            "{text}"
        );
        assert!(text.contains("[keys]\nquit = [\"x\"]"), "{text}");
        let (c, w) = Config::load(&path);
        assert!(w.is_none());
        assert_eq!(c.judge.as_deref(), Some("new \"quoted\""));
        assert_eq!(c.theme.as_deref(), Some("light"));
        // A broken file is not touched, and the error names it.
        std::fs::write(&path, "theme = [").unwrap();
        let e = remember(&path, "judge", "smol").unwrap_err();
        assert!(e.contains("config.toml"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "theme = [");
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_temporary_file_or_symlink_is_never_written_through() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere.txt");
        std::fs::write(&elsewhere, "precious").unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "theme = \"light\"\n").unwrap();
        symlink(&elsewhere, dir.path().join("config.toml.tmp")).unwrap();
        remember(&path, "judge", "smol").unwrap();
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "precious");
        assert!(
            !std::fs::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(Config::load(&path).0.judge.as_deref(), Some("smol"));
        // A symlinked config stays a symlink; its target is written.
        let real = dir.path().join("dotfiles-config.toml");
        std::fs::write(&real, "theme = \"dark\"\n").unwrap();
        let linked = dir.path().join("linked.toml");
        symlink(&real, &linked).unwrap();
        remember(&linked, "judge", "local").unwrap();
        assert!(
            std::fs::symlink_metadata(&linked)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(Config::load(&real).0.judge.as_deref(), Some("local"));
        assert_eq!(Config::load(&real).0.theme.as_deref(), Some("dark"));
        // A read-only config is refused, and left as it was.
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o444)).unwrap();
        let e = remember(&linked, "judge", "smol").unwrap_err();
        assert!(e.contains("read-only"), "{e}");
        assert_eq!(Config::load(&real).0.judge.as_deref(), Some("local"));
    }

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
