//! The user's own judge wordings on the command line: `prism score --judge-template` (scores
//! by a judge asked with it) and `prism judges --try-template` (each wording, and the
//! dataset's, asked on the answers people labelled, then compared: which agrees with people).

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::bail;
use tokio::sync::mpsc;

use crate::config::Dirs;
use crate::dataset::Dataset;
use crate::engine::score::{Judging, Panel, ToScore, score_all};
use crate::engine::{BackendFactory, Caller};
use crate::review::judge_templates::{self, JudgeTemplate};
use crate::review::template_trial::TemplatePair;

/// The wordings given for one scoring, and the label its judges carry.
#[derive(Debug, Clone, Default)]
pub(crate) struct Wording {
    pub templates: Vec<JudgeTemplate>,
    pub label: Option<String>,
}

impl Wording {
    /// Reads each `[JUDGE=]FILE` (one wording per judge).
    pub(crate) fn load(args: &[String]) -> anyhow::Result<Wording> {
        let templates = args
            .iter()
            .map(|a| JudgeTemplate::load(a))
            .collect::<Result<Vec<_>, _>>()
            .map_err(anyhow::Error::msg)?;
        let label = judge_templates::label(&templates).map_err(anyhow::Error::msg)?;
        Ok(Wording { templates, label })
    }

    /// `ds` asked with these wordings (itself without any).
    pub(crate) fn apply(&self, ds: Arc<Dataset>) -> Arc<Dataset> {
        if self.templates.is_empty() {
            ds
        } else {
            Arc::new(judge_templates::apply(&ds, &self.templates))
        }
    }

    /// The configured judge `model` as this wording's judge (named `model~label`).
    pub(crate) fn judge(
        &self,
        model: &crate::provider::ModelConfig,
    ) -> crate::provider::ModelConfig {
        let mut cfg = model.clone();
        cfg.name = judge_templates::judge_name(&model.name, self.label.as_deref());
        cfg
    }

    /// Keeps the wordings' text in the store (what the trial and calibrations bind to).
    pub(crate) fn keep(&self, db: &crate::store::Db) -> anyhow::Result<()> {
        if !self.templates.is_empty() {
            db.add_labels(&self.templates)?;
        }
        Ok(())
    }
}

/// `prism judges --try-template`: asks `judge` with each wording (and the dataset's own) on
/// every labelled answer of `run` (of every run) a judge decides, keeping each verdict under
/// its wording's judge name; scores stay as they are. Returns the judges asked.
pub(crate) fn try_templates(
    db: &crate::store::Db,
    run: Option<&str>,
    judge: &str,
    files: &[String],
    repeats: u32,
    dirs: &Dirs,
    factory: &BackendFactory,
) -> anyhow::Result<Vec<String>> {
    let mut wordings = vec![Wording::default()];
    for f in files {
        let w = Wording::load(std::slice::from_ref(f))?;
        if wordings.iter().any(|o| o.label == w.label) {
            bail!(
                "--try-template: two files named {:?}",
                w.label.unwrap_or_default()
            );
        }
        wordings.push(w);
    }
    let judge_cfg = super::run::load_models(dirs, None)?
        .select(judge)
        .map_err(|e| anyhow::anyhow!("--judge: {e}"))?;
    let cfg = &judge_cfg[0];
    db.read_existing("run prism run and label answers first")?;
    let by_run = labelled_answers(db, run)?;
    if by_run.is_empty() {
        bail!(
            "no labelled answers{}: label answers first (prism labels add, or L in the TUI's J view)",
            run.map(|r| format!(" in run {}", crate::text::one_line(r)))
                .unwrap_or_default()
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let handle = db.records_handle("judges:try-template", "verdict(s)")?;
    let mut asked = Vec::new();
    for w in &wordings {
        w.keep(db)?;
        let caller = Arc::new(Caller::new(
            &w.judge(cfg),
            factory,
            Some(handle.clone()),
            true,
            tokio_util::sync::CancellationToken::new(),
        )?);
        let panel = Panel {
            repeats,
            ..Panel::single(caller)
        };
        asked.push(panel.name());
        for (ds, inputs) in &by_run {
            let ds = w.apply(ds.clone());
            let (tx, mut rx) = mpsc::unbounded_channel();
            let judging = Judging {
                panel: Some(panel.clone()),
                concurrency: 4,
                keep_scores: false,
            };
            let counts = rt.block_on(async {
                let task = tokio::spawn(score_all(
                    ds,
                    inputs.clone(),
                    judging,
                    Some(handle.clone()),
                    tx,
                ));
                while rx.recv().await.is_some() {}
                task.await?
            })?;
            crate::warn!(
                "{}: {} answer(s) judged{}",
                panel.name(),
                counts.by_judge,
                if counts.judge_errors > 0 {
                    format!(
                        ", {} could not be judged (the judge was not reached)",
                        counts.judge_errors
                    )
                } else {
                    String::new()
                }
            );
        }
    }
    db.finish()?;
    Ok(asked)
}

/// The labelled answers of `run` (of every run), by run: its dataset and the answers.
fn labelled_answers(
    db: &crate::store::Db,
    run: Option<&str>,
) -> anyhow::Result<Vec<(Arc<Dataset>, Vec<ToScore>)>> {
    let store = db.read()?;
    let mut jobs: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for l in store.answer_labels(run)? {
        jobs.entry(l.run_id).or_default().push(l.job_idx);
    }
    let mut out = Vec::new();
    for (run_id, mut js) in jobs {
        js.sort_unstable();
        js.dedup();
        let Some(r) = store.run(&run_id)? else {
            continue;
        };
        let (ds, _) = super::run::open_dataset(super::run::dataset_path(&r.dataset))?;
        let mut inputs = Vec::new();
        for j in js {
            if let Some(resp) = store.response(&run_id, j)?
                && let Some(item) = ds.index_of(&resp.item_id)
            {
                inputs.push(ToScore::from_record(item, &resp));
            }
        }
        if !inputs.is_empty() {
            out.push((ds, inputs));
        }
    }
    Ok(out)
}

/// The trial's comparison of wordings, for `prism judges`' text.
pub(crate) fn text(pairs: &[TemplatePair]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let f = |v: Option<f64>| v.map_or("-".into(), |v| crate::text::fixed(v, 2));
    let mut s = String::from(
        "\nWordings of one judge on the same labelled answers (prism judges --try-template):\n",
    );
    for p in pairs {
        s.push_str(&format!(
            "  {} vs {}  n {}  accuracy {} / {}  kappa {} / {}  AC1 {} / {}  only right: {} / {}\n    {}\n",
            p.a,
            p.b,
            p.n,
            f(p.accuracy_a),
            f(p.accuracy_b),
            f(p.kappa_a),
            f(p.kappa_b),
            f(p.ac1_a),
            f(p.ac1_b),
            p.only_a_right,
            p.only_b_right,
            p.say()
        ));
    }
    s
}
