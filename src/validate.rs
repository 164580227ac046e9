//! `prism validate PATH`: every problem as `file:line: field: reason`, then counts.

use std::fmt::Write as _;

use serde::Serialize;

use crate::dataset::{Counts, DatasetKind, Loaded, Problem};

/// The `--json` report, one object for scripts.
#[derive(Debug, Serialize)]
pub(crate) struct Report<'a> {
    pub path: &'a str,
    pub kind: DatasetKind,
    pub items: usize,
    pub tasks: usize,
    /// Items the registry declares (a slice of a release holds fewer than this).
    pub declared_items: Option<u64>,
    /// Set when `tasks.json` is not the official registry (its H-Score is not the paper's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry_note: Option<String>,
    pub errors: Vec<&'a Problem>,
    pub warnings: Vec<&'a Problem>,
    #[serde(flatten)]
    pub counts: Counts,
}

impl<'a> Report<'a> {
    pub(crate) fn new(path: &'a str, loaded: &'a Loaded) -> Self {
        let ds = &loaded.dataset;
        Report {
            path,
            kind: ds.kind,
            items: ds.items.len(),
            tasks: ds.tasks.len(),
            declared_items: ds.declared_items(),
            registry_note: crate::eval::summary::registry_note(ds),
            errors: loaded.problems.iter().filter(|p| p.is_error()).collect(),
            warnings: loaded.problems.iter().filter(|p| !p.is_error()).collect(),
            counts: ds.counts(),
        }
    }

    /// The human form: problems first (what to fix), then the counts.
    pub(crate) fn to_text(&self, loaded: &Loaded) -> String {
        let mut out = String::new();
        for p in &loaded.problems {
            let _ = writeln!(out, "{p}");
        }
        if !loaded.problems.is_empty() {
            out.push('\n');
        }
        let ds = &loaded.dataset;
        let _ = writeln!(
            out,
            "{}: {} items in {} tasks ({})",
            self.path,
            self.items,
            self.tasks,
            match self.kind {
                DatasetKind::Release => "PRISM release",
                DatasetKind::Jsonl => "JSONL items",
            }
        );
        if let Some(declared) = self.declared_items
            && declared != self.items as u64
        {
            let short = ds
                .tasks
                .iter()
                .filter(|t| t.declared_items.is_some_and(|d| d > t.items.len() as u64))
                .count();
            let _ = writeln!(
                out,
                "note: tasks.json declares {declared} items; {} are present ({short} tasks hold fewer than declared, as a slice of a release does)",
                self.items
            );
        }
        if let Some(note) = &self.registry_note {
            let _ = writeln!(out, "note: {note}");
        }
        let _ = writeln!(out, "\nper dimension:");
        for d in crate::taxonomy::Dimension::ALL {
            let n = self
                .counts
                .per_dimension
                .get(d.code())
                .copied()
                .unwrap_or(0);
            let _ = writeln!(out, "  {:<4} {:>6}  {}", d.code(), n, d.name());
        }
        let _ = writeln!(out, "\nper category:");
        for c in crate::taxonomy::CATEGORIES.iter() {
            let key = format!("{}-{}", c.dimension.code(), c.code);
            if let Some(n) = self.counts.per_category.get(&key) {
                let _ = writeln!(out, "  {:<8} {:>6}  {}", key, n, c.name);
            }
        }
        let _ = writeln!(out, "\nper task:");
        for t in &ds.tasks {
            let declared = t
                .declared_items
                .filter(|&d| d != t.items.len() as u64)
                .map(|d| format!(" of {d}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {:<34} {:>6}{:<9} {}",
                t.id,
                t.items.len(),
                declared,
                t.evaluator
            );
        }
        let errors = self.errors.len();
        let warnings = self.warnings.len();
        let _ = writeln!(
            out,
            "\n{} error{}, {} warning{}",
            errors,
            if errors == 1 { "" } else { "s" },
            warnings,
            if warnings == 1 { "" } else { "s" }
        );
        out
    }
}

/// One label of a claims file and how it was read.
#[derive(Debug, Serialize)]
pub(crate) struct LabelRead<'a> {
    pub field: &'a str,
    pub label: &'a str,
    pub read_as: &'static str,
    pub claims: usize,
}

/// The `--json` report of a claims file, one object for scripts.
#[derive(Debug, Serialize)]
pub(crate) struct ClaimsReport<'a> {
    pub path: &'a str,
    pub kind: &'static str,
    pub claims: usize,
    pub true_claims: usize,
    pub false_claims: usize,
    /// Claims left out, by their label (only true and false claims are kept).
    pub left_out: &'a std::collections::BTreeMap<String, usize>,
    /// Each label kept and what it was read as, so a reader can check the mapping applied.
    pub labels: Vec<LabelRead<'a>>,
    pub per_topic: std::collections::BTreeMap<&'a str, usize>,
    pub errors: Vec<&'a Problem>,
    pub warnings: Vec<&'a Problem>,
}

