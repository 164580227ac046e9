//! `prism review export | import | stats`: moving decisions between panels that work offline,
//! and how a panel's rounds stand (convergence, counts per reviewer, agreement).

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;

use crate::config::Dirs;
use crate::review::agreement::{self, Metric};
use crate::review::{Decision, ReviewRecord, State};

#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// Write every decision (oldest first) as JSONL or CSV.
    Export {
        /// A SQLite store or a postgres:// URL (default: the config's db, else the data dir's).
        #[arg(long)]
        db: Option<PathBuf>,
        /// jsonl (the import format) or csv.
        #[arg(long, default_value = "jsonl")]
        format: String,
        /// Output file (default, or `-`: stdout). Written whole, then renamed into place;
        /// never over a SQLite file (the store) unless --force.
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// Replace the output even when it is a SQLite database.
        #[arg(long)]
        force: bool,
    },
    /// Add decisions from a JSONL export: ones already in the store (same uid) are skipped, bad
    /// lines are reported as file:line: field: reason and the rest is loaded.
    Import {
        file: PathBuf,
        /// A SQLite store or a postgres:// URL (default: the config's db, else the data dir's).
        #[arg(long)]
        db: Option<PathBuf>,
    },
    /// Write the retained item bank (items whose latest round converged on retain, revised
    /// questions applied) as a release directory in PRISM's layout, which `prism validate`
    /// and `prism run` read.
    Bank {
        /// The directory to create (must be empty or absent).
        out: PathBuf,
        /// The dataset the decisions are about (omit for the bundled sample data).
        #[arg(long)]
        dataset: Option<PathBuf>,
        /// A SQLite store or a postgres:// URL (default: the config's db, else the data dir's).
        #[arg(long)]
        db: Option<PathBuf>,
        /// Reviewers who must agree for a round to converge.
        #[arg(long, default_value_t = crate::review::MIN_REVIEWERS)]
        min_reviewers: usize,
    },
    /// Convergence per round, decisions per reviewer, and agreement (observed, Cohen's kappa
    /// for two reviewers, Fleiss' kappa, Krippendorff's alpha on decisions and each score).
    Stats {
        /// A SQLite store or a postgres:// URL (default: the config's db, else the data dir's).
        #[arg(long)]
        db: Option<PathBuf>,
        /// Reviewers who must agree for a round to converge.
        #[arg(long, default_value_t = crate::review::MIN_REVIEWERS)]
        min_reviewers: usize,
        /// One JSON object instead of the table.
        #[arg(long)]
        json: bool,
    },
}

/// The review database: `--db` (a SQLite file or a postgres:// URL), else the config's `db`
/// when it is a postgres:// URL, else the default store.
pub(crate) fn review_db(arg: Option<PathBuf>, dirs: &Dirs) -> anyhow::Result<crate::store::Db> {
    crate::store::Db::open(
        Some(&panel_target(arg, dirs)),
        &super::run::default_db(dirs),
    )
}

/// Where the panel's decisions and scores are: `arg`, else the config's shared store, else
/// this machine's store.
pub(crate) fn panel_target(arg: Option<PathBuf>, dirs: &Dirs) -> PathBuf {
    let (config, _) = crate::config::Config::load(&dirs.config_file());
    crate::store::Db::configured(arg.as_deref(), config.db.as_deref())
        .unwrap_or_else(|| super::run::default_db(dirs))
}

