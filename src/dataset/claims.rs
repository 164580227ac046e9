//! Fact-checking claims with a ground-truth label, for AutoHall's pipeline (METHODS.md §3).
//!
//! Read from JSONL in the shapes people have: ours (`{id, claim, label, topic?}`), Climate-FEVER
//! (`claim_id`, `claim`, `claim_label` SUPPORTS / REFUTES / NOT_ENOUGH_INFO / DISPUTED,
//! `evidences`), FEVER (`id`, `claim`, `label` SUPPORTS / REFUTES / NOT ENOUGH INFO), PUBHEALTH
//! (`claim_id`, `claim`, `label` true / false / mixture / unproven, `subjects`) and WiCE
//! (`label` supported / partially_supported / not_supported) and Politifact (`statement`,
//! `verdict` true / mostly-true / half-true / barely-true / mostly-false / false / pants-fire).
//! Only true and false claims are kept (pants-fire, "false and ridiculous", is false); every other
//! label is counted and named, and the mapping applied is reported label by label
//! ([`ClaimSet::labels`]). Claims are grouped by topic (`topic`, else PUBHEALTH's first subject,
//! else the file's name). A line holding a bare `NaN` or `Infinity`, as Python's `json` writes
//! them (AutoHall's `pubhealth.json` has 243), is read with those values as null.

use std::collections::BTreeMap;
use std::ops::Range;

use serde_json::Value;

use super::{Problem, Source};

/// A claim's ground truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Truth {
    True,
    False,
}

impl Truth {
    pub fn as_str(self) -> &'static str {
        match self {
            Truth::True => "true",
            Truth::False => "false",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub id: String,
    pub claim: String,
    pub label: Truth,
    pub topic: String,
    /// The label as the file wrote it (`SUPPORTS`, `true`...).
    pub source_label: String,
    /// Evidence sentences the file gives (Climate-FEVER), for people to read.
    pub evidence: Vec<String>,
}

/// A set of claims, grouped by topic (claims of a topic are contiguous, topics sorted).
#[derive(Debug, Clone, Default)]
pub struct ClaimSet {
    pub label: String,
    pub claims: Vec<Claim>,
    pub topics: Vec<(String, Range<usize>)>,
    /// Claims left out because their label is neither true nor false, by label.
    pub skipped: BTreeMap<String, usize>,
    /// The labels kept and what each was read as: (field, label as written) → (truth, claims).
    pub labels: BTreeMap<(String, String), (Truth, usize)>,
}

impl ClaimSet {
    pub fn by_id(&self, id: &str) -> Option<usize> {
        self.claims.iter().position(|c| c.id == id)
    }