impl<'a> ClaimsReport<'a> {
    pub(crate) fn new(path: &'a str, loaded: &'a crate::dataset::claims::LoadedClaims) -> Self {
        use crate::dataset::claims::Truth;
        let set = &loaded.set;
        ClaimsReport {
            path,
            kind: "claims",
            claims: set.claims.len(),
            true_claims: set.count(Truth::True),
            false_claims: set.count(Truth::False),
            left_out: &set.skipped,
            labels: set
                .labels
                .iter()
                .map(|((field, label), (truth, n))| LabelRead {
                    field,
                    label,
                    read_as: truth.as_str(),
                    claims: *n,
                })
                .collect(),
            per_topic: set
                .topics
                .iter()
                .map(|(t, r)| (t.as_str(), r.len()))
                .collect(),
            errors: loaded.problems.iter().filter(|p| p.is_error()).collect(),
            warnings: loaded.problems.iter().filter(|p| !p.is_error()).collect(),
        }
    }

    pub(crate) fn to_text(&self) -> String {
        let mut out = String::new();
        for p in self.errors.iter().chain(&self.warnings) {
            let _ = writeln!(out, "{p}");
        }
        if !self.errors.is_empty() || !self.warnings.is_empty() {
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "{}: {} claims ({} true, {} false) in {} topics",
            self.path,
            self.claims,
            self.true_claims,
            self.false_claims,
            self.per_topic.len()
        );
        if !self.labels.is_empty() {
            let _ = writeln!(
                out,
                "labels read: {}",
                self.labels
                    .iter()
                    .map(|l| format!("{} {:?} → {} ({})", l.field, l.label, l.read_as, l.claims))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        let left: usize = self.left_out.values().sum();
        if left > 0 {
            let _ = writeln!(
                out,
                "left out: {left} ({})",
                self.left_out
                    .iter()
                    .map(|(l, n)| format!("{n} {l:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        let _ = writeln!(out, "\nper topic:");
        for (t, n) in &self.per_topic {
            let _ = writeln!(out, "  {t:<30} {n:>6}");
        }
        let _ = writeln!(
            out,
            "\n{} errors, {} warnings",
            self.errors.len(),
            self.warnings.len()
        );
        out
    }
}

/// The `--json` report of a triples file (self-detection), one object for scripts.
#[derive(Debug, Serialize)]
pub(crate) struct TriplesReport<'a> {
    pub path: &'a str,
    pub kind: &'static str,
    pub triples: usize,
    pub with_sentence: usize,
    pub with_popularity: usize,
    pub per_relation: std::collections::BTreeMap<&'a str, usize>,
    pub errors: Vec<&'a Problem>,
    pub warnings: Vec<&'a Problem>,
}

impl<'a> TriplesReport<'a> {
    pub(crate) fn new(path: &'a str, loaded: &'a crate::dataset::triples::LoadedTriples) -> Self {
        let set = &loaded.set;
        TriplesReport {
            path,
            kind: "triples",
            triples: set.triples.len(),
            with_sentence: set.triples.iter().filter(|t| t.sentence.is_some()).count(),
            with_popularity: set
                .triples
                .iter()
                .filter(|t| t.popularity.is_some())
                .count(),
            per_relation: crate::dataset::triples::per_relation(set),
            errors: loaded.problems.iter().filter(|p| p.is_error()).collect(),
            warnings: loaded.problems.iter().filter(|p| !p.is_error()).collect(),
        }
    }

    pub(crate) fn to_text(&self) -> String {
        let mut out = String::new();
        for p in self.errors.iter().chain(&self.warnings) {
            let _ = writeln!(out, "{p}");
        }
        if !self.errors.is_empty() || !self.warnings.is_empty() {
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "{}: {} triples in {} relations ({} with a source sentence, {} with popularity)",
            self.path,
            self.triples,
            self.per_relation.len(),
            self.with_sentence,
            self.with_popularity
        );
        let _ = writeln!(out, "\nper relation:");
        for (r, n) in &self.per_relation {
            let _ = writeln!(out, "  {r:<30} {n:>6}");
        }
        let _ = writeln!(
            out,
            "\n{} errors, {} warnings",
            self.errors.len(),
            self.warnings.len()
        );
        out
    }
}