pub(crate) fn review(what: ReviewCommand, dirs: &Dirs) -> anyhow::Result<i32> {
    match what {
        ReviewCommand::Export {
            db: d,
            format,
            output,
            force,
        } => {
            if !matches!(format.as_str(), "jsonl" | "csv") {
                anyhow::bail!("--format {format:?}: use jsonl or csv");
            }
            let local = d.clone().unwrap_or_else(|| super::run::default_db(dirs));
            let store = review_db(d, dirs)?;
            let decisions = store.decisions()?;
            let written = super::output::write_output(
                output.as_deref(),
                &[&local, &super::run::default_db(dirs)],
                force,
                |out| {
                    if format == "csv" {
                        return write_csv(out, &decisions);
                    }
                    // JSON escapes every control character (ESC is \u001b): nothing in a
                    // decision can drive the terminal it is printed to.
                    for d in &decisions {
                        serde_json::to_writer(&mut *out, d)?;
                        out.write_all(b"\n")?;
                    }
                    Ok(())
                },
            )?;
            crate::warn!(
                "{} decisions exported{}",
                decisions.len(),
                written
                    .map(|p| format!(" to {}", p.display()))
                    .unwrap_or_default()
            );
            Ok(0)
        }
        ReviewCommand::Import { file, db: d } => {
            let (records, problems) = read_jsonl(&file)?;
            for p in &problems {
                crate::warn!("{p}");
            }
            let store = review_db(d, dirs)?;
            let added = store.save_decisions(&records)?;
            crate::warn!(
                "{}: {added} new decisions, {} already there, {} bad lines",
                file.display(),
                records.len() - added,
                problems.len()
            );
            Ok(if problems.is_empty() { 0 } else { 1 })
        }
        ReviewCommand::Bank {
            out,
            dataset,
            db: d,
            min_reviewers,
        } => {
            let (ds, _) = super::run::open_dataset(dataset.as_deref())?;
            let store = review_db(d, dirs)?;
            let data = crate::review::load::ReviewData {
                decisions: store.decisions()?,
                ..Default::default()
            };
            let unknown = data
                .decisions
                .iter()
                .filter(|r| ds.item_by_id(&r.item_id).is_none())
                .map(|r| r.item_id.as_str())
                .collect::<std::collections::BTreeSet<_>>();
            if !unknown.is_empty() {
                crate::warn!(
                    "warning: {} reviewed items are not in this dataset (first: {})",
                    unknown.len(),
                    unknown.iter().next().unwrap_or(&"")
                );
            }
            let summary = crate::review::bank::write(&ds, &data.statuses(min_reviewers), &out)
                .with_context(|| format!("writing the bank to {}", out.display()))?;
            crate::warn!(
                "{}: {} retained items in {} tasks ({} with a revised question)",
                out.display(),
                summary.items,
                summary.tasks,
                summary.revised
            );
            Ok(0)
        }
        ReviewCommand::Stats {
            db: d,
            min_reviewers,
            json,
        } => {
            let store = review_db(d, dirs)?;
            let stats = Stats::of(&store.decisions()?, &store.quality(None)?, min_reviewers);
            if json {
                crate::outln!("{}", serde_json::to_string_pretty(&stats)?);
            } else {
                crate::outp!("{}", crate::text::sanitize(&stats.table()));
            }
            Ok(0)
        }
    }
}

