//! lm-evaluation-harness's `--log_samples` output: `samples_<task>_<time>.jsonl`, one document
//! per line (`doc_id`, `doc`, `target`, `arguments`, `resps`, `filtered_resps`, `metrics` and
//! each metric's value), with `results_<time>.json` beside it for the model, the harness's
//! version and the date.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::Value;

use super::{ForeignRun, ForeignSample, SourceScore, Tool};
use crate::dataset::{Line, LineReader, MAX_LINE_BYTES};

/// Reads a samples file, or the samples files of a results file.
pub fn read(path: &Path, problems: &mut Vec<String>) -> anyhow::Result<Vec<ForeignRun>> {
    let name = file_name(path);
    if name.starts_with("results_") && name.ends_with(".json") {
        let stamp = stamp_of(&name, "results_", ".json");
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let n = file_name(p);
                n.starts_with("samples_") && n.ends_with(&format!("_{stamp}.jsonl"))
            })
            .collect();
        files.sort();
        if files.is_empty() {
            anyhow::bail!(
                "no samples_<task>_{stamp}.jsonl beside it: run lm_eval with --log_samples, and import the samples files"
            );
        }
        return files.iter().map(|f| read_samples(f, problems)).collect();
    }
    Ok(vec![read_samples(path, problems)?])
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `samples_<task>_<stamp>.jsonl` → `<stamp>` (the text after the last `_`).
fn stamp_of(name: &str, prefix: &str, suffix: &str) -> String {
    let core = name
        .strip_prefix(prefix)
        .and_then(|n| n.strip_suffix(suffix))
        .unwrap_or(name);
    core.rsplit_once('_').map_or(core, |(_, s)| s).to_string()
}

/// What the results file beside a samples file says of the run.
#[derive(Default)]
struct Results {
    model: Option<String>,
    version: Option<String>,
    date: Option<String>,
}

fn results_beside(samples: &Path, problems: &mut Vec<String>) -> Results {
    let name = file_name(samples);
    let stamp = stamp_of(&name, "samples_", ".jsonl");
    let path = samples
        .parent()
        .unwrap_or(Path::new("."))
        .join(format!("results_{stamp}.json"));
    let v: Value = match super::regular_file(&path)
        .map_err(anyhow::Error::from)
        .and_then(|f| Ok(serde_json::from_reader(BufReader::new(f))?))
    {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!(
                "{}: note: no readable {} beside it ({e}): the model is taken from the file name's folder",
                samples.display(),
                path.display()
            ));
            return Results::default();
        }
    };
    let s = |v: Option<&Value>| v.and_then(|x| x.as_str()).map(str::to_string);
    Results {
        model: s(v.get("model_name"))
            .filter(|m| !m.is_empty())
            .or_else(|| s(v.pointer("/config/model_args/model")))
            .or_else(|| s(v.pointer("/config/model_args")))
            .or_else(|| s(v.pointer("/config/model"))),
        version: s(v.get("lm_eval_version")),
        date: v.get("date").and_then(|d| match d {
            Value::Number(n) => n.as_f64().map(|t| crate::store::format_time(t as i64)),
            Value::String(s) => Some(s.clone()),
            _ => None,
        }),
    }
}

fn read_samples(path: &Path, problems: &mut Vec<String>) -> anyhow::Result<ForeignRun> {
    let name = file_name(path);
    let stamp = stamp_of(&name, "samples_", ".jsonl");
    let task = name
        .strip_prefix("samples_")
        .and_then(|n| n.strip_suffix(".jsonl"))
        .and_then(|n| n.strip_suffix(&format!("_{stamp}")))
        .unwrap_or(&name)
        .to_string();
    let results = results_beside(path, problems);
    // lm-eval writes each model's files under a folder named for it.
    let model = results.model.clone().unwrap_or_else(|| {
        path.parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "unknown".into())
    });
    let f = super::regular_file(path).context("cannot open")?;
    let mut lines = LineReader::new(BufReader::new(f), MAX_LINE_BYTES);
    let mut samples = Vec::new();
    loop {
        let (n, line) = match lines.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => {
                problems.push(format!("{}: {e}", path.display()));
                break;
            }
        };
        let at = format!("{}:{n}", path.display());
        let text = match line {
            Line::Text(t) => String::from_utf8_lossy(t).into_owned(),
            Line::TooLong(b) => {
                problems.push(format!(
                    "{at}: a line of {b} bytes, over the {} MiB a line may have: left out",
                    MAX_LINE_BYTES >> 20
                ));
                continue;
            }
        };
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(&text) {
            Ok(v) => match sample(&v, &model) {
                Ok(s) => samples.push(s),
                Err(why) => problems.push(format!("{at}: {why}: left out")),
            },
            Err(e) => problems.push(format!("{at}: invalid JSON: {e}: left out")),
        }
    }
    Ok(ForeignRun {
        tool: Tool::LmEval,
        version: results.version.unwrap_or_else(|| "unknown".into()),
        task,
        file: path.to_path_buf(),
        created: results.date.unwrap_or_default(),
        samples,
    })
}

