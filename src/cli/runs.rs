//! `prism runs`: the runs in a store, to find, name, tag and remove; a model's history across
//! its runs. `prism compare A B`: two runs (or two models of one) per dimension and sub-task,
//! with McNemar's exact test and a paired bootstrap interval, and the items that flipped.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::Subcommand;
use serde_json::{Value, json};

use super::run::default_db;
use crate::config::Dirs;
use crate::eval::compare::{self, Comparison, Level};
use crate::runs::settings;
use crate::store::{Db, format_time};

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// Name a run ("" takes the name off).
    Name { id: String, name: String },
    /// Tag a run with a word (--remove takes it off).
    Tag {
        id: String,
        tag: String,
        #[arg(long)]
        remove: bool,
    },
    /// Remove a run with its jobs, answers and scores (asks first; --yes does not). Other runs,
    /// and detections made on its answers, stay.
    Rm {
        id: String,
        #[arg(long)]
        yes: bool,
    },
    /// Make a run's summaries (what `prism runs`, the heatmap and the runs screen read) again
    /// from its scores: for summaries changed or deleted by hand, which `prism runs --verify`
    /// finds. On a shared store, for everyone.
    Repair { id: String },
}

#[derive(Debug, clap::Args)]
pub struct RunsArgs {
    #[command(subcommand)]
    pub what: Option<RunsCommand>,
    /// The store (default: prism.db in the data dir), or a shared store (postgres://...): read
    /// through this machine's copy, brought up to date; name, tag and rm change it for everyone.
    #[arg(long, global = true)]
    pub db: Option<PathBuf>,
    /// One model's history: its H-Score and dimension rates in the runs that asked it, oldest
    /// first (the newest --limit of them).
    #[arg(long)]
    pub model: Option<String>,
    /// How many runs to list, newest first (0: every one).
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Runs created since a date (2026-12-01, 2026-12-01 14:30; UTC) or a span back (90m, 12h,
    /// 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Runs with this tag (repeat for runs with every one).
    #[arg(long)]
    pub tag: Vec<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Check each listed run's summaries against a count of its scores (what a report and
    /// the gate read): a run whose summaries disagree is named with the groups that do, and
    /// the exit code is 1 (mend it with `prism runs repair RUN`).
    #[arg(long)]
    pub verify: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum CompareFormat {
    Table,
    Md,
    Csv,
    Json,
    /// One self-contained page with the flipped items' answers side by side (use -o).
    Html,
}

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The first side: RUN, or RUN:MODEL when the run has several models.
    pub a: String,
    /// The second side (the same run with another model compares two models); with
    /// --save-baseline alone, none.
    pub b: Option<String>,
    /// Write the first side (its run's settings and every item's score) to this file: a
    /// baseline `prism gate` compares against without the store it came from.
    #[arg(long)]
    pub save_baseline: Option<PathBuf>,
    /// The store (default: prism.db in the data dir), or a shared store (postgres://...), read
    /// through this machine's copy.
    #[arg(long)]
    pub db: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = CompareFormat::Table)]
    pub format: CompareFormat,
    /// Bootstrap resamples for the 95% intervals.
    #[arg(long, default_value_t = 2000)]
    pub resamples: usize,
    /// The bootstrap's seed (the same seed, the same intervals).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// How many flipped items to list (fixed first, then broken).
    #[arg(long, default_value_t = 20)]
    pub flips: usize,
    /// Write to this file instead of standard output (written whole, then renamed into place;
    /// never over a store unless --force).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Let -o replace a SQLite file.
    #[arg(long)]
    pub force: bool,
}

impl RunsCommand {
    /// The run it is about.
    fn id(&self) -> &str {
        match self {
            RunsCommand::Name { id, .. }
            | RunsCommand::Tag { id, .. }
            | RunsCommand::Rm { id, .. }
            | RunsCommand::Repair { id } => id,
        }
    }
}

/// The store to read (a shared store's runs read through this machine's, brought up to date).
fn open(db: Option<&PathBuf>, dirs: &Dirs) -> anyhow::Result<Db> {
    super::lane_flags::synced(db, dirs)
}

