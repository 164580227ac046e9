//! A run imported from another tool: the tool's own scores over its tree (tool → task →
//! category), as rates like prism's, and how the tool's verdicts agree with PRISM's rules on
//! the answers both scored.

use std::collections::{BTreeMap, HashMap};

use super::tables::Table;
use crate::foreign::record::{self, SourceRecord};

/// The source tables of `run_id`, none when it was not imported from a tool.
pub(crate) fn tables(db: &crate::store::Db, run_id: &str) -> anyhow::Result<Vec<Table>> {
    let store = db.read()?;
    let Some(run) = store.run(run_id)? else {
        return Ok(Vec::new());
    };
    let Some(src) = run.config.source.as_ref() else {
        return Ok(Vec::new());
    };
    let rows = record::of_run(db, run_id)?;
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let jobs: HashMap<u32, (String, String)> = store
        .jobs(run_id)?
        .into_iter()
        .map(|(j, _)| (j.idx, (j.model, j.task_id)))
        .collect();
    let prism: HashMap<u32, f64> = store
        .scores(Some(run_id))?
        .into_iter()
        .filter_map(|s| Some((s.job_idx, s.score?)))
        .collect();
    let mut out = vec![tree_table(src, &rows, &jobs)];
    if let Some(t) = agreement_table(src, &rows, &prism) {
        out.push(t);
    }
    Ok(out)
}

/// Per model and node of the tool's tree: answers, how many the tool scored, the mean of its
/// scores and the hallucination rate they make (100 × (1 − mean), as prism's rates read).
fn tree_table(
    src: &crate::store::RunSource,
    rows: &BTreeMap<u32, SourceRecord>,
    jobs: &HashMap<u32, (String, String)>,
) -> Table {
    // (model, node) → (answers, scored, sum of scores)
    let mut acc: BTreeMap<(String, String), (usize, usize, f64)> = BTreeMap::new();
    for r in rows.values() {
        let model = jobs.get(&r.job_idx).map_or("?", |(m, _)| m.as_str());
        let task = format!("{}/{}", r.tool, r.task);
        let mut nodes = vec![task.clone()];
        if let Some(c) = &r.category {
            nodes.push(format!("{task}/{c}"));
        }
        for node in nodes {
            let e = acc.entry((model.to_string(), node)).or_default();
            e.0 += 1;
            if let Some(v) = r.score {
                e.1 += 1;
                e.2 += v;
            }
        }
    }
    let rows = acc
        .into_iter()
        .map(|((model, node), (n, scored, sum))| {
            let (mean, rate) = if scored > 0 {
                let m = sum / scored as f64;
                (format!("{m:.3}"), format!("{:.2}", 100.0 * (1.0 - m)))
            } else {
                (String::new(), String::new())
            };
            vec![model, node, n.to_string(), scored.to_string(), mean, rate]
        })
        .collect();
    Table {
        id: "source_scores",
        title: format!(
            "The tool's own scores: {} {} (task {}, made {}, from {})",
            src.tool, src.version, src.task, src.created, src.file
        ),
        header: vec!["model", "tree", "answers", "scored", "tool mean", "rate %"],
        rows,
    }
}

/// How the tool's verdict (right at ≥ 0.5) and PRISM's score agree on the answers both scored.
fn agreement_table(
    src: &crate::store::RunSource,
    rows: &BTreeMap<u32, SourceRecord>,
    prism: &HashMap<u32, f64>,
) -> Option<Table> {
    let (mut both_right, mut both_wrong, mut tool_only, mut prism_only) = (0, 0, 0, 0);
    for r in rows.values() {
        let (Some(t), Some(&p)) = (r.score, prism.get(&r.job_idx)) else {
            continue;
        };
        match (t >= 0.5, p >= 0.5) {
            (true, true) => both_right += 1,
            (false, false) => both_wrong += 1,
            (true, false) => tool_only += 1,
            (false, true) => prism_only += 1,
        }
    }
    let n = both_right + both_wrong + tool_only + prism_only;
    if n == 0 {
        return None;
    }
    let agree = both_right + both_wrong;
    Some(Table {
        id: "source_agreement",
        title: format!(
            "{} and PRISM's rules on the same {n} answers: agree on {agree} ({:.0}%)",
            src.tool,
            100.0 * agree as f64 / n as f64
        ),
        header: vec![
            "answers",
            "both right",
            "both wrong",
            "only the tool says right",
            "only PRISM says right",
        ],
        rows: vec![vec![
            n.to_string(),
            both_right.to_string(),
            both_wrong.to_string(),
            tool_only.to_string(),
            prism_only.to_string(),
        ]],
    })
}