/// One line of a samples file.
fn sample(v: &Value, model: &str) -> Result<ForeignSample, String> {
    let doc_id = v
        .get("doc_id")
        .ok_or("doc_id: missing (not an lm-eval sample)")?;
    let doc = v.get("doc").cloned().unwrap_or(Value::Null);
    let id = doc
        .get("id")
        .and_then(super::plain)
        .unwrap_or_else(|| format!("doc {}", super::plain(doc_id).unwrap_or_default()));
    let choices: Vec<String> = ["choices", "options"]
        .iter()
        .find_map(|k| doc.get(*k).and_then(|c| c.as_array()))
        .map(|a| a.iter().filter_map(super::plain).collect())
        .unwrap_or_default();
    let args = v.get("arguments");
    let arg = |i: usize, j: usize| {
        args.and_then(|a| a.get(format!("gen_args_{i}")))
            .and_then(|g| g.get(format!("arg_{j}")))
    };
    // The prompt as sent: a chat (a JSON list as text) or plain text.
    let prompt = arg(0, 0).and_then(|p| match p {
        Value::Array(a) => a.first().and_then(|x| x.as_str()).map(str::to_string),
        Value::String(s) => Some(s.clone()),
        _ => None,
    });
    let input = match prompt {
        Some(p) => match serde_json::from_str::<Value>(&p) {
            Ok(msgs @ Value::Array(_)) => super::last_user_text(&msgs),
            _ => p,
        },
        None => ["question", "input", "query", "prompt", "text"]
            .iter()
            .find_map(|k| doc.get(*k).and_then(|q| q.as_str()))
            .unwrap_or_default()
            .to_string(),
    };
    let filtered = v
        .get("filtered_resps")
        .or_else(|| v.get("resps"))
        .and_then(|r| r.as_array())
        .cloned()
        .unwrap_or_default();
    let output = answer_of(&filtered, |i| arg(i, 1).and_then(super::plain));
    let target = v.get("target").and_then(|t| match t {
        // An index into the choices (multiple choice tasks).
        Value::Number(n) => n
            .as_u64()
            .and_then(|i| choices.get(i as usize).cloned())
            .or_else(|| Some(n.to_string())),
        other => super::plain(other),
    });
    let metric = v
        .get("metrics")
        .and_then(|m| m.as_array())
        .and_then(|m| m.first())
        .and_then(|m| m.as_str());
    let score = metric.map(|m| {
        let val = v.get(m).cloned().unwrap_or(Value::Null);
        SourceScore {
            name: m.to_string(),
            shown: super::plain(&val).unwrap_or_else(|| "-".into()),
            value: super::inspect::value_to_float(&val),
            explanation: None,
        }
    });
    Ok(ForeignSample {
        id,
        epoch: 1,
        model: model.to_string(),
        input,
        error: output.is_none().then(|| "no output in the log".to_string()),
        output,
        target,
        choices,
        category: super::category_of(&doc),
        metadata: super::json_text(&doc),
        score,
    })
}

/// The answer in `filtered_resps`: the text generated, or for a loglikelihood task the
/// continuation it scored highest (`[loglikelihood, is_greedy]` per choice).
fn answer_of(resps: &[Value], continuation: impl Fn(usize) -> Option<String>) -> Option<String> {
    let flat: Vec<&Value> = resps
        .iter()
        .map(|r| match r {
            Value::Array(a) if a.len() == 1 => &a[0],
            other => other,
        })
        .collect();
    if let Some(Value::String(s)) = flat.first() {
        return Some(s.clone());
    }
    let lls: Vec<f64> = flat
        .iter()
        .filter_map(|r| {
            r.as_array()
                .and_then(|a| a.first())
                .and_then(|x| x.as_f64())
        })
        .collect();
    if lls.is_empty() || lls.len() != flat.len() {
        return None;
    }
    let best = lls
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, _)| i)?;
    continuation(best).map(|c| c.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stamp_is_what_follows_the_task() {
        assert_eq!(
            stamp_of(
                "samples_mmlu_high_school_2026-12-06T23-54-20.3.jsonl",
                "samples_",
                ".jsonl"
            ),
            "2026-12-06T23-54-20.3"
        );
        assert_eq!(
            stamp_of("results_2026-12-06T23-54-20.3.json", "results_", ".json"),
            "2026-12-06T23-54-20.3"
        );
    }

    #[test]
    fn a_loglikelihood_answer_is_the_choice_scored_highest() {
        let resps: Vec<Value> =
            serde_json::from_str("[[[-3.2, false]], [[-0.4, true]], [[-9.0, false]]]").unwrap();
        let conts = [" Paris", " Lyon", " Nice"];
        assert_eq!(
            answer_of(&resps, |i| conts.get(i).map(|c| c.to_string())).as_deref(),
            Some("Lyon")
        );
        let made: Vec<Value> = serde_json::from_str("[\"42\"]").unwrap();
        assert_eq!(answer_of(&made, |_| None).as_deref(), Some("42"));
        assert_eq!(answer_of(&[], |_| None), None);
    }

    #[test]
    fn a_target_index_names_its_choice() {
        let v: Value = serde_json::from_str(
            r#"{"doc_id": 3, "doc": {"question": "Q?", "choices": ["a", "b", "c"], "subject": "law"},
                "target": 2, "filtered_resps": ["c"], "metrics": ["acc"], "acc": 1.0}"#,
        )
        .unwrap();
        let s = sample(&v, "m").unwrap();
        assert_eq!(s.target.as_deref(), Some("c"));
        assert_eq!(s.id, "doc 3");
        assert_eq!(s.category.as_deref(), Some("law"));
        assert_eq!(s.input, "Q?", "no arguments: the document's question");
        assert_eq!(s.score.unwrap().label(Tool::LmEval), "lm-eval: acc 1.0");
    }
}
