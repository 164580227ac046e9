//! Facts as (subject, relation, object) triples, for self-detection (METHODS.md §4).
//!
//! Read from JSONL: ours (`{id, subject, relation, object, sentence?, popularity?}`) and LAMA's
//! T-REx files (`sub_label`, `obj_label`, `predicate_id`, `evidences` whose `masked_sentence`
//! holds `[MASK]` where the object goes; relation names from a LAMA `relations.jsonl` when one is
//! given, else the predicate id). A line that cannot be read is a problem naming file, line and
//! field; the rest still loads. Triples are grouped by relation.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use serde_json::Value;

use super::{Problem, Source};

#[derive(Debug, Clone, PartialEq)]
pub struct Triple {
    pub id: String,
    pub subject: String,
    pub relation: String,
    pub object: String,
    /// A sentence stating the fact (the source the true sentence paraphrases), if given.
    pub sentence: Option<String>,
    /// How well known the fact is (any monotone scale: page views, frequency...).
    pub popularity: Option<f64>,
}

/// Triples grouped by relation (contiguous, relations sorted).
#[derive(Debug, Clone, Default)]
pub struct TripleSet {
    pub label: String,
    pub triples: Vec<Triple>,
    pub relations: Vec<(String, Range<usize>)>,
}

impl TripleSet {
    pub fn by_id(&self, id: &str) -> Option<usize> {
        self.triples.iter().position(|t| t.id == id)
    }

    /// Keeps `n` triples taken in turn from each relation (the first of every relation, then
    /// the second, ...), so a small run still covers every relation; then regroups.
    pub fn spread(&mut self, n: usize) {
        if n >= self.triples.len() {
            return;
        }
        self.regroup();
        let mut keep = Vec::with_capacity(n);
        let mut round = 0;
        while keep.len() < n {
            for (_, r) in &self.relations {
                if keep.len() < n && r.start + round < r.end {
                    keep.push(r.start + round);
                }
            }
            round += 1;
        }
        keep.sort_unstable();
        let mut i = 0;
        self.triples.retain(|_| {
            let k = keep.binary_search(&i).is_ok();
            i += 1;
            k
        });
        self.regroup();
    }

    /// Re-sorts by relation after the triples changed (a filter, a limit).
    pub fn regroup(&mut self) {
        self.triples.sort_by(|a, b| a.relation.cmp(&b.relation));
        self.relations.clear();
        for (i, t) in self.triples.iter().enumerate() {
            match self.relations.last_mut() {
                Some((r, range)) if *r == t.relation => range.end = i + 1,
                _ => self.relations.push((t.relation.clone(), i..i + 1)),
            }
        }
    }
}

#[derive(Debug)]
pub struct LoadedTriples {
    pub set: TripleSet,
    pub problems: Vec<Problem>,
}

/// The bundled triples: 70 facts of our own over 10 relations, with a popularity score (our own
/// rough 1-100 estimate of how well known each fact is).
pub fn sample_triples() -> LoadedTriples {
    load(
        &Source::sample(),
        &["triples/triples.jsonl".to_string()],
        &HashMap::new(),
        "bundled sample triples",
    )
}

/// Whether a JSON record is a triple: ours (`subject` + `object`) or T-REx (`sub_label` +
/// `obj_label`).
pub fn is_triple_record(v: &Value) -> bool {
    (v.get("subject").is_some() && v.get("object").is_some())
        || (v.get("sub_label").is_some() && v.get("obj_label").is_some())
}

fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Reads a LAMA `relations.jsonl`: predicate id → label.
pub fn load_relations(path: &std::path::Path) -> Result<HashMap<String, String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| format!("{}:{}: invalid JSON: {e}", path.display(), n + 1))?;
        let (Some(id), Some(label)) = (
            v.get("relation").and_then(text_of),
            v.get("label").and_then(text_of),
        ) else {
            return Err(format!(
                "{}:{}: relation: a relations file line needs `relation` and `label`",
                path.display(),
                n + 1
            ));
        };
        out.insert(id, label);
    }
    Ok(out)
}

/// Loads triples from JSONL files of a source; `relations` names T-REx predicate ids.
pub fn load(
    source: &Source,
    files: &[String],
    relations: &HashMap<String, String>,
    label: &str,
) -> LoadedTriples {
    let mut problems = Vec::new();
    let mut triples: Vec<Triple> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for rel in files {
        let shown = source.display(rel);
        let stem = super::json_lines::stem(rel);
        super::json_lines::each_line(source, rel, &mut problems, |n, v, problems| {
            let t = if v.get("sub_label").is_some() {
                trex(&v, relations, &stem, n)
            } else {
                ours(&v, &stem, n)
            };
            let t = match t {
                Ok(t) => t,
                Err((field, why)) => {
                    problems.push(Problem::error(&shown, n, field, why));
                    return;
                }
            };
            if !seen.insert(t.id.clone()) {
                problems.push(Problem::error(
                    &shown,
                    n,
                    "id",
                    format!("duplicate id {:?}; skipped", t.id),
                ));
                return;
            }
            triples.push(t);
        });
    }
    let mut set = TripleSet {
        label: label.to_string(),
        triples,
        relations: Vec::new(),
    };
    set.regroup();
    LoadedTriples { set, problems }
}

type FieldError = (&'static str, String);

fn ours(v: &Value, stem: &str, n: usize) -> Result<Triple, FieldError> {
    let get = |k: &'static str| -> Result<String, FieldError> {
        v.get(k).and_then(text_of).ok_or((k, "missing".to_string()))
    };
    let object = get("object")?;
    let sentence = v.get("sentence").and_then(text_of);
    let popularity = match v.get("popularity") {
        None | Some(Value::Null) => None,
        Some(Value::Number(x)) => x.as_f64(),
        Some(other) => return Err(("popularity", format!("not a number: {other}"))),
    };
    Ok(Triple {
        id: v
            .get("id")
            .and_then(text_of)
            .unwrap_or_else(|| format!("{stem}-{n}")),
        subject: get("subject")?,
        relation: get("relation")?,
        object,
        sentence,
        popularity,
    })
}