pub(crate) fn runs(args: RunsArgs, dirs: &Dirs) -> anyhow::Result<i32> {
    let Some(what) = args.what else {
        // A list reads the store that holds the runs (a shared store itself: nothing is
        // pulled first), a page and its summaries.
        let db = crate::store::Db::open(args.db.as_deref(), &default_db(dirs))?.listing_shared();
        let filter = crate::store::RunFilter {
            limit: args.limit,
            since: args
                .since
                .as_deref()
                .map(|s| crate::store::parse_since(s, crate::store::now_secs()))
                .transpose()
                .map_err(|e| anyhow::anyhow!("--since: {e}"))?,
            model: args.model.clone(),
            tags: args
                .tag
                .iter()
                .map(|t| clean_tag(t))
                .collect::<anyhow::Result<_>>()?,
        };
        return list(&db, &filter, args.json, args.verify);
    };
    // --db goes before or after the subcommand; what only a list reads does not go with one.
    let listing = [
        (args.model.is_some(), "--model"),
        (args.json, "--json"),
        (args.since.is_some(), "--since"),
        (!args.tag.is_empty(), "--tag"),
        (args.limit != 20, "--limit"),
        (args.verify, "--verify"),
    ];
    if let Some((_, flag)) = listing.iter().find(|(set, _)| *set) {
        anyhow::bail!(
            "{flag} is for listing runs: it does not go with `prism runs {}`",
            match what {
                RunsCommand::Name { .. } => "name",
                RunsCommand::Tag { .. } => "tag",
                RunsCommand::Rm { .. } => "rm",
                RunsCommand::Repair { .. } => "repair",
            }
        );
    }
    let db = super::lane_flags::synced(args.db.as_ref(), dirs)?;
    if let RunsCommand::Repair { id } = &what {
        return repair(&db.listing_shared(), id);
    }
    let shown = db.shown();
    let missing = || anyhow::anyhow!("no run {} in {shown} (prism runs lists them)", what.id());
    match &what {
        RunsCommand::Name { id, name } => {
            let name = clean_name(name);
            let n = (!name.is_empty()).then_some(name.as_str());
            if !db.name_run(id, n)? {
                return Err(missing());
            }
            say_name(id, n);
        }
        RunsCommand::Tag { id, tag, remove } => {
            let tag = clean_tag(tag)?;
            let Some(tags) = db.tag_run(id, &tag, *remove)? else {
                return Err(missing());
            };
            say_tags(id, &tags);
        }
        RunsCommand::Rm { id, yes } => {
            // Counted where the run is removed: on the shared store, its answers there and
            // the workers heard from within the last minute.
            let (created_at, answers) = match db.shared_run_to_remove(id)? {
                Some((_, _, workers)) if workers > 0 => anyhow::bail!(
                    "run {id} has {workers} worker(s) on it (prism db workers {id} --db URL): stop them (or wait) before removing it"
                ),
                Some((run, answers, _)) => (run.created_at, answers),
                None if db.is_shared() => return Err(missing()),
                None => {
                    let store = db.read()?;
                    let Some(run) = store.run(id)? else {
                        return Err(missing());
                    };
                    (run.created_at, store.responses(id)?.len())
                }
            };
            let everyone = db.is_shared().then_some(shown.as_str());
            if !yes && !removal_agreed(id, answers, created_at, everyone)? {
                return Ok(1);
            }
            let removed = db.remove_run(id)?;
            match everyone {
                Some(s) => crate::say!("removed {id} from {s}: {removed} answers and their scores"),
                None => crate::say!("removed {id}: {removed} answers and their scores"),
            }
        }
        RunsCommand::Repair { .. } => unreachable!("repaired above"),
    }
    Ok(0)
}

/// Groups whose summaries part from the scores: (model, task) per run that has any.
type Disagreements = std::collections::HashMap<String, Vec<(String, String)>>;

/// `--verify`: each listed run's groups whose summaries part from its scores.
fn disagreements(db: &Db, all: &[crate::runs::Listed]) -> anyhow::Result<Disagreements> {
    let mut bad = Disagreements::new();
    for l in all {
        let d = db.summaries_disagree(&l.run.id)?;
        if !d.is_empty() {
            bad.insert(l.run.id.clone(), d);
        }
    }
    Ok(bad)
}

