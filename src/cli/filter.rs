//! `--filter` as every headless command reads it: comma-separated ids, taken as they are, and
//! globs on a group (a sub-task, a topic, a relation).

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
