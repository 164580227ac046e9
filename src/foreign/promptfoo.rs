//! promptfoo's `-o results.json`: `{evalId, results: {version, timestamp, results: [...]},
//! config, metadata: {promptfooVersion}}`, one result per test case, prompt and provider.

use std::io::BufReader;
use std::path::Path;

use anyhow::{Context, bail};
use serde::Deserialize;
use serde_json::Value;

use super::{ForeignRun, ForeignSample, SourceScore, Tool};

/// The newest `results.version` this reads (promptfoo 0.121 writes 3).
pub const RESULTS_VERSION: u64 = 3;

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    results: Option<Results>,
    #[serde(default)]
    config: Value,
    #[serde(default)]
    metadata: Value,
}

#[derive(Deserialize)]
struct Results {
    #[serde(default)]
    version: u64,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    results: Option<Vec<Value>>,
}

pub fn read(path: &Path, problems: &mut Vec<String>) -> anyhow::Result<Vec<ForeignRun>> {
    let f = super::regular_file(path)?;
    let file: File = serde_json::from_reader(BufReader::with_capacity(1 << 20, f))
        .context("does not read as promptfoo's results.json")?;
    let results = file
        .results
        .context("results: missing (write it with promptfoo eval -o results.json)")?;
    if results.version > RESULTS_VERSION {
        bail!(
            "promptfoo results version {} is newer than this prism reads (up to {RESULTS_VERSION}): update prism",
            results.version
        );
    }
    let rows = results
        .results
        .context("results.results: missing (an older promptfoo's table output? write it with -o results.json)")?;
    let many_prompts = rows
        .iter()
        .filter_map(|r| r.get("promptIdx").and_then(|p| p.as_u64()))
        .any(|p| p > 0);
    let mut samples = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        match sample(r, many_prompts) {
            Ok(s) => samples.push(s),
            Err(why) => problems.push(format!(
                "{}: result {}: {why}: left out",
                path.display(),
                i + 1
            )),
        }
    }
    let task = file
        .config
        .get("description")
        .and_then(|d| d.as_str())
        .unwrap_or("promptfoo eval")
        .to_string();
    Ok(vec![ForeignRun {
        tool: Tool::Promptfoo,
        version: file
            .metadata
            .get("promptfooVersion")
            .and_then(|v| v.as_str())
            .unwrap_or("unknown")
            .to_string(),
        task,
        file: path.to_path_buf(),
        created: results.timestamp.unwrap_or_default(),
        samples,
    }])
}

fn sample(r: &Value, many_prompts: bool) -> Result<ForeignSample, String> {
    if !r.is_object() {
        return Err("not an object".into());
    }
    let s = |p: &str| r.pointer(p).and_then(|v| v.as_str()).map(str::to_string);
    let test_idx = r.get("testIdx").and_then(|v| v.as_u64());
    let prompt_idx = r.get("promptIdx").and_then(|v| v.as_u64()).unwrap_or(0);
    let base = s("/testCase/description")
        .or_else(|| s("/vars/id"))
        .or_else(|| test_idx.map(|i| format!("test {}", i + 1)))
        .ok_or("neither a test description nor a test index")?;
    // The same test under several prompts is several items (each prompt asks it differently).
    let id = if many_prompts {
        format!("{base} · prompt {}", prompt_idx + 1)
    } else {
        base
    };
    let model = s("/provider/label")
        .filter(|l| !l.is_empty())
        .or_else(|| s("/provider/id"))
        .or_else(|| s("/provider"))
        .ok_or("provider: missing")?;
    let output = match r.pointer("/response/output") {
        Some(Value::Null) | None => None,
        Some(v) => super::plain(v),
    };
    let error = s("/error")
        .or_else(|| s("/response/error"))
        .filter(|e| !e.is_empty())
        .or_else(|| output.is_none().then(|| "no output in the log".to_string()));
    let vars = r
        .get("vars")
        .or_else(|| r.pointer("/testCase/vars"))
        .cloned()
        .unwrap_or(Value::Null);
    // The target is what the first assertion with a text value checks for.
    let target = r
        .pointer("/testCase/assert")
        .and_then(|a| a.as_array())
        .and_then(|a| {
            a.iter()
                .find_map(|x| x.get("value").and_then(|v| v.as_str()))
        })
        .map(str::to_string);
    let pass = r
        .get("success")
        .and_then(|v| v.as_bool())
        .or_else(|| r.pointer("/gradingResult/pass").and_then(|v| v.as_bool()));
    let score = pass.map(|p| SourceScore {
        name: "assertions".into(),
        shown: if p { "pass" } else { "fail" }.into(),
        value: Some(if p { 1.0 } else { 0.0 }),
        explanation: s("/gradingResult/reason").or_else(|| s("/failureReason")),
    });
    let category = super::category_of(&vars)
        .or_else(|| r.pointer("/testCase/metadata").and_then(super::category_of));
    Ok(ForeignSample {
        id,
        epoch: 1,
        model,
        input: s("/prompt/raw").unwrap_or_default(),
        target,
        choices: Vec::new(),
        category,
        metadata: super::json_text(&vars),
        output,
        error,
        score,
    })
}