    pub fn count(&self, t: Truth) -> usize {
        self.claims.iter().filter(|c| c.label == t).count()
    }
}

#[derive(Debug)]
pub struct LoadedClaims {
    pub set: ClaimSet,
    pub problems: Vec<Problem>,
}

/// The bundled claims: 70 of our own over 7 topics, half of them true.
pub fn sample_claims() -> LoadedClaims {
    load(
        &Source::sample(),
        &["claims/claims.jsonl".to_string()],
        "bundled sample claims",
    )
}

/// Whether a JSON record is a claim: a `claim` (or Politifact's `statement` with a `verdict`)
/// and no PRISM `question`.
pub fn is_claim_record(v: &Value) -> bool {
    v.get("question").is_none()
        && (v.get("claim").is_some_and(Value::is_string)
            || (v.get("statement").is_some_and(Value::is_string) && v.get("verdict").is_some()))
}

/// The fields a claim's text and label are read from, in order of preference.
const CLAIM_FIELDS: [&str; 2] = ["claim", "statement"];
const LABEL_FIELDS: [&str; 3] = ["label", "claim_label", "verdict"];

/// What a label means: true, false, or another verdict (counted, not kept).
fn truth_of(v: &Value) -> Result<Truth, String> {
    let s = match v {
        Value::Bool(true) => return Ok(Truth::True),
        Value::Bool(false) => return Ok(Truth::False),
        Value::Number(n) if n.as_i64() == Some(1) => return Ok(Truth::True),
        Value::Number(n) if n.as_i64() == Some(0) => return Ok(Truth::False),
        Value::String(s) => s.trim().to_string(),
        other => return Err(other.to_string()),
    };
    match s.to_ascii_lowercase().replace([' ', '-'], "_").as_str() {
        "true" | "supports" | "supported" | "support" | "yes" => Ok(Truth::True),
        "false" | "refutes" | "refuted" | "refute" | "not_supported" | "unsupported" | "no"
        | "pants_fire" | "pants_on_fire" => Ok(Truth::False),
        _ => Err(s),
    }
}

fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Loads claims from JSONL files of a source.
pub fn load(source: &Source, files: &[String], label: &str) -> LoadedClaims {
    let mut problems = Vec::new();
    let mut claims: Vec<Claim> = Vec::new();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut labels: BTreeMap<(String, String), (Truth, usize)> = BTreeMap::new();
    for rel in files {
        let shown = source.display(rel);
        let stem = super::json_lines::stem(rel);
        super::json_lines::each_line(source, rel, &mut problems, |n, v, problems| {
            let Some(claim) = CLAIM_FIELDS
                .iter()
                .find_map(|k| v.get(*k).and_then(text_of))
            else {
                problems.push(Problem::error(&shown, n, "claim", "missing"));
                return;
            };
            let Some((field, raw)) = LABEL_FIELDS
                .iter()
                .find_map(|k| v.get(*k).map(|raw| (*k, raw)))
            else {
                problems.push(Problem::error(&shown, n, "label", "missing"));
                return;
            };
            let label = match truth_of(raw) {
                Ok(t) => t,
                Err(other) => {
                    *skipped.entry(other).or_default() += 1;
                    return;
                }
            };
            let id = ["id", "claim_id"]
                .iter()
                .find_map(|k| v.get(*k).and_then(text_of))
                .unwrap_or_else(|| format!("{stem}-{n}"));
            if !seen.insert(id.clone()) {
                problems.push(Problem::error(
                    &shown,
                    n,
                    "id",
                    format!("duplicate id {id:?}; skipped"),
                ));
                return;
            }
            let topic = v
                .get("topic")
                .and_then(text_of)
                .or_else(|| {
                    v.get("subjects")
                        .and_then(Value::as_str)
                        .and_then(|s| s.split(',').next())
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                })
                .unwrap_or_else(|| stem.clone());
            let evidence = v
                .get("evidences")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|e| {
                            e.get("evidence")
                                .and_then(Value::as_str)
                                .or_else(|| e.as_str())
                                .map(str::to_string)
                        })
                        .collect()
                })
                .unwrap_or_default();
            let source_label = match raw {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            labels
                .entry((field.to_string(), source_label.clone()))
                .or_insert((label, 0))
                .1 += 1;
            claims.push(Claim {
                id,
                claim,
                label,
                topic,
                source_label,
                evidence,
            });
        });
    }
    for (label, n) in &skipped {
        problems.push(Problem::warning(
            label_scope(files, source),
            0,
            "label",
            format!(
                "{n} claim(s) labelled {label:?} left out: only true and false claims are kept"
            ),
        ));
    }
    claims.sort_by(|a, b| a.topic.cmp(&b.topic));
    let mut topics: Vec<(String, Range<usize>)> = Vec::new();
    for (i, c) in claims.iter().enumerate() {
        match topics.last_mut() {
            Some((t, r)) if *t == c.topic => r.end = i + 1,
            _ => topics.push((c.topic.clone(), i..i + 1)),
        }
    }
    LoadedClaims {
        set: ClaimSet {
            label: label.to_string(),
            claims,
            topics,
            skipped,
            labels,
        },
        problems,
    }
}