/// What is amiss with a listed run, under its line: a pull not finished, answers without a
/// score, summaries that disagree with the scores (`--verify`).
fn say_marks(l: &crate::runs::Listed, bad: Option<&Vec<(String, String)>>) {
    if let Some((here, all)) = l.pulling {
        crate::say!(
            "    pulling: {here} of {all} answers here (its pull from the shared store is not finished; any prism command with --db on it goes on with it)"
        );
    }
    if l.unscored_answers > 0 && l.pulling.is_none() {
        crate::say!(
            "    {} answer(s) without a score: its rates leave them out (prism score --run {})",
            l.unscored_answers,
            l.run.id
        );
    }
    if let Some(groups) = bad {
        let named: Vec<String> = groups
            .iter()
            .take(5)
            .map(|(m, t)| format!("{} {}", crate::text::one_line(m), t))
            .collect();
        crate::say!(
            "    summaries disagree with the scores in {} group(s) ({}{}): prism runs repair {}",
            groups.len(),
            named.join(", "),
            if groups.len() > 5 { ", ..." } else { "" },
            l.run.id
        );
    }
}

/// `prism runs repair RUN`: its summaries made again from its scores, on the store that holds
/// it (a shared store for everyone; this machine's copy too).
fn repair(db: &crate::store::Db, id: &str) -> anyhow::Result<i32> {
    let c = db.job_counts(id)?;
    if c.done + c.failed + c.pending + c.unknown == 0 && db.recount_summaries(id)?.is_empty() {
        anyhow::bail!("no run {id} in {} (prism runs lists them)", db.shown());
    }
    let before = db.summaries_disagree(id)?;
    let groups = db.repair_summaries(id)?;
    crate::say!(
        "{id}: summaries made again from its scores ({groups} model × sub-task group(s); {} differed)",
        before.len()
    );
    Ok(0)
}

/// Asks on the terminal; yes only for y, Y or yes.
fn confirm(question: &str) -> anyhow::Result<bool> {
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}

fn say_name(id: &str, name: Option<&str>) {
    crate::say!(
        "{id}: {}",
        name.map_or("name taken off".into(), |n| format!(
            "named \"{}\"",
            crate::text::shown_name(n, 60)
        ))
    );
}

fn say_tags(id: &str, tags: &[String]) {
    crate::say!(
        "{id}: tags {}",
        if tags.is_empty() {
            "-".into()
        } else {
            tags.join(" ")
        }
    );
}

/// A name as given: one line, trimmed, at most 200 characters; empty takes the name off.
fn clean_name(name: &str) -> String {
    crate::text::one_line(name)
        .trim()
        .chars()
        .take(200)
        .collect()
}

/// A tag as given: one line, trimmed, one word.
fn clean_tag(tag: &str) -> anyhow::Result<String> {
    let tag = crate::text::one_line(tag).trim().to_string();
    if tag.is_empty() || tag.contains(char::is_whitespace) {
        anyhow::bail!("a tag is one word: {tag:?}");
    }
    Ok(tag)
}

/// `prism runs rm` without `--yes`: asks on a terminal (saying "kept" when the answer is no),
/// refuses without one. `shared`: the shared store's name, whose run goes for everyone.
fn removal_agreed(
    id: &str,
    answers: usize,
    created_at: i64,
    shared: Option<&str>,
) -> anyhow::Result<bool> {
    let from = shared.map_or(String::new(), |s| format!(" from {s}"));
    if !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "prism runs rm {id} removes {answers} answers and their scores{from}: add --yes to do it without asking"
        );
    }
    let everyone = if shared.is_some() {
        " for everyone"
    } else {
        ""
    };
    let agreed = confirm(&format!(
        "remove run {id} ({}, {answers} answers and their scores){from}{everyone}?",
        format_time(created_at)
    ))?;
    if !agreed {
        crate::say!("kept {id}");
    }
    Ok(agreed)
}

fn list(
    db: &Db,
    filter: &crate::store::RunFilter,
    as_json: bool,
    verify: bool,
) -> anyhow::Result<i32> {
    let model = filter.model.as_deref();
    let all = crate::runs::list(db, filter)?;
    let bad = if verify {
        disagreements(db, &all)?
    } else {
        Default::default()
    };
    let code = i32::from(!bad.is_empty());
    if as_json {
        let v = list_json(&all, verify.then_some(&bad));
        crate::text::out(&format!("{}\n", serde_json::to_string_pretty(&v)?));
        return Ok(code);
    }
    if all.is_empty() {
        crate::say!(
            "{}",
            match model {
                _ if filter.since.is_some() || !filter.tags.is_empty() => {
                    "no run matches --since / --tag (prism runs lists the newest)".to_string()
                }
                Some(m) => format!("no run has model {m:?}"),
                None => "no runs in the store yet (prism run, or r in the TUI)".into(),
            }
        );
        return Ok(0);
    }
    for l in &all {
        say_run(l, bad.get(&l.run.id), model);
    }
    if filter.limit > 0 && all.len() == filter.limit {
        crate::say!(
            "(the newest {} runs: --limit N for more, --limit 0 for every one)",
            filter.limit
        );
    }
    if let Some(m) = model {
        say_history(&all, m);
    }
    Ok(code)
}