fn trex(
    v: &Value,
    relations: &HashMap<String, String>,
    stem: &str,
    n: usize,
) -> Result<Triple, FieldError> {
    let get = |k: &'static str| -> Result<String, FieldError> {
        v.get(k).and_then(text_of).ok_or((k, "missing".to_string()))
    };
    let subject = get("sub_label")?;
    let object = get("obj_label")?;
    let predicate = get("predicate_id")?;
    // The first evidence with a mask gives the source sentence, the object put back.
    let sentence = v.get("evidences").and_then(Value::as_array).and_then(|a| {
        a.iter().find_map(|e| {
            let masked = e.get("masked_sentence")?.as_str()?;
            masked.contains("[MASK]").then(|| {
                let surface = e
                    .get("obj_surface")
                    .and_then(Value::as_str)
                    .unwrap_or(&object);
                masked.replacen("[MASK]", surface, 1)
            })
        })
    });
    Ok(Triple {
        id: v
            .get("uuid")
            .or_else(|| v.get("id"))
            .and_then(text_of)
            .unwrap_or_else(|| format!("{stem}-{n}")),
        subject,
        relation: relations.get(&predicate).cloned().unwrap_or(predicate),
        object,
        sentence,
        popularity: v.get("popularity").and_then(Value::as_f64),
    })
}

/// Loads triples from a `.jsonl` file, or every `.jsonl` file of a directory.
pub fn load_path(
    path: &std::path::Path,
    relations: &HashMap<String, String>,
) -> Result<LoadedTriples, super::LoadError> {
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
        return Ok(load(
            &Source::Dir(parent.to_path_buf()),
            &[name],
            relations,
            &shown,
        ));
    }
    let source = Source::Dir(path.to_path_buf());
    let (files, refused) = source.files_and_refused("", "jsonl");
    let mut loaded = load(&source, &files, relations, &shown);
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

/// Whether `path` holds triples (its first JSON record is one).
pub fn is_triples_path(path: &std::path::Path) -> bool {
    super::first_record(path).is_some_and(|v| is_triple_record(&v))
}

/// Counts per relation (for validate).
pub fn per_relation(set: &TripleSet) -> BTreeMap<&str, usize> {
    set.relations
        .iter()
        .map(|(r, range)| (r.as_str(), range.len()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str, relations: &HashMap<String, String>) -> LoadedTriples {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.jsonl"), text).unwrap();
        load(
            &Source::Dir(dir.path().to_path_buf()),
            &["t.jsonl".to_string()],
            relations,
            "t",
        )
    }

    #[test]
    fn spread_takes_each_relation_in_turn() {
        let mut set = sample_triples().set;
        set.spread(12);
        assert_eq!(set.triples.len(), 12);
        let per = per_relation(&set);
        assert_eq!(per.len(), 10, "every relation kept: {per:?}");
        assert!(per.values().all(|&n| n == 1 || n == 2), "{per:?}");
        let mut all = sample_triples().set;
        all.spread(500);
        assert_eq!(all.triples.len(), 70);
    }

    #[test]
    fn the_sample_has_seventy_triples_over_ten_relations() {
        let l = sample_triples();
        assert!(l.problems.is_empty(), "{:?}", l.problems);
        assert_eq!(l.set.triples.len(), 70);
        assert_eq!(l.set.relations.len(), 10);
        assert!(
            l.set
                .triples
                .iter()
                .all(|t| t.sentence.is_some() && t.popularity.is_some())
        );
    }

    #[test]
    fn ours_and_trex_are_read_and_bad_lines_named() {
        let rels: HashMap<String, String> =
            [("P19".to_string(), "place of birth".to_string())].into();
        let l = load_text(
            concat!(
                "{\"id\": \"a\", \"subject\": \"S\", \"relation\": \"r\", \"object\": \"O\"}\n",
                "{\"sub_label\": \"Ada\", \"obj_label\": \"London\", \"predicate_id\": \"P19\", \"uuid\": \"u1\", \"evidences\": [{\"masked_sentence\": \"Ada was born in [MASK] in 1815.\", \"obj_surface\": \"London\"}]}\n",
                "{\"sub_label\": \"X\", \"obj_label\": \"Y\", \"predicate_id\": \"P999\"}\n",
                "{\"id\": \"b\", \"subject\": \"S\", \"relation\": \"r\"}\n",
                "{\"id\": \"c\", \"subject\": \"S\", \"relation\": \"r\", \"object\": \"O\", \"popularity\": \"high\"}\n",
                "nope\n",
            ),
            &rels,
        );
        assert_eq!(l.set.triples.len(), 3);
        let ada = &l.set.triples[l.set.by_id("u1").unwrap()];
        assert_eq!(ada.relation, "place of birth");
        assert_eq!(
            ada.sentence.as_deref(),
            Some("Ada was born in London in 1815.")
        );
        let x = l.set.triples.iter().find(|t| t.subject == "X").unwrap();
        assert_eq!(x.relation, "P999");
        let text: Vec<String> = l.problems.iter().map(|p| p.to_string()).collect();
        assert!(
            text.iter().any(|p| p.contains(":4: object: missing")),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|p| p.contains(":5: popularity: not a number")),
            "{text:?}"
        );
        assert!(
            text.iter().any(|p| p.contains(":6: -: invalid JSON")),
            "{text:?}"
        );
    }
}
