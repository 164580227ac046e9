//! `prism import`: runs made elsewhere into the store. Logs of inspect_ai, lm-evaluation-harness
//! and promptfoo (read by `foreign`), or PRISM's official `outputs/` layout (`exchange`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::foreign::{self, Tool, place};

/// Options of `prism import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// Logs to import: inspect_ai's .eval or .json log, lm-eval's samples_<task>_*.jsonl (with
    /// its results_*.json beside it) or results file, promptfoo's results.json; a directory
    /// stands for the logs in it. Each becomes one run; a file imported before is that run.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Read the files as this tool's logs instead of telling by their content.
    #[arg(long, value_name = "TOOL", value_parser = ["inspect", "lm-eval", "promptfoo"])]
    pub format: Option<String>,
    /// PRISM's official outputs/<model>/responses/*.jsonl, as one run.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["files", "format"])]
    pub prism_outputs: Option<PathBuf>,
    /// The store (default: prism.db in the data dir), or a shared store (postgres://...):
    /// imported here, then the run copied there.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// The PRISM release the answers belong to. A sample that is one of its items (by id, else
    /// by the exact question text) lands in that item's sub-task and `prism score` scores it by
    /// PRISM's rules; the rest sit under <tool>/<task>/<category> with the tool's own score.
    /// With --prism-outputs, items of an answered task with no response are kept as failed.
    #[arg(long, visible_alias = "data")]
    pub dataset: Option<PathBuf>,
    /// An imported model answered by a configured one when a lane needs new answers
    /// (contradictions, entropy, sentences): 'gpt-4o-2024-08-06=gpt4o'. Repeat for more.
    #[arg(long, value_name = "IMPORTED=CONFIGURED")]
    pub model_map: Vec<String>,
}

pub(crate) fn import(args: ImportArgs, dirs: &crate::config::Dirs) -> anyhow::Result<i32> {
    if let Some(dir) = &args.prism_outputs {
        return super::exchange::import_cmd(dir, args.db, args.dataset, dirs);
    }
    if args.files.is_empty() {
        anyhow::bail!(
            "nothing to import: name a log (inspect_ai .eval/.json, lm-eval samples_*.jsonl, promptfoo results.json) or --prism-outputs DIR"
        );
    }
    let model_map = parse_map(&args.model_map)?;
    let db = crate::store::Db::open(args.db.as_deref(), &super::run::default_db(dirs))?;
    let ds = match &args.dataset {
        Some(d) => Some(super::run::open_dataset(Some(d.as_path()))?),
        None => None,
    };
    let opts = place::Options {
        dataset: ds.as_ref().map(|(d, _)| d.as_ref()),
        dataset_ref: ds
            .as_ref()
            .map_or_else(|| "<none>".to_string(), |(_, r)| r.clone()),
        model_map,
    };
    let forced = args.format.as_deref().and_then(Tool::parse);
    let read = foreign::read(&args.files, forced);
    let mut problems = read.problems;
    let mut made: Vec<String> = Vec::new();
    for run in &read.runs {
        let placed = match place::import(&db, run, &opts) {
            Ok(p) => p,
            Err(e) => {
                problems.push(format!("{e:#}"));
                continue;
            }
        };
        problems.extend(placed.problems.iter().cloned());
        let what = format!(
            "{} {} {}",
            run.tool.name(),
            run.version,
            if run.task.is_empty() { "-" } else { &run.task }
        );
        if placed.already {
            crate::warn!(
                "{}: imported before as run {} ({what}): nothing written",
                run.file.display(),
                placed.run_id
            );
        } else {
            made.push(placed.run_id.clone());
            let mut line = format!(
                "{}: {} answers of {} ({what}) as run {}",
                run.file.display(),
                placed.answers,
                placed.models.join(", "),
                placed.run_id
            );
            if opts.dataset.is_some() {
                line.push_str(&format!(
                    ": {} on the release's items, {} under {}/{}",
                    placed.matched,
                    placed.answers - placed.matched,
                    run.tool.name(),
                    run.task
                ));
            }
            crate::warn!("{line}");
            if db.is_shared() {
                let answers = db.push_run(&placed.run_id)?;
                crate::warn!(
                    "run {} copied to {}: {answers} answers",
                    placed.run_id,
                    db.shown()
                );
            }
        }
        crate::say!("{}", placed.run_id);
    }
    for p in &problems {
        crate::warn!("{p}");
    }
    if !made.is_empty() && opts.dataset.is_some() {
        let run = match made.as_slice() {
            [one] => one.as_str(),
            _ => "RUN",
        };
        crate::warn!(
            "score the answers on the release's items by PRISM's rules: prism score --run {run}"
        );
    }
    Ok(if read.runs.is_empty() {
        1
    } else if problems.is_empty() {
        0
    } else {
        2
    })
}

/// `IMPORTED=CONFIGURED` pairs.
fn parse_map(pairs: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    pairs
        .iter()
        .map(|p| match p.rsplit_once('=') {
            Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() => {
                Ok((a.trim().to_string(), b.trim().to_string()))
            }
            _ => anyhow::bail!(
                "--model-map {p:?}: expected IMPORTED=CONFIGURED (gpt-4o-2024-08-06=gpt4o)"
            ),
        })
        .collect()
}