pub(crate) fn write_csv(out: &mut dyn Write, ds: &[ReviewRecord]) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "uid",
        "item_id",
        "task_id",
        "reviewer",
        "round",
        "clarity",
        "relevance",
        "coherence",
        "decision",
        "rationale",
        "edited_question",
        "edited_answer",
        "created_at",
    ])?;
    let n = |v: Option<u8>| v.map(|v| v.to_string()).unwrap_or_default();
    // Text cells as the report writes them: no escape sequence for the terminal the CSV may be
    // printed to, no formula for the spreadsheet it is opened in.
    let t = |s: &str| crate::report::render::csv_cell(&crate::text::sanitize(s));
    for d in ds {
        w.write_record([
            t(&d.uid).as_str(),
            &t(&d.item_id),
            &t(&d.task_id),
            &t(&d.reviewer),
            &d.round.to_string(),
            &n(d.clarity),
            &n(d.relevance),
            &n(d.coherence),
            d.decision.as_str(),
            &t(&d.rationale),
            &t(d.edited_question.as_deref().unwrap_or("")),
            &t(d.edited_answer.as_deref().unwrap_or("")),
            &d.created_at.to_string(),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// Reads a JSONL export: every good line, and each bad one as `file:line: field: reason`.
pub(crate) fn read_jsonl(path: &Path) -> anyhow::Result<(Vec<ReviewRecord>, Vec<String>)> {
    use crate::dataset::lines::{Line, LineReader};
    // A FIFO would block forever and /dev/zero never ends: only regular files are read.
    let meta = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if !meta.is_file() {
        anyhow::bail!("{}: not a regular file", path.display());
    }
    let file = std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
    let max = crate::dataset::MAX_LINE_BYTES;
    let mut lines = LineReader::new(std::io::BufReader::new(file), max);
    let mut records = Vec::new();
    let mut problems = Vec::new();
    loop {
        let (no, line) = match lines.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => {
                problems.push(format!(
                    "{}:{}: -: read error, rest of file skipped: {e}",
                    path.display(),
                    lines.line_no + 1
                ));
                break;
            }
        };
        let at = format!("{}:{no}", path.display());
        let bytes = match line {
            Line::TooLong(n) => {
                problems.push(format!(
                    "{at}: -: line is {n} bytes, over the {} MiB limit; skipped",
                    max >> 20
                ));
                continue;
            }
            Line::Text(t) => t,
        };
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        match parse_record(text) {
            Ok(r) => records.push(r),
            Err((field, reason)) => problems.push(format!("{at}: {field}: {reason}")),
        }
    }
    Ok((records, problems))
}

/// One decision line, or the field at fault and why (`round: invalid type: string "2",
/// expected u32`), as the dataset loaders name problems.
fn parse_record(text: &str) -> Result<ReviewRecord, (String, String)> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let r: ReviewRecord = serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        let field = if field == "." || inner.is_syntax() || inner.is_eof() {
            "-".to_string()
        } else {
            field
        };
        let message = json_reason(&inner);
        if let Some(name) = message
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'))
        {
            return (name.to_string(), "missing".to_string());
        }
        let reason = if inner.is_syntax() || inner.is_eof() {
            format!(
                "invalid JSON at column {}: {}",
                inner.column(),
                json_reason(&inner)
            )
        } else {
            json_reason(&inner)
        };
        (field, crate::text::one_line(&reason))
    })?;
    r.check().map_err(|e| match e.split_once(": ") {
        Some((f, why)) => (f.to_string(), why.to_string()),
        None => ("-".to_string(), e),
    })?;
    Ok(r)
}

/// serde_json's message without its " at line 1 column 2" (the line is the file's, given apart).
fn json_reason(e: &serde_json::Error) -> String {
    let m = e.to_string();
    match m.rfind(" at line ") {
        Some(i) => m[..i].to_string(),
        None => m,
    }
}

/// How a panel's review stands.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Stats {
    pub decisions: usize,
    pub items: usize,
    /// Per round: items decided in it, and how many converged (retain/remove/revise), are
    /// disputed, or wait for more reviewers.
    pub rounds: BTreeMap<u32, RoundStats>,
    /// Per reviewer: decisions (all, history included) and their split.
    pub reviewers: BTreeMap<String, BTreeMap<String, usize>>,
    pub agreement: Agreement,
    /// Per quality-agent model: its Clarity against the reviewers' mean Clarity of the same
    /// items (mean absolute deviation and its standard deviation, on the 1-10 scale).
    pub judge_vs_human: BTreeMap<String, JudgeHuman>,
}

#[derive(Debug, serde::Serialize)]
pub(crate) struct JudgeHuman {
    pub pairs: usize,
    pub mad: f64,
    pub sd: f64,
}

#[derive(Debug, Default, serde::Serialize)]
pub(crate) struct RoundStats {
    pub items: usize,
    pub retained: usize,
    pub removed: usize,
    pub revised: usize,
    pub disputed: usize,
    pub open: usize,
}

/// Agreement over (item, round) units, each reviewer's latest decision in the unit.
#[derive(Debug, Default, serde::Serialize)]
pub(crate) struct Agreement {
    pub units: usize,
    pub observed: Option<f64>,
    /// Only when exactly two reviewers rated the units they share.
    pub cohen_kappa: Option<f64>,
    pub fleiss_kappa: Option<f64>,
    pub alpha_decision: Option<f64>,
    pub alpha_clarity: Option<f64>,
    pub alpha_relevance: Option<f64>,
    pub alpha_coherence: Option<f64>,
}

