//! inspect_ai's logs: the `.json` log (one object, its samples inside) and the `.eval` archive
//! (a zip: `header.json`, or `_journal/start.json` while a run is going, and one
//! `samples/<id>_epoch_<n>.json` per sample). Log format version 2 (inspect_ai 0.3.x).

use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufReader, Read};
use std::path::Path;

use anyhow::{Context, bail};
use serde::Deserialize;
use serde::de::{SeqAccess, Visitor};
use serde_json::Value;

use super::{ForeignRun, ForeignSample, MAX_ENTRY_BYTES, SourceScore, Tool};

/// The newest log format this reads; a newer one is refused with its number (its fields may
/// mean something else).
pub const LOG_VERSION: u32 = 2;

#[derive(Deserialize)]
struct Header {
    #[serde(default)]
    version: u32,
    #[serde(default)]
    status: String,
    eval: EvalSpec,
}

#[derive(Deserialize, Default)]
struct EvalSpec {
    #[serde(default)]
    task: String,
    #[serde(default)]
    model: String,
    #[serde(default)]
    created: String,
    #[serde(default)]
    packages: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct JsonLog {
    #[serde(default)]
    version: u32,
    #[serde(default)]
    status: String,
    eval: EvalSpec,
    #[serde(default)]
    samples: Samples,
}

#[derive(Deserialize)]
struct Sample {
    id: Value,
    #[serde(default = "first_epoch")]
    epoch: u32,
    #[serde(default)]
    input: Value,
    #[serde(default)]
    target: Value,
    #[serde(default)]
    choices: Option<Vec<String>>,
    #[serde(default)]
    metadata: Value,
    #[serde(default)]
    scores: Option<BTreeMap<String, Score>>,
    #[serde(default)]
    output: Option<Output>,
    #[serde(default)]
    error: Option<Value>,
    /// Long texts stored once and referred to as `attachment://<hash>` (the `.eval` format).
    #[serde(default)]
    attachments: BTreeMap<String, String>,
}

fn first_epoch() -> u32 {
    1
}

#[derive(Deserialize)]
struct Output {
    #[serde(default)]
    completion: Option<String>,
    #[serde(default)]
    choices: Vec<Value>,
}

#[derive(Deserialize)]
struct Score {
    #[serde(default)]
    value: Value,
    #[serde(default)]
    explanation: Option<Value>,
}

/// The samples of a `.json` log, each read on its own: one that does not read is kept as the
/// reason (naming its id when it has one) and the rest still read; only the kept fields of the
/// ones that do stay in memory (events and messages are skipped as they stream by).
#[derive(Default)]
struct Samples(Vec<Result<Sample, String>>);

impl<'de> Deserialize<'de> for Samples {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Samples;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of samples")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Samples, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = seq.next_element::<Maybe>()? {
                    out.push(s.into_result());
                }
                Ok(Samples(out))
            }
            fn visit_unit<E>(self) -> Result<Samples, E> {
                Ok(Samples::default())
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Maybe {
    Ok(Box<Sample>),
    Bad(Value),
}

impl Maybe {
    fn into_result(self) -> Result<Sample, String> {
        match self {
            Maybe::Ok(s) => Ok(*s),
            Maybe::Bad(v) => {
                let id = v.get("id").map(id_text).unwrap_or_else(|| "?".into());
                let why = serde_json::from_value::<Sample>(v)
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "not an object".into());
                Err(format!("sample {id}: {why}"))
            }
        }
    }
}

fn id_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Reads one inspect log (`.eval` archive or `.json`), by its first bytes.
pub fn read(path: &Path, problems: &mut Vec<String>) -> anyhow::Result<Vec<ForeignRun>> {
    let mut f = super::regular_file(path)?;
    let mut magic = [0u8; 4];
    let n = f.read(&mut magic)?;
    drop(f);
    if n == 4 && &magic == b"PK\x03\x04" {
        read_eval(path, problems)
    } else {
        read_json(path, problems)
    }
}