/// `prism runs --json`: one object per run; `bad` is the summaries' check when `--verify` asked.
fn list_json(all: &[crate::runs::Listed], bad: Option<&Disagreements>) -> Vec<Value> {
    all.iter()
        .map(|l| {
            json!({
                "id": l.run.id,
                "name": l.name,
                "tags": l.tags,
                "created_at": l.run.created_at,
                "status": l.run.status.as_str(),
                "dataset": l.run.dataset,
                "models": l.run.config.models.iter().map(|m| json!({
                    "name": m.name, "settings": settings(m),
                })).collect::<Vec<_>>(),
                "samples": l.run.config.samples,
                "items": l.items,
                "done": l.done,
                "failed": l.failed,
                "unscored_answers": l.unscored_answers,
                "answers_here": l.pulling.map(|(here, _)| here),
                "summaries_disagree": bad.map(|b| b.get(&l.run.id).map_or(0, Vec::len)),
                "scores": l.scores.iter().map(|(m, h, d)| json!({
                    "model": m, "h_score": h,
                    "KE": d[0], "KM": d[1], "RE": d[2], "IFE": d[3],
                })).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// One run of `prism runs`: its line, its marks, its settings and each model's rates.
fn say_run(l: &crate::runs::Listed, bad: Option<&Vec<(String, String)>>, model: Option<&str>) {
    let f = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.1}"));
    let label = match &l.name {
        Some(n) => format!("{}  \"{}\"", l.run.id, crate::text::shown_name(n, 60)),
        None => l.run.id.clone(),
    };
    let tags = if l.tags.is_empty() {
        String::new()
    } else {
        format!("  [{}]", l.tags.join(" "))
    };
    crate::say!(
        "{label}{tags}  {}  {}  {}  {} items{}  {} done, {} failed",
        format_time(l.run.created_at),
        l.run.status.word(),
        l.run.dataset,
        l.items,
        if l.run.config.samples > 1 {
            format!(" × {} samples", l.run.config.samples)
        } else {
            String::new()
        },
        l.done,
        l.failed
    );
    say_marks(l, bad);
    let asked = l.run.config.describe();
    if !asked.is_empty() {
        crate::say!("    run settings: {asked}");
    }
    for m in &l.run.config.models {
        let score = l.scores.iter().find(|(n, ..)| *n == m.name);
        let rates = score.map_or(String::new(), |(_, h, d)| {
            format!(
                "  H {}  KE {} KM {} RE {} IFE {}",
                f(*h),
                f(d[0]),
                f(d[1]),
                f(d[2]),
                f(d[3])
            )
        });
        if model.is_none_or(|x| x == m.name) {
            crate::say!("    {}: {}{rates}", m.name, settings(m));
        }
    }
}

/// `prism runs --model M`: each of M's rates across the listed runs, as a sparkline.
fn say_history(all: &[crate::runs::Listed], m: &str) {
    // The history at a glance: each rate across the runs above, oldest first, scaled to
    // its own range (lower is better; `·` where a run has no such rate).
    type Scores = (String, Option<f64>, [Option<f64>; 4]);
    let of = |pick: &dyn Fn(&Scores) -> Option<f64>| {
        let v: Vec<Option<f64>> = all
            .iter()
            .map(|l| l.scores.iter().find(|s| s.0 == m).and_then(pick))
            .collect();
        crate::runs::sparkline(&v)
    };
    crate::say!(
        "history of {m} over {} runs (oldest first): H {}  KE {}  KM {}  RE {}  IFE {}",
        all.len(),
        of(&|s| s.1),
        of(&|s| s.2[0]),
        of(&|s| s.2[1]),
        of(&|s| s.2[2]),
        of(&|s| s.2[3])
    );
}

pub(crate) fn compare_cmd(args: CompareArgs, dirs: &Dirs) -> anyhow::Result<i32> {
    // Each resample keeps its rates until the intervals are read: bounded, so a slip of the
    // finger is an error, not gigabytes.
    if args.resamples > 100_000 {
        anyhow::bail!(
            "--resamples {}: at most 100,000 (the default is 2,000)",
            args.resamples
        );
    }
    // `-o` never overwrites a store (the one open here, or any SQLite file): refused before
    // any work.
    let store_path = args.db.clone().unwrap_or_else(|| default_db(dirs));
    if let Some(o) = args.output.as_deref().filter(|_| !args.force) {
        super::output::refuse_stores(o, &[&store_path])?;
    }
    let db = open(args.db.as_ref(), dirs)?;
    let a = crate::runs::resolve_side(&db, &args.a)?;
    if let Some(file) = &args.save_baseline {
        let scores = crate::runs::side_scores(&db, &a).context("reading the side's scores")?;
        // The dataset by its folder's name: a baseline is committed and read on other
        // machines, where this one's absolute path means nothing (and says whose disk it was).
        let mut settings = about(&db, &a)?;
        if let Some(run) = db.read()?.run(&a.run_id)? {
            let short = std::path::Path::new(&run.dataset)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| run.dataset.clone());
            settings = settings.replace(&run.dataset, &short);
        }
        let baseline = super::gate::Baseline {
            prism_baseline: 1,
            side: a.label(),
            settings,
            created_at: crate::store::now_secs(),
            // The calibrations of the judges its scores stand on: CI gates without the store.
            calibrations: super::gate::calibrations_of(&db, &scores)?,
            scores,
        };
        super::gate::save_baseline(file, &baseline)?;
        crate::say!(
            "baseline {} written to {} ({} items)",
            a.label(),
            file.display(),
            baseline.scores.len()
        );
    }
    let Some(b_spec) = &args.b else {
        if args.save_baseline.is_some() {
            return Ok(0);
        }
        anyhow::bail!("name the second side to compare with (or --save-baseline FILE)");
    };
    let b = crate::runs::resolve_side(&db, b_spec)?;
    if a == b {
        anyhow::bail!(
            "{} against itself: name two runs, or two models of one",
            a.label()
        );
    }
    let sa = crate::runs::side_scores(&db, &a).context("reading the first side's scores")?;
    let sb = crate::runs::side_scores(&db, &b).context("reading the second side's scores")?;
    let c = compare::compare(
        (&a.label(), &sa),
        (&b.label(), &sb),
        args.resamples,
        args.seed,
    );
    if c.paired == 0 {
        anyhow::bail!(
            "{} and {} have no item scored on both (score them first: prism score --run ID)",
            a.label(),
            b.label()
        );
    }
    let mut c = c;
    c.judges =
        crate::runs::judge_sensitivity(&db, &a, &b, &c).context("reading the judges' verdicts")?;
    let text = match args.format {
        CompareFormat::Json => format!("{}\n", serde_json::to_string_pretty(&c)?),
        CompareFormat::Csv => csv(&c),
        CompareFormat::Md => markdown(&c, args.flips, &[about(&db, &a)?, about(&db, &b)?]),
        CompareFormat::Table => table(&c, args.flips, &[about(&db, &a)?, about(&db, &b)?]),
        CompareFormat::Html => {
            let sides = [a.clone(), b.clone()];
            let about = [about(&db, &a)?, about(&db, &b)?];
            let answers = c
                .flips
                .iter()
                .take(args.flips)
                .map(|f| crate::runs::pair_answers(&db, &f.item_id, &sides))
                .collect::<anyhow::Result<Vec<_>>>()?;
            crate::report::html::comparison(&c, &about, &answers)
        }
    };
    match &args.output {
        Some(_) => {
            let written = super::output::write_output(
                args.output.as_deref(),
                &[&store_path],
                args.force,
                |w| Ok(w.write_all(text.as_bytes())?),
            )?;
            if let Some(p) = written {
                crate::say!("wrote {}", p.display());
            }
        }
        None => crate::text::out(&text),
    }
    Ok(0)
}

/// A side in words for a report: its run's name (if any), when it ran, and the model's
/// settings in that run.
fn about(db: &Db, side: &compare::Side) -> anyhow::Result<String> {
    let store = db.read()?;
    let Some(run) = store.run(&side.run_id)? else {
        return Ok(String::new());
    };
    let (name, _) = store.run_labels(&run.id)?;
    let model = run
        .config
        .models
        .iter()
        .find(|m| m.name == side.model)
        .map_or(side.model.clone(), |m| {
            format!("{}: {}", m.name, settings(m))
        });
    let asked = run.config.describe();
    Ok(format!(
        "{}{} · {} · {}{}",
        name.map_or(String::new(), |n| format!("\"{n}\" · ")),
        format_time(run.created_at),
        run.dataset,
        model,
        if asked.is_empty() {
            String::new()
        } else {
            format!(" · run settings: {asked}")
        }
    ))
}

fn num(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.2}"))
}

fn signed(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:+.2}"))
}

/// The terminal table.
pub(crate) fn table(c: &Comparison, flips: usize, about: &[String; 2]) -> String {
    let s = crate::text::sanitize;
    let side = |k: usize| {
        let label = s(if k == 0 { &c.a } else { &c.b }).into_owned();
        if about[k].is_empty() {
            label
        } else {
            format!("{label}  ({})", s(&about[k]))
        }
    };
    let mut out = format!(
        "A = {}\nB = {}\n{} items scored on both ({} left out: scored on one side only, or \
         not every sample scored); B - A in rate points (negative: B hallucinates less); 95% \
         paired bootstrap, {} resamples, seed {}; McNemar exact p on items right/wrong (score \
         >= 0.5)\n\n",
        side(0),
        side(1),
        c.paired,
        c.unpaired,
        c.resamples,
        c.seed
    );
    let repeats = c.rows.iter().any(|r| !r.split_text().is_empty());
    let split = |t: String| {
        if repeats {
            format!(" {t:>10}")
        } else {
            String::new()
        }
    };
    out.push_str(&format!(
        "{:<34} {:>6} {:>8} {:>8} {:>8} {:>18} {:>5} {:>5} {:>8}{}\n",
        "",
        "items",
        "A",
        "B",
        "B-A",
        "95% interval",
        "A+",
        "B+",
        "p",
        split("split A/B".into())
    ));
    for r in &c.rows {
        let name = match r.level {
            Level::Task => format!("  {}", s(&r.name)),
            _ => s(&r.name).into_owned(),
        };
        let mark = if r.significant() { " *" } else { "" };
        out.push_str(&format!(
            "{:<34} {:>6} {:>8} {:>8} {:>8} {:>18} {:>5} {:>5} {:>8}{}{mark}\n",
            crate::text::truncate(&name, 34),
            r.items,
            num(r.rate_a),
            num(r.rate_b),
            signed(r.diff),
            r.ci_text(),
            r.mcnemar.a_only,
            r.mcnemar.b_only,
            r.p_text(),
            split(r.split_text())
        ));
    }
    out.push_str(
        "* more than noise: the interval leaves 0 out and McNemar's p < 0.05. A+/B+: items right on that side only.\n",
    );
    if repeats {
        out.push_str(
            "split A/B: of the items with 2 or more samples, the share whose samples disagree (some right, some wrong).\n",
        );
    }
    let fixed = c.flips.iter().filter(|f| f.fixed).count();
    out.push_str(&format!(
        "\nflipped: {fixed} fixed (wrong on A, right on B), {} broken\n",
        c.flips.len() - fixed
    ));
    for f in c.flips.iter().take(flips) {
        out.push_str(&format!(
            "  {} {:<28} {:<24} A {:.2} -> B {:.2}\n",
            if f.fixed { "fixed " } else { "broken" },
            s(&f.item_id),
            s(&f.task_id),
            f.score_a,
            f.score_b
        ));
    }
    if c.flips.len() > flips {
        out.push_str(&format!(
            "  ... {} more (--flips N, or --format json)\n",
            c.flips.len() - flips
        ));
    }
    if let Some(j) = &c.judges {
        out.push_str(&judges_table(j));
    }
    out
}

/// The comparison under each judge alone (`prism score --judge a,b` stored every judge's
/// verdicts): B − A per row, and whether the ranking holds whichever judge reads.
fn judges_table(j: &crate::eval::compare::JudgeSensitivity) -> String {
    let s = crate::text::sanitize;
    let mut out = String::from(
        "\nunder each judge alone (B-A with that judge's verdicts in place of the judged scores; items on both sides in parentheses)\n",
    );
    out.push_str(&format!("{:<34} {:>8}", "", "stored"));
    for (name, n) in j.judges.iter().zip(&j.paired) {
        let head = format!("{} ({n})", s(name));
        out.push_str(&format!(" {:>14}", crate::text::truncate(&head, 14)));
    }
    out.push('\n');
    for r in &j.rows {
        out.push_str(&format!(
            "{:<34} {:>8}",
            crate::text::truncate(&s(&r.name), 34),
            signed(r.stored)
        ));
        for u in &r.under {
            out.push_str(&format!(" {:>14}", signed(*u)));
        }
        out.push_str(&format!("  {}\n", r.words()));
    }
    out
}

fn markdown(c: &Comparison, flips: usize, about: &[String; 2]) -> String {
    // Names as code spans (`eval::gate::code_span`): markup in a run's, a model's or a task's
    // name reads as text. Prose outside them: HTML in it must read as text too.
    let cell = |t: &str| crate::eval::gate::code_span(t);
    let text = |t: &str| {
        crate::text::one_line(t)
            .replace('|', "\\|")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let mut out = format!(
        "**A** = {} ({}), **B** = {} ({}): {} items scored on both. B - A in rate points; 95% paired \
         bootstrap ({} resamples, seed {}); McNemar exact p.\n\n",
        cell(&c.a),
        text(&about[0]),
        cell(&c.b),
        text(&about[1]),
        c.paired,
        c.resamples,
        c.seed
    );
    let repeats = c.rows.iter().any(|r| !r.split_text().is_empty());
    if repeats {
        out.push_str("| | items | A | B | B-A | 95% interval | A+ | B+ | p | split A/B |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    } else {
        out.push_str("| | items | A | B | B-A | 95% interval | A+ | B+ | p |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    }
    for r in &c.rows {
        let bold = if r.significant() { "**" } else { "" };
        let split = if repeats {
            format!(" {} |", r.split_text())
        } else {
            String::new()
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {bold}{}{bold} | {} | {} | {} | {} |{split}\n",
            cell(&r.name),
            r.items,
            num(r.rate_a),
            num(r.rate_b),
            signed(r.diff),
            r.ci_text(),
            r.mcnemar.a_only,
            r.mcnemar.b_only,
            r.p_text()
        ));
    }
    out.push_str("\n| flipped | item | task | A | B |\n|---|---|---|---:|---:|\n");
    for f in c.flips.iter().take(flips) {
        out.push_str(&format!(
            "| {} | {} | {} | {:.2} | {:.2} |\n",
            if f.fixed { "fixed" } else { "broken" },
            cell(&f.item_id),
            cell(&f.task_id),
            f.score_a,
            f.score_b
        ));
    }
    if let Some(j) = &c.judges {
        out.push_str("\n| under each judge alone | stored |");
        for (name, n) in j.judges.iter().zip(&j.paired) {
            out.push_str(&format!(" {} ({n} items) |", cell(name)));
        }
        out.push_str(" |\n|---|---:|");
        out.push_str(&"---:|".repeat(j.judges.len()));
        out.push_str("---|\n");
        for r in &j.rows {
            out.push_str(&format!("| {} | {} |", cell(&r.name), signed(r.stored)));
            for u in &r.under {
                out.push_str(&format!(" {} |", signed(*u)));
            }
            out.push_str(&format!(" {} |\n", r.words()));
        }
    }
    out
}

fn csv(c: &Comparison) -> String {
    let q = crate::report::render::csv_cell;
    let mut out = String::from(
        "level,name,items,rate_a,rate_b,diff,ci_low,ci_high,a_only,b_only,mcnemar_p,split_a,split_b\n",
    );
    for r in &c.rows {
        let level = match r.level {
            Level::HScore => "h-score",
            Level::Dimension => "dimension",
            Level::Task => "task",
        };
        let opt = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.4}"));
        out.push_str(&format!(
            "{level},{},{},{},{},{},{},{},{},{},{:.6},{},{}\n",
            q(&r.name),
            r.items,
            opt(r.rate_a),
            opt(r.rate_b),
            opt(r.diff),
            opt(r.ci.map(|c| c.0)),
            opt(r.ci.map(|c| c.1)),
            r.mcnemar.a_only,
            r.mcnemar.b_only,
            r.mcnemar.p,
            opt(r.split_a),
            opt(r.split_b)
        ));
    }
    out
}