impl Stats {
    pub(crate) fn of(
        decisions: &[ReviewRecord],
        quality: &[crate::review::quality::QualityRecord],
        min_reviewers: usize,
    ) -> Stats {
        let mut by_item: HashMap<&str, Vec<&ReviewRecord>> = HashMap::new();
        let mut reviewers: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
        for d in decisions {
            by_item.entry(&d.item_id).or_default().push(d);
            let r = reviewers.entry(d.reviewer.clone()).or_default();
            *r.entry("decisions".into()).or_default() += 1;
            *r.entry(d.decision.as_str().into()).or_default() += 1;
        }
        let mut rounds: BTreeMap<u32, RoundStats> = BTreeMap::new();
        for ds in by_item.values() {
            let st = crate::review::status(ds, min_reviewers);
            for (round, _) in &st.rounds {
                let r = rounds.entry(*round).or_default();
                r.items += 1;
                r.revised += 1;
            }
            if st.state != State::Unreviewed {
                let r = rounds.entry(st.round).or_default();
                r.items += 1;
                match st.state {
                    State::Converged(Decision::Retain) => r.retained += 1,
                    State::Converged(Decision::Remove) => r.removed += 1,
                    State::Converged(Decision::Revise) => r.revised += 1,
                    State::Disputed => r.disputed += 1,
                    // (Never: status() leaves withdrawn decisions out.)
                    State::Open | State::Unreviewed | State::Converged(Decision::Withdrawn) => {
                        r.open += 1
                    }
                }
            }
        }
        Stats {
            decisions: decisions.len(),
            items: by_item.len(),
            rounds,
            reviewers,
            agreement: agreement_of(decisions),
            judge_vs_human: judge_vs_human(decisions, quality),
        }
    }

    pub(crate) fn table(&self) -> String {
        let pct = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.3}"));
        let mut s = format!(
            "{} decisions on {} items\n\nround  items  retained  removed  revised  disputed  open\n",
            self.decisions, self.items
        );
        for (k, r) in &self.rounds {
            s.push_str(&format!(
                "{k:>5}  {:>5}  {:>8}  {:>7}  {:>7}  {:>8}  {:>4}\n",
                r.items, r.retained, r.removed, r.revised, r.disputed, r.open
            ));
        }
        s.push_str("\nreviewer              decisions  retain  remove  revise\n");
        for (name, c) in &self.reviewers {
            let g = |k: &str| c.get(k).copied().unwrap_or(0);
            s.push_str(&format!(
                "{}  {:>9}  {:>6}  {:>6}  {:>6}\n",
                crate::text::cell(name, 20),
                g("decisions"),
                g("retain"),
                g("remove"),
                g("revise")
            ));
        }
        let a = &self.agreement;
        for (m, j) in &self.judge_vs_human {
            s.push_str(&format!(
                "\nquality agent {m} against reviewers on Clarity: MAD {:.2}, SD {:.2} over {} items",
                j.mad, j.sd, j.pairs
            ));
        }
        if !self.judge_vs_human.is_empty() {
            s.push('\n');
        }
        s.push_str(&format!(
            "\nagreement over {} (item, round) units with two or more reviewers\n  observed {}  Cohen's kappa {}  Fleiss' kappa {}\n  Krippendorff's alpha: decision {}  clarity {}  relevance {}  coherence {}\n",
            a.units,
            pct(a.observed),
            pct(a.cohen_kappa),
            pct(a.fleiss_kappa),
            pct(a.alpha_decision),
            pct(a.alpha_clarity),
            pct(a.alpha_relevance),
            pct(a.alpha_coherence)
        ));
        s
    }
}