fn read_json(path: &Path, problems: &mut Vec<String>) -> anyhow::Result<Vec<ForeignRun>> {
    let f = super::regular_file(path)?;
    let log: JsonLog = serde_json::from_reader(BufReader::with_capacity(1 << 20, f))
        .context("does not read as an inspect_ai log")?;
    check_version(log.version)?;
    let header = Header {
        version: log.version,
        status: log.status,
        eval: log.eval,
    };
    let mut samples = Vec::new();
    for s in log.samples.0 {
        match s {
            Ok(s) => samples.push(convert(s, &header.eval)),
            Err(why) => problems.push(format!("{}: {why}: left out", path.display())),
        }
    }
    Ok(vec![finish(path, header, samples, problems)])
}

fn read_eval(path: &Path, problems: &mut Vec<String>) -> anyhow::Result<Vec<ForeignRun>> {
    let f = super::regular_file(path)?;
    let mut zip = zip::ZipArchive::new(f).context("not a readable .eval archive")?;
    let header: Header = match entry_json(&mut zip, "header.json") {
        Ok(Some(h)) => h,
        // A run still going (or killed) has only its journal's start.
        Ok(None) => entry_json(&mut zip, "_journal/start.json")?
            .context("the archive has neither header.json nor _journal/start.json")?,
        Err(e) => return Err(e),
    };
    check_version(header.version)?;
    let mut names: Vec<String> = zip
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .filter(|n| n.starts_with("samples/") && n.ends_with(".json"))
        .collect();
    names.sort();
    let mut samples = Vec::new();
    for name in names {
        let got: anyhow::Result<Option<Value>> = entry_json(&mut zip, &name);
        let parsed = got.and_then(|v| {
            let v = v.context("vanished from the archive")?;
            Ok(Maybe::Bad(v).into_result_typed())
        });
        match parsed {
            Ok(Ok(s)) => samples.push(convert(s, &header.eval)),
            Ok(Err(why)) => problems.push(format!("{}: {why}: left out", path.display())),
            Err(e) => problems.push(format!("{}: {name}: {e:#}: left out", path.display())),
        }
    }
    Ok(vec![finish(path, header, samples, problems)])
}

impl Maybe {
    /// A sample from a value already read (an archive entry), with the reason when it is not one.
    fn into_result_typed(self) -> Result<Sample, String> {
        match self {
            Maybe::Ok(s) => Ok(*s),
            Maybe::Bad(v) => {
                let id = v.get("id").map(id_text).unwrap_or_else(|| "?".into());
                serde_json::from_value::<Sample>(v).map_err(|e| format!("sample {id}: {e}"))
            }
        }
    }
}

/// An archive entry read as JSON, refusing one that inflates past [`MAX_ENTRY_BYTES`] (the
/// archive's own size field can lie, so the read itself is capped).
fn entry_json<T: serde::de::DeserializeOwned>(
    zip: &mut zip::ZipArchive<std::fs::File>,
    name: &str,
) -> anyhow::Result<Option<T>> {
    let entry = match zip.by_name(name) {
        Ok(e) => e,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(anyhow::Error::new(e).context(format!("{name}: unreadable entry"))),
    };
    if entry.size() > MAX_ENTRY_BYTES {
        bail!(
            "{name}: inflates to {} MiB, over the {} MiB an entry may (a zip bomb?)",
            entry.size() >> 20,
            MAX_ENTRY_BYTES >> 20
        );
    }
    let mut buf = Vec::new();
    entry
        .take(MAX_ENTRY_BYTES + 1)
        .read_to_end(&mut buf)
        .with_context(|| format!("{name}: unreadable entry"))?;
    if buf.len() as u64 > MAX_ENTRY_BYTES {
        bail!(
            "{name}: inflates past the {} MiB an entry may (a zip bomb?)",
            MAX_ENTRY_BYTES >> 20
        );
    }
    serde_json::from_slice(&buf)
        .map(Some)
        .with_context(|| format!("{name}: not JSON"))
}

fn check_version(v: u32) -> anyhow::Result<()> {
    if v > LOG_VERSION {
        bail!(
            "inspect_ai log format version {v} is newer than this prism reads (up to {LOG_VERSION}): update prism, or write the log with an inspect_ai that uses version {LOG_VERSION}"
        );
    }
    Ok(())
}

