//! What every lane's command reads the same way: `--filter` (comma-separated ids, taken as they
//! are, and globs on a group: a sub-task, a topic, a relation), and a claims or triples file
//! given by path (else the bundled one).

use anyhow::Context;
use globset::{Glob, GlobSetBuilder};

/// Matches `--filter`: ids given as they are, anything else as a glob on `group`.
pub(super) struct Filter {
    ids: Vec<String>,
    globs: globset::GlobSet,
}

impl Filter {
    pub(super) fn new(
        f: Option<&str>,
        is_id: impl Fn(&str) -> bool,
    ) -> anyhow::Result<Option<Filter>> {
        let Some(f) = f else { return Ok(None) };
        let mut globs = GlobSetBuilder::new();
        let mut ids = Vec::new();
        for part in f.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if is_id(part) {
                ids.push(part.to_string());
            } else {
                globs.add(Glob::new(part).with_context(|| format!("--filter {part:?}"))?);
            }
        }
        Ok(Some(Filter {
            ids,
            globs: globs.build()?,
        }))
    }

    pub(super) fn keeps(&self, id: &str, group: &str) -> bool {
        self.ids.iter().any(|i| i == id) || self.globs.is_match(group)
    }
}

/// A claims or triples set from `path`, else the bundled one (`bundled`, named `bundled_ref`):
/// the set as loaded and how runs name its dataset. Lines with errors are skipped, said once.
pub(super) fn side_set<L>(
    path: Option<&std::path::Path>,
    load: impl FnOnce(&std::path::Path) -> anyhow::Result<L>,
    bundled: impl FnOnce() -> L,
    bundled_ref: &str,
    problems: impl Fn(&L) -> usize,
    noun: &str,
) -> anyhow::Result<(L, String)> {
    let (loaded, dataset_ref) = match path {
        Some(p) => (
            load(p)?,
            std::fs::canonicalize(p)
                .unwrap_or_else(|_| p.to_path_buf())
                .display()
                .to_string(),
        ),
        None => (bundled(), bundled_ref.to_string()),
    };
    let errors = problems(&loaded);
    if errors > 0 {
        crate::warn!(
            "warning: {errors} problem(s) in the {noun}; those lines are skipped (see prism validate)"
        );
    }
    Ok((loaded, dataset_ref))
}