/// Loads claims from a `.jsonl` file, or from every `.jsonl` file of a directory (recursively).
pub fn load_path(path: &std::path::Path) -> Result<LoadedClaims, super::LoadError> {
    let shown = path.display().to_string();
    if !path.exists() {
        return Err(super::LoadError::NotFound(shown));
    }
    if path.is_file() {
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        return Ok(load(&Source::Dir(parent.to_path_buf()), &[name], &shown));
    }
    let source = Source::Dir(path.to_path_buf());
    let (files, refused) = source.files_and_refused("", "jsonl");
    let mut loaded = load(&source, &files, &shown);
    for rel in refused {
        loaded.problems.push(Problem::error(
            source.display(&rel),
            0,
            "file",
            "a symlink leads out of the dataset directory; not read",
        ));
    }
    Ok(loaded)
}

/// Whether `path` holds claims rather than PRISM items: its first JSON record (of the file, or
/// of the first `.jsonl` file of the directory) has a `claim` and no `question`.
pub fn is_claims_path(path: &std::path::Path) -> bool {
    super::first_record(path).is_some_and(|v| is_claim_record(&v))
}

fn label_scope(files: &[String], source: &Source) -> String {
    match files {
        [one] => source.display(one),
        _ => source.label(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> LoadedClaims {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.jsonl"), text).unwrap();
        load(
            &Source::Dir(dir.path().to_path_buf()),
            &["c.jsonl".to_string()],
            "t",
        )
    }

    #[test]
    fn the_sample_has_seventy_claims_over_seven_topics_half_true() {
        let l = sample_claims();
        assert!(l.problems.is_empty(), "{:?}", l.problems);
        assert_eq!(l.set.claims.len(), 70);
        assert_eq!(l.set.topics.len(), 7);
        assert_eq!(l.set.count(Truth::True), 35);
    }

    /// The shapes of AutoHall's own files (lines written like theirs, not copied): PUBHEALTH
    /// with a bare NaN as Python's json writes it, and Politifact's `statement` and `verdict`.
    #[test]
    fn autohall_files_are_read_as_they_are_nan_and_politifact_included() {
        let l = load_text(concat!(
            "{\"claim\": \"Bat from a county tests positive for rabies.\", \"date_published\": NaN, \"label\": \"true\", \"subjects\": \"Rabies, Health\"}\n",
            "{\"claim\": \"A country banned pork from canteens.\", \"date_published\": \"March 7, 2016\", \"label\": \"false\", \"subjects\": \"Politics\"}\n",
            "{\"claim\": \"A forest plans fires for tree health.\", \"date_published\": NaN, \"label\": \"true\", \"subjects\": \"\"}\n",
            "{\"verdict\": \"true\", \"statement_originator\": \"A senator\", \"statement\": \"He opposed the protections.\", \"statement_date\": \"6/11/2008\"}\n",
            "{\"verdict\": \"pants-fire\", \"statement\": \"The moon is cheese.\"}\n",
            "{\"verdict\": \"half-true\", \"statement\": \"Half of it.\"}\n",
        ));
        assert_eq!(l.set.claims.len(), 5, "{:?}", l.problems);
        assert_eq!(l.set.count(Truth::True), 3);
        assert_eq!(l.set.skipped.get("half-true"), Some(&1));
        let text: Vec<String> = l.problems.iter().map(|p| p.to_string()).collect();
        assert!(
            text.iter()
                .any(|p| p.contains(":1: -: warning: 2 line(s) hold a bare NaN")
                    && p.contains("lines 1, 3")),
            "{text:?}"
        );
        assert!(!text.iter().any(|p| p.contains("invalid JSON")), "{text:?}");
        let read = |f: &str, v: &str| l.set.labels.get(&(f.to_string(), v.to_string())).copied();
        assert_eq!(read("label", "true"), Some((Truth::True, 2)));
        assert_eq!(read("verdict", "pants-fire"), Some((Truth::False, 1)));
        assert!(is_claim_record(
            &serde_json::json!({"statement": "s", "verdict": "true"})
        ));
        assert!(!is_claim_record(&serde_json::json!({"statement": "s"})));
    }

    #[test]
    fn a_claims_file_is_known_by_its_fields_even_when_its_first_line_is_not_plain_json() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pubhealth.json");
        std::fs::write(
            &f,
            "{\"claim\": \"c\", \"date_published\": NaN, \"label\": \"true\"}\n",
        )
        .unwrap();
        assert!(is_claims_path(&f));
        std::fs::write(
            &f,
            "garbage\n\n{\"statement\": \"s\", \"verdict\": \"false\"}\n",
        )
        .unwrap();
        assert!(is_claims_path(&f));
        std::fs::write(&f, "{\"question\": \"q\", \"claim\": \"c\"}\n").unwrap();
        assert!(!is_claims_path(&f));
    }

    #[test]
    fn every_format_people_have_is_read_and_other_labels_are_counted() {
        let l = load_text(concat!(
            "{\"id\": \"a\", \"claim\": \"ours\", \"label\": true, \"topic\": \"t\"}\n",
            "{\"claim_id\": 7, \"claim\": \"climate\", \"claim_label\": \"SUPPORTS\", \"evidences\": [{\"evidence\": \"e1\"}]}\n",
            "{\"claim_id\": 8, \"claim\": \"climate2\", \"claim_label\": \"DISPUTED\"}\n",
            "{\"claim_id\": 9, \"claim\": \"climate3\", \"claim_label\": \"NOT_ENOUGH_INFO\"}\n",
            "{\"id\": 10, \"claim\": \"fever\", \"label\": \"REFUTES\"}\n",
            "{\"id\": 11, \"claim\": \"fever2\", \"label\": \"NOT ENOUGH INFO\"}\n",
            "{\"claim_id\": \"p1\", \"claim\": \"pubhealth\", \"label\": \"false\", \"subjects\": \"Health, News\"}\n",
            "{\"claim_id\": \"p2\", \"claim\": \"pubhealth2\", \"label\": \"mixture\"}\n",
            "{\"claim_id\": \"p3\", \"claim\": \"pubhealth3\", \"label\": \"unproven\"}\n",
            "{\"claim\": \"wice\", \"label\": \"supported\"}\n",
            "{\"claim\": \"wice2\", \"label\": \"not_supported\"}\n",
            "{\"claim\": \"wice3\", \"label\": \"partially_supported\"}\n",
            "not json\n",
            "{\"id\": \"a\", \"claim\": \"dup\", \"label\": true}\n",
            "{\"id\": \"x\", \"label\": true}\n",
        ));
        let got: Vec<(&str, Truth)> = l
            .set
            .claims
            .iter()
            .map(|c| (c.claim.as_str(), c.label))
            .collect();
        assert_eq!(got.len(), 6, "{got:?}");
        for (claim, t) in [
            ("ours", Truth::True),
            ("climate", Truth::True),
            ("fever", Truth::False),
            ("pubhealth", Truth::False),
            ("wice", Truth::True),
            ("wice2", Truth::False),
        ] {
            assert!(got.contains(&(claim, t)), "{claim}");
        }
        let c = &l.set.claims[l.set.by_id("7").unwrap()];
        assert_eq!(c.evidence, vec!["e1"]);
        assert_eq!(l.set.claims[l.set.by_id("p1").unwrap()].topic, "Health");
        assert_eq!(l.set.skipped.values().sum::<usize>(), 6);
        let text: Vec<String> = l.problems.iter().map(|p| p.to_string()).collect();
        for label in [
            "DISPUTED",
            "NOT_ENOUGH_INFO",
            "NOT ENOUGH INFO",
            "mixture",
            "unproven",
            "partially_supported",
        ] {
            assert!(
                text.iter().any(|p| p.contains(&format!("{label:?}"))),
                "{label}: {text:?}"
            );
        }
        assert!(
            text.iter().any(|p| p.contains(":13: -: invalid JSON")),
            "{text:?}"
        );
        assert!(
            text.iter().any(|p| p.contains(":14: id: duplicate")),
            "{text:?}"
        );
        assert!(
            text.iter().any(|p| p.contains(":15: claim: missing")),
            "{text:?}"
        );
    }
}