/// Each model's Clarity (C) against the mean of the reviewers' latest Clarity per item.
fn judge_vs_human(
    decisions: &[ReviewRecord],
    quality: &[crate::review::quality::QualityRecord],
) -> BTreeMap<String, JudgeHuman> {
    let mut latest: HashMap<(&str, &str), &ReviewRecord> = HashMap::new();
    for d in decisions.iter().filter(|d| d.clarity.is_some()) {
        let k = (d.item_id.as_str(), d.reviewer.as_str());
        match latest.get(&k) {
            Some(old)
                if (old.round, old.created_at, &old.uid) >= (d.round, d.created_at, &d.uid) => {}
            _ => {
                latest.insert(k, d);
            }
        }
    }
    let mut human: HashMap<&str, (f64, f64)> = HashMap::new();
    for ((item, _), d) in &latest {
        let e = human.entry(item).or_default();
        e.0 += f64::from(d.clarity.unwrap_or(0));
        e.1 += 1.0;
    }
    let mut pairs: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for q in quality {
        if let (Some(s), Some((sum, n))) = (q.scores, human.get(q.item_id.as_str())) {
            pairs
                .entry(&q.model)
                .or_default()
                .push((f64::from(s[2]), sum / n));
        }
    }
    pairs
        .into_iter()
        .filter_map(|(m, p)| {
            let (mad, sd) = crate::eval::summary::agreement(&p)?;
            Some((
                m.to_string(),
                JudgeHuman {
                    pairs: p.len(),
                    mad,
                    sd,
                },
            ))
        })
        .collect()
}

fn agreement_of(decisions: &[ReviewRecord]) -> Agreement {
    // Latest decision of each reviewer in each (item, round).
    let mut latest: BTreeMap<(&str, u32), BTreeMap<&str, &ReviewRecord>> = BTreeMap::new();
    for d in decisions {
        let unit = latest.entry((&d.item_id, d.round)).or_default();
        match unit.get(d.reviewer.as_str()) {
            Some(old) if (old.created_at, &old.uid) >= (d.created_at, &d.uid) => {}
            _ => {
                unit.insert(&d.reviewer, d);
            }
        }
    }
    // Withdrawn: that reviewer has not decided the unit.
    for unit in latest.values_mut() {
        unit.retain(|_, d| d.decision != Decision::Withdrawn);
    }
    let units: Vec<&BTreeMap<&str, &ReviewRecord>> =
        latest.values().filter(|u| u.len() >= 2).collect();
    let labels: Vec<Vec<Decision>> = units
        .iter()
        .map(|u| u.values().map(|d| d.decision).collect())
        .collect();
    let counts: Vec<Vec<u32>> = labels
        .iter()
        .map(|l| {
            Decision::ALL
                .iter()
                .map(|d| l.iter().filter(|x| *x == d).count() as u32)
                .collect()
        })
        .collect();
    let numeric = |f: fn(&ReviewRecord) -> Option<u8>| -> Vec<Vec<f64>> {
        units
            .iter()
            .map(|u| u.values().filter_map(|d| f(d).map(f64::from)).collect())
            .collect()
    };
    let names: std::collections::BTreeSet<&str> =
        units.iter().flat_map(|u| u.keys().copied()).collect();
    let cohen = if names.len() == 2 {
        let (a, b): (Vec<Decision>, Vec<Decision>) = units
            .iter()
            .filter_map(|u| {
                let mut v = u.values();
                match (v.next(), v.next(), v.next()) {
                    (Some(a), Some(b), None) => Some((a.decision, b.decision)),
                    _ => None,
                }
            })
            .unzip();
        agreement::cohen_kappa(&a, &b)
    } else {
        None
    };
    let nominal: Vec<Vec<f64>> = labels
        .iter()
        .map(|l| l.iter().map(|d| d.index() as f64).collect())
        .collect();
    Agreement {
        units: units.len(),
        observed: agreement::observed_agreement(&labels),
        cohen_kappa: cohen,
        fleiss_kappa: agreement::fleiss_kappa(&counts),
        alpha_decision: agreement::krippendorff_alpha(&nominal, Metric::Nominal),
        alpha_clarity: agreement::krippendorff_alpha(&numeric(|d| d.clarity), Metric::Interval),
        alpha_relevance: agreement::krippendorff_alpha(&numeric(|d| d.relevance), Metric::Interval),
        alpha_coherence: agreement::krippendorff_alpha(&numeric(|d| d.coherence), Metric::Interval),
    }
}