fn finish(
    path: &Path,
    header: Header,
    samples: Vec<ForeignSample>,
    problems: &mut Vec<String>,
) -> ForeignRun {
    if !header.status.is_empty() && header.status != "success" {
        problems.push(format!(
            "{}: note: the log's status is {:?}: imported the {} samples it holds",
            path.display(),
            header.status,
            samples.len()
        ));
    }
    ForeignRun {
        tool: Tool::Inspect,
        version: header
            .eval
            .packages
            .get("inspect_ai")
            .cloned()
            .unwrap_or_else(|| "unknown".into()),
        task: header.eval.task.clone(),
        file: path.to_path_buf(),
        created: header.eval.created.clone(),
        samples,
    }
}

fn convert(s: Sample, eval: &EvalSpec) -> ForeignSample {
    let resolve = |t: String| match t.strip_prefix("attachment://") {
        Some(h) => s.attachments.get(h).cloned().unwrap_or(t),
        None => t,
    };
    let output = s.output.as_ref().and_then(|o| {
        o.completion.clone().filter(|c| !c.is_empty()).or_else(|| {
            o.choices
                .first()
                .and_then(|c| c.get("message"))
                .and_then(|m| m.get("content"))
                .map(super::content_text)
                .filter(|c| !c.is_empty())
        })
    });
    let error = match (&s.error, &output) {
        (Some(e), _) => Some(
            e.get("message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| e.to_string()),
        ),
        (None, None) => Some("no output in the log".into()),
        (None, Some(_)) => None,
    };
    // The first scorer is the sample's score (inspect lists the headline scorer first).
    let score = s
        .scores
        .as_ref()
        .and_then(|m| m.iter().next())
        .map(|(name, sc)| SourceScore {
            name: name.clone(),
            shown: super::plain(&sc.value).unwrap_or_else(|| "-".into()),
            value: value_to_float(&sc.value),
            explanation: sc.explanation.as_ref().and_then(super::plain),
        });
    ForeignSample {
        id: id_text(&s.id),
        epoch: s.epoch.max(1),
        model: eval.model.clone(),
        input: resolve(super::last_user_text(&s.input)),
        target: super::plain(&s.target).map(resolve),
        choices: s.choices.clone().unwrap_or_default(),
        category: super::category_of(&s.metadata),
        metadata: super::json_text(&s.metadata),
        output: output.map(resolve),
        error,
        score,
    }
}

/// inspect's own `value_to_float`: C 1, P 0.5, I and N 0, yes/true 1, numbers as they are.
pub fn value_to_float(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::String(s) => match s.trim() {
            "C" => Some(1.0),
            "P" => Some(0.5),
            "I" | "N" => Some(0.0),
            t => match t.to_ascii_lowercase().as_str() {
                "yes" | "true" | "correct" => Some(1.0),
                "no" | "false" | "incorrect" => Some(0.0),
                other => other.parse().ok(),
            },
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_read_as_inspect_reads_them() {
        let f = |s: &str| value_to_float(&serde_json::from_str(s).unwrap());
        assert_eq!(f("\"C\""), Some(1.0));
        assert_eq!(f("\"P\""), Some(0.5));
        assert_eq!(f("\"I\""), Some(0.0));
        assert_eq!(f("\"N\""), Some(0.0));
        assert_eq!(f("0.25"), Some(0.25));
        assert_eq!(f("true"), Some(1.0));
        assert_eq!(f("{\"a\": 1}"), None);
    }

    #[test]
    fn attachments_are_resolved_and_a_chat_input_reads_as_its_last_user_turn() {
        let s: Sample = serde_json::from_str(
            r#"{"id": 7, "input": [{"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "attachment://h1"}]}],
                "target": ["a", "b"], "attachments": {"h1": "the long question"},
                "output": {"completion": "", "choices": [{"message": {"content": "yes"}}]}}"#,
        )
        .unwrap();
        let x = convert(s, &EvalSpec::default());
        assert_eq!(x.id, "7");
        assert_eq!(x.input, "the long question");
        assert_eq!(x.target.as_deref(), Some("a\nb"));
        assert_eq!(
            x.output.as_deref(),
            Some("yes"),
            "from the choices when no completion"
        );
        assert_eq!(x.error, None);
    }
}
