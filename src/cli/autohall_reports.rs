//! AutoHall's tables for the terminal: the claims tables after a run, `prism autohall --import
//! FILES [CLAIMS]` (the authors' released outputs stored as a run, with the collection table of
//! prism's own runs and what the import had to decide) and `prism autohall --analyse RUN` (the
//! paper's analyses of a stored run).

use std::io::IsTerminal;
use std::path::Path;

use anyhow::{Context, bail};
use serde_json::json;

use crate::dataset::claims::Truth;
use crate::detect::import::{self, File};
use crate::detect::{released, results};
use crate::store::DetectWrite;

fn truth(t: Option<crate::dataset::claims::Truth>) -> &'static str {
    t.map_or("unread", |t| t.as_str())
}

/// What `prism autohall --import` was asked.
pub(super) struct Import<'a> {
    /// The claims file the claims' truth is read from.
    pub claims: Option<&'a Path>,
    pub files: &'a [std::path::PathBuf],
    pub model_name: Option<&'a str>,
    pub reading: import::Reading,
    pub json: bool,
}

pub(super) fn import(args: &Import<'_>, db: &crate::store::Db) -> anyhow::Result<i32> {
    let json_mode = args.json || !std::io::stdout().is_terminal();
    let claims = match args.claims {
        Some(p) => {
            let loaded = crate::dataset::claims::load_path(p)
                .with_context(|| format!("reading the claims file {}", p.display()))?;
            for p in loaded.problems.iter().filter(|p| p.is_error()) {
                crate::warn!("{p}");
            }
            Some(loaded.set)
        }
        None => None,
    };
    let mut files = Vec::new();
    for path in args.files {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let shown = path.display().to_string();
        let released = released::read(&text, &shown);
        for p in &released.problems {
            crate::warn!("{p}");
        }
        let (model, temperature) = released::from_path(path);
        files.push(File {
            path: shown,
            released,
            model,
            temperature,
        });
    }
    if files.iter().all(|f| f.released.records.is_empty()) {
        bail!(
            "no record could be read from {}: each line should hold {}",
            files
                .iter()
                .map(|f| f.path.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            released::SHAPES_LOOKED_FOR
        );
    }
    let dataset = match args.claims {
        Some(p) => p.display().to_string(),
        None => files
            .iter()
            .map(|f| f.path.as_str())
            .collect::<Vec<_>>()
            .join(","),
    };
    let (run, targets, summary) = import::build(
        &files,
        claims.as_ref(),
        args.model_name,
        args.reading,
        dataset,
    );
    db.apply_detect(&[DetectWrite::CreateRun(Box::new(run.clone()), targets)])?;
    let stored = crate::detect::stored::Stored::load(db, &run.id)?;
    let mut rep = results::claims_report(&stored, 1, 0);
    // No samples were released with the classifications: there is no detection to show.
    rep.detection.clear();
    let notes = import_notes(&summary, args.reading, run.config.balanced_set);
    if json_mode {
        let line = json!({"event": "imported", "detect_id": run.id, "reading": args.reading,
            "balanced_set": run.config.balanced_set, "summary": summary,
            "collection": rep.collection, "notes": notes});
        crate::outln!("{}", crate::text::json_for_terminal(&line.to_string()));
        return Ok(0);
    }
    // The balanced set's note goes under the table whose H% it is about.
    for n in notes.iter().filter(|n| n.as_str() != BALANCED_NOTE) {
        crate::warn!("{n}");
    }
    eprint!("{}", crate::text::sanitize(&claims_table(&rep)));
    if run.config.balanced_set {
        crate::warn!("{BALANCED_NOTE}");
    }
    crate::say!("{}", run.id);
    Ok(0)
}

/// Lines named per file: `a.jsonl lines 3, 9, 12; b.jsonl line 4`, the first 20 of each.
fn lines_of(at: &[(String, usize)]) -> String {
    let mut files: Vec<(&str, Vec<usize>)> = Vec::new();
    for (f, l) in at {
        match files.iter_mut().find(|(g, _)| g == f) {
            Some((_, ls)) => ls.push(*l),
            None => files.push((f, vec![*l])),
        }
    }
    files
        .iter()
        .map(|(f, ls)| {
            let shown: Vec<String> = ls.iter().take(20).map(usize::to_string).collect();
            let more = if ls.len() > 20 {
                format!(" and {} more", ls.len() - 20)
            } else {
                String::new()
            };
            let word = if ls.len() == 1 { "line" } else { "lines" };
            format!("{f} {word} {}{more}", shown.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// What an import decided, in sentences for a person (and the JSON's `notes`).
fn import_notes(
    summary: &import::Summary,
    reading: import::Reading,
    balanced_set: bool,
) -> Vec<String> {
    let mut notes = vec![format!(
        "imported {} records ({} unreadable lines named above); the claim's truth: {} from the claims file, {} from the released label (or its position, below), {} unknown (left out of #N)",
        summary.records,
        summary.unreadable_lines,
        summary.truth_from_claims,
        summary.truth_from_label,
        summary.no_truth
    )];
    if summary.not_in_claims > 0 {
        notes.push(format!(
            "{} records' claims are not in the claims file",
            summary.not_in_claims
        ));
    }
    for f in &summary.labels_by_position {
        notes.push(format!(
            "{f}: no line holds its label; recovered by position (the authors wrote the hallucinated half first in every labelled file)"
        ));
    }
    if summary.label_disagrees > 0 {
        notes.push(format!(
            "{} records: the released label disagrees with the claims file (the claims file is used): {}",
            summary.label_disagrees,
            lines_of(&summary.disagreeing)
        ));
    }
    let other = match reading {
        import::Reading::Paper => "prism's reader",
        import::Reading::Prism => "the paper's reading",
    };
    notes.push(format!(
        "replies read the {} way; {other} reads {} of them otherwise{}",
        reading.as_str(),
        summary.readings_differ.len(),
        if summary.readings_differ.is_empty() {
            ""
        } else {
            " (file:line: paper / prism):"
        }
    ));
    for (file, line, paper, prism) in summary.readings_differ.iter().take(10) {
        notes.push(format!(
            "  {file}:{line}: {} / {}",
            truth(*paper),
            truth(*prism)
        ));
    }
    if summary.readings_differ.len() > 10 {
        notes.push(format!("  and {} more", summary.readings_differ.len() - 10));
    }
    if !summary.undetermined.is_empty() {
        // What the paper's reading makes of them, each group with its lines: it takes the
        // first truth word it meets, so "true or false" reads true and "truth or falsehood"
        // false.
        let group = |want: Option<Truth>| -> Vec<(String, usize)> {
            summary
                .undetermined
                .iter()
                .filter(|u| u.2 == want)
                .map(|u| (u.0.clone(), u.1))
                .collect()
        };
        let paper: Vec<String> = [
            (Some(Truth::True), "true"),
            (Some(Truth::False), "false"),
            (None, "no answer"),
        ]
        .into_iter()
        .filter_map(|(t, said)| {
            let at = group(t);
            (!at.is_empty()).then(|| format!("as {said}: {} ({})", at.len(), lines_of(&at)))
        })
        .collect();
        notes.push(format!(
            "{} replies say the claim's truth cannot be determined: prism's reader takes them as no answer (left out of #N); the paper's reading takes them {}",
            summary.undetermined.len(),
            paper.join("; ")
        ));
    }
    let pairs = |at: &[(String, usize, usize)], sep: &str| -> String {
        let shown: Vec<String> = at
            .iter()
            .take(20)
            .map(|(f, a, b)| format!("{f}:{b}{sep}{a}"))
            .collect();
        let more = at.len().saturating_sub(20);
        shown.join(", ")
            + &if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
    };
    if !summary.duplicates.is_empty() {
        notes.push(format!(
            "{} lines repeat an earlier line of their file exactly (each counted, as the authors counted it: their substring match put a claim with a near-twin into both halves): {}",
            summary.duplicates.len(),
            pairs(&summary.duplicates, " repeats ")
        ));
    }
    if !summary.twins.is_empty() {
        let twins: Vec<(String, usize, usize)> = summary
            .twins
            .iter()
            .map(|(f, a, b)| (f.clone(), *a, *b))
            .collect();
        notes.push(format!(
            "{} claims have a near-twin in their file (the same but for case, spacing or a final stop) with the opposite label: {}",
            twins.len(),
            pairs(&twins, " and ")
        ));
    }
    if balanced_set {
        notes.push(BALANCED_NOTE.to_string());
    }
    notes
}

/// Said under the collection of an imported balanced set, wherever its H% is shown.
pub(crate) const BALANCED_NOTE: &str = "these are the paper's balanced sets (every hallucinated record first, as many factual after): H% is 50% by construction, not the paper's rate; #H here is the file's own count (the authors' notebook counts the same), which the paper's printed #H does not always equal (Llama-2-13B, Climate-FEVER, T = 0.1: 175 hallucinated lines in the file, 171 in the paper, its 18.85% of 907); its #N (the whole collection) was not released";

/// A slice table; the name column is as wide as its longest name (up to 40), so a topic such as
/// `climate_true_or_false` is shown whole.
fn slice_rows(title: &str, slices: &[crate::detect::analysis::Slice]) -> String {
    let names: Vec<String> = slices
        .iter()
        .map(|x| crate::text::one_line(&x.name).chars().take(40).collect())
        .collect();
    let w = names
        .iter()
        .map(|n| n.chars().count())
        .chain([title.chars().count(), 16])
        .max()
        .unwrap_or(16);
    let mut s = format!(
        "\n{title:<w$} {:>6} {:>4}  {:>5} {:>5} {:>5} {:>5}  {:>5}  {:>9}\n",
        "scored", "#H", "acc", "P", "R", "F1", "AUROC", "conf H/F"
    );
    for (x, name) in slices.iter().zip(&names) {
        s.push_str(&format!(
            "{name:<w$} {:>6} {:>4}  {}  {:>5}  {:>4}/{:<4}\n",
            x.scored,
            x.hallucinated,
            four(&x.or_rule),
            pct(x.auroc),
            x.mean_conflicts_h.map_or("-".into(), |v| format!("{v:.2}")),
            x.mean_conflicts_f.map_or("-".into(), |v| format!("{v:.2}")),
        ));
    }
    s
}

/// `--reread RUN`: a run's stored replies read again with today's readers, the changes saved.
pub(super) fn reread(
    id: &str,
    db: &crate::store::Db,
    json: bool,
    kind: crate::store::DetectKind,
) -> anyhow::Result<i32> {
    let json_mode = json || !std::io::stdout().is_terminal();
    let run = db
        .read_existing("pass --db")?
        .detect_run(id)?
        .with_context(|| format!("no detection run {id} in the store"))?;
    if run.kind != kind {
        bail!(
            "{id} is a detection run on {}: read it again with prism {}",
            run.kind.as_str(),
            match run.kind {
                crate::store::DetectKind::Claims => "autohall --reread",
                crate::store::DetectKind::Answers => "detect --reread",
            }
        );
    }
    if !run.config.imported.is_empty() {
        bail!(
            "{id} is an import of released outputs, read with --reading {} when imported: import it again to read it otherwise",
            run.config.reading.as_deref().unwrap_or("paper")
        );
    }
    let stored = crate::detect::stored::Stored::load(db, id)?;
    let r = crate::detect::reread::reread(&run, &stored);
    db.apply_detect(&r.writes)?;
    if json_mode {
        let line = json!({"event": "reread", "detect_id": id, "reread": r, "changed": r.changed()});
        crate::outln!("{}", crate::text::json_for_terminal(&line.to_string()));
        return Ok(0);
    }
    let changes = |m: &std::collections::BTreeMap<String, usize>| {
        if m.is_empty() {
            "none changed".to_string()
        } else {
            m.iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    crate::warn!(
        "{id}: {} pair replies read again: {}",
        r.pairs,
        changes(&r.pair_changes)
    );
    if r.classifications > 0 {
        crate::warn!(
            "{id}: {} classification replies read again: {}",
            r.classifications,
            changes(&r.class_changes)
        );
    }
    if kind == crate::store::DetectKind::Claims {
        let again = crate::detect::stored::Stored::load(db, id)?;
        let rep = results::claims_report(&again, run.config.k, run.config.seed);
        eprint!("{}", crate::text::sanitize(&claims_table(&rep)));
    }
    Ok(0)
}

/// `--topics-by`: the model that assigns the claims' topics, and from which list.
pub(super) struct TopicsBy {
    pub model: crate::provider::ModelConfig,
    pub list: Vec<String>,
    pub factory: crate::engine::BackendFactory,
    pub concurrency: usize,
    pub use_cache: bool,
}

/// The claims' topics as `by.model` assigns them: what is stored first, then one call for each
/// claim without a topic (saved as it arrives). `claim text → topic`, for the claims read.
fn assign_topics(
    by: &TopicsBy,
    claims: &[String],
    db: &crate::store::Db,
) -> anyhow::Result<std::collections::HashMap<String, String>> {
    use crate::detect::topics::{self, TopicEvent};
    let vocab = topics::vocabulary(&by.list);
    let mut stored = db.read()?.topics(&by.model.name, &vocab)?;
    // Replies kept from earlier analyses are read as this prism reads them.
    let moved = topics::read_again(&stored, &by.list);
    if !moved.is_empty() {
        for r in &moved {
            db.save_topic(r)?;
        }
        crate::warn!(
            "topics: {} stored replies read otherwise by this prism",
            moved.len()
        );
        stored = db.read()?.topics(&by.model.name, &vocab)?;
    }
    let todo = topics::todo(claims, &stored);
    let distinct: std::collections::BTreeSet<&String> = claims.iter().collect();
    crate::warn!(
        "topics: {} claims, {} to ask of {} ({} stored from earlier analyses)",
        distinct.len(),
        todo.len(),
        by.model.name,
        distinct.len() - todo.len()
    );
    if !todo.is_empty() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        let cancel = tokio_util::sync::CancellationToken::new();
        let (read, unread, failed) = rt.block_on(async {
            crate::shutdown::cancel_on_signal(&cancel);
            let lock = format!("topics:{}:{vocab}", by.model.name);
            let handle = db.records_handle(&lock, "topic(s)")?;
            let caller = std::sync::Arc::new(crate::engine::Caller::new(
                &by.model,
                &by.factory,
                Some(handle.clone()),
                by.use_cache,
                cancel.clone(),
            )?);
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let unit = std::sync::Arc::new(topics::Topics {
                caller,
                topics: by.list.clone(),
            });
            let lane = crate::engine::Lane {
                store: handle.clone(),
                factory: by.factory.clone(),
                events: tx,
                cancel: cancel.clone(),
            };
            let lane = crate::engine::records::run(lane, by.concurrency, &lock, unit, todo);
            let tally = async move {
                let (mut read, mut unread, mut failed) = (0, 0, 0);
                while let Some(ev) = rx.recv().await {
                    if let TopicEvent::Saved(r) = ev {
                        match (&r.topic, &r.error) {
                            (Some(_), _) => read += 1,
                            (None, None) => unread += 1,
                            (None, Some(_)) => failed += 1,
                        }
                    }
                }
                (read, unread, failed)
            };
            let (ran, tally) = tokio::join!(lane, tally);
            ran.map_err(|e| anyhow::anyhow!("{e}"))?;
            anyhow::Ok(tally)
        })?;
        crate::warn!(
            "topics by {}: {read} read, {unread} unreadable, {failed} failed{}",
            by.model.name,
            if cancel.is_cancelled() {
                " (interrupted: the analysis again asks for the rest)"
            } else {
                ""
            }
        );
        db.finish()?;
    }
    let records = db.read()?.topics(&by.model.name, &vocab)?;
    Ok(topics::assigned(&records))
}

/// `prism autohall --analyse RUN`: the paper's analyses of a stored claims run.
pub(super) fn analyse(
    id: &str,
    db: &crate::store::Db,
    json: bool,
    topics_by: Option<TopicsBy>,
) -> anyhow::Result<i32> {
    let json_mode = json || !std::io::stdout().is_terminal();
    let store = db.read_existing("run prism autohall first, or pass --db")?;
    let run = store
        .detect_run(id)?
        .with_context(|| format!("no detection run {id} in the store"))?;
    if run.kind != crate::store::DetectKind::Claims {
        bail!("{id} is a detection run on stored answers; the analyses are AutoHall's, on claims");
    }
    if run.config.k == 0 {
        bail!("{id} holds no samples (an import of released classifications): nothing to analyse");
    }
    let stored = crate::detect::stored::Stored::load(db, id)?;
    drop(store);
    let assigned = match &topics_by {
        Some(by) => {
            let claims: Vec<String> = stored.targets.iter().map(|t| t.question.clone()).collect();
            Some(assign_topics(by, &claims, db)?)
        }
        None => None,
    };
    let groups =
        crate::detect::analysis::analyse(&stored, run.config.k, run.config.seed, assigned.as_ref());
    let topic_source = topics_by
        .as_ref()
        .map_or_else(|| "data".to_string(), |b| b.model.name.clone());
    let by_wording = results::claims_report(&stored, run.config.k, run.config.seed).by_wording;
    if json_mode {
        let line = json!({"event": "analysis", "detect_id": id, "groups": groups,
                          "by_wording": by_wording, "topics_by": topic_source});
        crate::outln!("{}", crate::text::json_for_terminal(&line.to_string()));
        return Ok(0);
    }
    if groups.is_empty() {
        // Something left to ask: a reference not yet classified, or a call that failed.
        let left = run.status != crate::store::RunStatus::Finished
            || stored.targets.iter().any(|t| t.class.is_none())
            || stored.samples.iter().any(|x| x.error.is_some())
            || stored.pairs.iter().any(|p| p.error.is_some());
        if left {
            crate::warn!(
                "{id}: no reference of the balanced set has all {} pairs checked yet (finish it with prism autohall --resume {id})",
                run.config.k
            );
        } else {
            crate::warn!(
                "{id}: every call was answered, but no reference of the balanced set has all {} pair verdicts readable: nothing is left to resume (prism autohall --reread {id} reads the stored replies again)",
                run.config.k
            );
        }
    }
    let mut s = String::new();
    for g in &groups {
        s.push_str(&format!(
            "\n== {} t={} · K={} · {} references of the balanced set scored · {} unreadable pair replies\n",
            g.model,
            g.temperature.map_or("-".into(), |t| t.to_string()),
            g.k,
            g.scored,
            g.unreadable_pairs
        ));
        s.push_str(&format!(
            "\nK sweep (OR rule on the first k samples)\n{:>3}  {:>5} {:>5} {:>5} {:>5}  {:>5}\n",
            "k", "acc", "P", "R", "F1", "AUROC"
        ));
        for r in &g.sweep {
            s.push_str(&format!(
                "{:>3}  {}  {:>5}\n",
                r.k,
                four(&r.or_rule),
                pct(r.auroc)
            ));
        }
        let widest = g
            .histogram
            .iter()
            .map(|(_, h, f)| (*h).max(*f))
            .max()
            .unwrap_or(0)
            .max(1);
        let bar = |n: usize, c: char| c.to_string().repeat((n * 24).div_ceil(widest));
        s.push_str(&format!(
            "\nconflicting pairs per reference (H hallucinated, F factual)\n{:>9}  {:>4} {:>4}\n",
            "conflicts", "H", "F"
        ));
        for (c, h, f) in &g.histogram {
            s.push_str(&format!(
                "{c:>9}  {h:>4} {f:>4}  {}{}\n",
                bar(*h, 'H'),
                bar(*f, 'F')
            ));
        }
        s.push_str(&slice_rows("reference length", &g.by_length));
        let title = match &topics_by {
            Some(b) => format!("topic ({})", b.model.name),
            None => "topic".into(),
        };
        s.push_str(&slice_rows(&title, &g.by_topic));
    }
    let data_topics: std::collections::BTreeSet<&str> =
        stored.targets.iter().map(|t| t.task_id.as_str()).collect();
    if topics_by.is_none() && data_topics.len() <= 1 && !groups.is_empty() {
        s.push_str(
            "\nThe data has one topic: --topics-by MODEL asks a model for each claim's topic (one call per claim, kept for later analyses).\n",
        );
    }
    s.push_str(&wording_rows(&results::ClaimsReport {
        by_wording,
        ..Default::default()
    }));
    eprint!("{}", crate::text::sanitize(&s));
    Ok(0)
}

/// Accuracy, precision, recall and F1, in four columns.
fn four(sc: &crate::eval::binary::Scores) -> String {
    format!(
        "{:>5} {:>5} {:>5} {:>5}",
        pct(sc.accuracy),
        pct(sc.precision),
        pct(sc.recall),
        pct(sc.f1)
    )
}

fn pct(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into())
}

fn temp(t: Option<f64>) -> String {
    t.map(|t| format!("{t}")).unwrap_or_else(|| "-".into())
}

/// AutoHall's two tables for the terminal.
pub(super) fn claims_table(rep: &results::ClaimsReport) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "\ncollection            {:>6} {:>7} {:>7} {:>8} {:>5} {:>5} {:>6}\n",
        "claims", "failed", "refused", "unparsed", "#N", "#H", "H%"
    ));
    for c in &rep.collection {
        s.push_str(&format!(
            "{:<16} t={:<4} {:>6} {:>7} {:>7} {:>8} {:>5} {:>5} {:>6}\n",
            c.model,
            temp(c.temperature),
            c.claims,
            c.failed,
            c.refused,
            c.unparsed,
            c.n,
            c.h,
            pct(c.h_rate)
        ));
    }
    // An import has no samples, hence no detection: no header over nothing.
    if !rep.detection.is_empty() {
        s.push_str(&format!(
            "\ndetection (balanced, K={}, seed {})  {:>5} {:>6}  {:>5} {:>5} {:>5} {:>5}  {:>5} {:>5}\n",
            rep.k, rep.seed, "set", "scored", "acc", "P", "R", "F1", "AUROC", "AUPRC"
        ));
    }
    for d in &rep.detection {
        s.push_str(&format!(
            "{:<16} t={:<4} OR rule    {:>5} {:>6}  {}  {:>5} {:>5}\n",
            d.model,
            temp(d.temperature),
            d.balanced,
            d.scored,
            four(&d.or_rule),
            pct(d.auroc),
            pct(d.auprc)
        ));
        if d.scored > 0 {
            let m = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
            s.push_str(&format!(
                "{:<16} {:<6} mean conflicts of K: hallucinated {}, factual {} · {} unreadable pair replies\n",
                "",
                "",
                m(d.mean_conflicts_h),
                m(d.mean_conflicts_f),
                d.unreadable_pairs
            ));
        }
        for (th, sc) in d.thresholds.iter().skip(1) {
            s.push_str(&format!(
                "{:<16} {:<6} >= {th:<2} conflicts           {}\n",
                "",
                "",
                four(sc)
            ));
        }
    }
    s.push_str(&wording_rows(rep));
    let one_class = rep
        .detection
        .iter()
        .any(|d| d.scored > 0 && d.auroc.is_none())
        || rep
            .by_wording
            .iter()
            .any(|d| d.scored > 0 && d.auroc.is_none());
    if one_class {
        s.push_str(ONE_CLASS_NOTE);
        s.push('\n');
    }
    s
}

/// Why an AUROC or AUPRC is `-` on a row with scored references.
pub(crate) const ONE_CLASS_NOTE: &str = "AUROC and AUPRC are - where the scored set holds one class only: they need hallucinated and factual references both";

/// Detection per wording of the pair check, when the run asked in more than one.
fn wording_rows(rep: &results::ClaimsReport) -> String {
    let mut s = String::new();
    if !rep.by_wording.is_empty() {
        s.push_str(&format!(
            "\ndetection per pair wording (W0: the run's first)  {:>6}  {:>5} {:>5} {:>5} {:>5}  {:>5} {:>5} {:>6}\n",
            "scored", "acc", "P", "R", "F1", "AUROC", "AUPRC", "unread"
        ));
        for d in &rep.by_wording {
            s.push_str(&format!(
                "{:<16} t={:<4} W{:<2} OR rule               {:>6}  {}  {:>5} {:>5} {:>6}\n",
                d.model,
                temp(d.temperature),
                d.wording,
                d.scored,
                four(&d.or_rule),
                pct(d.auroc),
                pct(d.auprc),
                d.unreadable_pairs
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_class_row_prints_no_area_and_says_why() {
        let rep = results::ClaimsReport {
            k: 3,
            detection: vec![results::Detection {
                model: "m".into(),
                scored: 1,
                balanced: 1,
                ..results::Detection::default()
            }],
            ..results::ClaimsReport::default()
        };
        let table = claims_table(&rep);
        assert!(table.contains(ONE_CLASS_NOTE), "{table}");
        assert!(!table.contains("100.0"), "{table}");
        let empty = claims_table(&results::ClaimsReport::default());
        assert!(!empty.contains("detection (balanced") && !empty.contains(ONE_CLASS_NOTE));
    }

    #[test]
    fn a_long_topic_is_shown_whole() {
        let slices = [crate::detect::analysis::Slice {
            name: "climate_true_or_false".into(),
            ..Default::default()
        }];
        let t = slice_rows("topic", &slices);
        assert!(t.contains("climate_true_or_false "), "{t}");
    }
}
